// Checking a record line without building its DOM. The lines of a stream differ from one
// another mostly in their values: {"timestamp":N,"port":N,"event":{"kind":K,"data":
// {"message":"..."}},"source":"S","clock":"C"}. A line that passed the full check
// (simdjson's DOM and check_record_line) teaches its shape: its bytes, with each value
// whose rule allows many values (a timestamp, a port, a u32 id, a message, a flag) left as a
// slot of the rule's type. A later line made of the same bytes around values that each pass
// their slot's rule is valid JSON and a good record of that kind, with that clock and those
// fields, so check_record_line would return what match() returns (the record_shapes fuzzer
// compares the two). Anything else (a new shape, an escape it does not vouch for, odd
// spacing) does not match and goes the full way. The shapes form a trie: the lines of one
// stream share their first bytes, and a kind's literal parts tell the shapes apart early.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "records/record_check.hpp"

namespace tp {

class RecordShapes {
 public:
  // Enough for every kind of a stream with a few optional fields; later shapes are not learnt.
  static constexpr std::size_t max_shapes = 64;
  static constexpr std::size_t max_learnt_line = 4096;

  // `line` passed check_record_line: learn its shape if it is new and a record's (frames
  // lines, unknown kinds and escaped names are not learnt). Returns whether it is known now.
  bool learn(std::string_view line);
  // What check_record_line says of the line when it matches a learnt shape, else nothing.
  // The views point into the line and into this object.
  [[nodiscard]] const CheckedLine* match(std::string_view line);
  [[nodiscard]] std::size_t shapes() const noexcept { return kinds_.size(); }
  [[nodiscard]] bool full() const noexcept { return kinds_.size() >= max_shapes; }

  // A value's place in a shape: what it may be, and what the check reports of it.
  enum class Slot : std::uint8_t {
    end,
    u64,
    string,
    plain_string,
    fleet_name,
    boolean,
    number,
    nonnegative_number,
    byte_array
  };
  enum class Role : std::uint8_t { none, timestamp, port, source, fleet };
  struct Segment {
    std::string literal;  // bytes that come before the value
    Slot slot = Slot::end;
    Role role = Role::none;
    std::uint64_t max = ~std::uint64_t{0};  // Slot::u64
    bool operator==(const Segment&) const = default;
  };

 private:
  struct Node {
    Segment segment;
    std::vector<std::uint32_t> children;
    std::uint32_t shape = 0;  // Slot::end: its kind and clock (kinds_)
  };
  struct ShapeNames {
    std::string kind;
    std::string clock;  // empty when the line has none
  };

  bool match_from(const std::vector<std::uint32_t>& candidates, std::string_view line, std::size_t pos);
  void insert(std::vector<Segment>& segments, ShapeNames names);

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> roots_;
  std::deque<ShapeNames> kinds_;  // a deque: the views a match hands out stay put
  CheckedLine result_;
};

}  // namespace tp
