// What trace-serve needs to know about each input line to route it: its kind (interned to
// a small number so a client's kind filter is one bit test) and its ports. Whether a line
// is good is the record's one validator's call (records/record_check: a strict Callisto
// client can take every record it passes).
#pragma once

#include <simdjson.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/record_check.hpp"
#include "records/vocabulary.hpp"

namespace tp::serve {

// Kind names -> bit numbers, shared by the input thread and the server thread. It starts
// with every kind of record.schema.json; only the input adds to it (kinds of other
// producers, as they arrive). Clients only look names up: a client must never change what
// other clients' filters mean.
class KindTable {
 public:
  static constexpr std::size_t capacity = 64;
  static constexpr std::uint8_t other = capacity - 1;  // every kind past the table's end
  // The Callisto TraceEvent kinds take the first bits, in record_kind_names' order, then
  // Itm, then the rest of the schema's kinds.
  static constexpr std::uint8_t itm = callisto_kind_count;  // raw frame lines (Itm messages)
  // What a client gets before it sends SetFilter.event_types: the Callisto TraceEvent kinds.
  // Itm messages go only to clients that ask for them ("Itm" or "*"): the Callisto client
  // ignores them, and they would double its traffic.
  static constexpr std::uint64_t callisto_kinds = (1ULL << itm) - 1;

  KindTable();
  // The input's side: the bit of a kind, added when new (`other` once the table is full).
  std::uint8_t intern(std::string_view name);
  // The clients' side: bits for a SetFilter.event_types list ("*" means every kind). Names
  // not in the table are returned in `unknown`, and nothing is added.
  std::uint64_t mask_for(const std::vector<std::string>& names, std::vector<std::string>& unknown) const;
  // Grows by one each time the input adds a kind: a client holding unknown names looks
  // them up again when it changes.
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> names_;
  std::atomic<std::uint64_t> generation_{0};
};

struct RecordRoute {
  std::uint8_t kind = 0;
  std::uint32_t port_bits = 0;  // ports 0-31
  bool high_port = false;       // a port above 31 (ITM pages): passes only an all-ports mask
  bool itm = false;             // a raw frames line
  bool cycles_clock = false;    // clock cycles: DWT timestamps are in use
};

class RecordClassifier {
 public:
  explicit RecordClassifier(KindTable& kinds) : kinds_(kinds) {}
  // The route of a record or frames line, or nullopt with the reason in `problem`.
  std::optional<RecordRoute> classify(simdjson::dom::object root, std::string& problem);
  // The route of a line check_record_line (or RecordShapes) found good.
  RecordRoute route(const CheckedLine& line);

 private:
  std::uint8_t kind_bit(std::string_view name);
  KindTable& kinds_;
  std::vector<std::pair<std::string, std::uint8_t>> cache_;  // this thread's copy of the table
};

}  // namespace tp::serve
