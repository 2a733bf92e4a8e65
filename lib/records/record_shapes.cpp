#include "records/record_shapes.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "core/number.hpp"
#include "records/fleet_fields.hpp"

namespace tp {
namespace {

using Slot = RecordShapes::Slot;
using Role = RecordShapes::Role;
using Segment = RecordShapes::Segment;

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

// An unsigned integer as JSON writes it (RFC 8259 section 6: no leading zero), at `at`;
// the index after it, or nothing.
std::optional<std::size_t> take_u64(std::string_view line, std::size_t at, std::uint64_t max, std::uint64_t& value) {
  if (at >= line.size() || !is_digit(line[at])) return std::nullopt;
  value = static_cast<std::uint64_t>(line[at] - '0');
  std::size_t p = at + 1;
  if (value == 0) return p < line.size() && is_digit(line[p]) ? std::nullopt : std::optional(p);
  for (; p < line.size() && is_digit(line[p]); ++p) {
    if (__builtin_mul_overflow(value, 10U, &value) ||
        __builtin_add_overflow(value, static_cast<unsigned>(line[p] - '0'), &value)) {
      return std::nullopt;
    }
  }
  if (value > max) return std::nullopt;
  return p;
}

// Up to `most` digits from `p`; how many there were.
std::size_t digits(std::string_view line, std::size_t p, std::size_t most) noexcept {
  std::size_t n = 0;
  while (p + n < line.size() && is_digit(line[p + n])) {
    if (++n > most) return most + 1;
  }
  return n;
}

// A JSON number (RFC 8259 section 6) small enough that every parser reads it as a finite
// double: at most 18 digits before and after the point and a 2-digit exponent (a longer
// one is valid JSON too, but is left to the full check).
std::optional<std::size_t> take_number(std::string_view line, std::size_t at, bool negative_allowed) {
  constexpr std::size_t most = 18;
  std::size_t p = at;
  if (p < line.size() && line[p] == '-') {
    if (!negative_allowed) return std::nullopt;
    ++p;
  }
  const std::size_t whole = digits(line, p, most);
  if (whole == 0 || whole > most || (whole > 1 && line[p] == '0')) return std::nullopt;
  p += whole;
  if (p < line.size() && line[p] == '.') {
    const std::size_t fraction = digits(line, p + 1, most);
    if (fraction == 0 || fraction > most) return std::nullopt;
    p += 1 + fraction;
  }
  if (p < line.size() && (line[p] == 'e' || line[p] == 'E')) {
    ++p;
    if (p < line.size() && (line[p] == '+' || line[p] == '-')) ++p;
    const std::size_t exponent = digits(line, p, 2);
    if (exponent == 0 || exponent > 2) return std::nullopt;
    p += exponent;
  }
  return p;
}

// A JSON string at `at` (RFC 8259 section 7) whose escapes are the simple ones or a \u
// outside the surrogates (a surrogate pair is left to the full check), without control
// characters, in valid UTF-8. `plain`: no escapes at all (its bytes are its value).
std::optional<std::size_t> take_string(std::string_view line, std::size_t at, bool plain) {
  if (at >= line.size() || line[at] != '"') return std::nullopt;
  bool ascii = true;
  for (std::size_t p = at + 1; p < line.size(); ++p) {
    const auto c = static_cast<unsigned char>(line[p]);
    if (c == '"') {
      if (!ascii && !simdjson::validate_utf8(line.data() + at + 1, p - at - 1)) return std::nullopt;
      return p + 1;
    }
    if (c < 0x20U) return std::nullopt;
    if (c >= 0x80U) ascii = false;
    if (c != '\\') continue;
    if (plain || p + 1 >= line.size()) return std::nullopt;
    const char escaped = line[++p];
    if (escaped == 'u') {
      if (p + 4 >= line.size()) return std::nullopt;
      unsigned code = 0;
      for (std::size_t i = 1; i <= 4; ++i) {
        const int digit = hex_digit_value(line[p + i]);
        if (digit < 0) return std::nullopt;
        code = code * 16U + static_cast<unsigned>(digit);
      }
      if (code >= 0xD800U && code <= 0xDFFFU) return std::nullopt;
      p += 4;
    } else if (std::strchr("\"\\/bfnrt", escaped) == nullptr || escaped == '\0') {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::size_t> take_word(std::string_view line, std::size_t at, std::string_view word) {
  if (line.substr(at, word.size()) != word) return std::nullopt;
  return at + word.size();
}

// [] or [n,n,...] with every n a byte 0-255, without spaces.
std::optional<std::size_t> take_byte_array(std::string_view line, std::size_t at) {
  if (at >= line.size() || line[at] != '[') return std::nullopt;
  std::size_t p = at + 1;
  if (p < line.size() && line[p] == ']') return p + 1;
  for (;;) {
    std::uint64_t byte = 0;
    const auto next = take_u64(line, p, 255, byte);
    if (!next || *next >= line.size()) return std::nullopt;
    p = *next;
    if (line[p] == ']') return p + 1;
    if (line[p] != ',') return std::nullopt;
    ++p;
  }
}

// "NAME" at `at`: 1-64 fleet name characters, nothing to unescape. Out of line: the other
// slots' switch stays small for the lines that have no fleet fields.
[[gnu::noinline]] std::optional<std::size_t> take_fleet_name(std::string_view line, std::size_t at) {
  if (at >= line.size() || line[at] != '"') return std::nullopt;
  std::size_t p = at + 1;
  const std::size_t most = std::min(line.size(), p + fleet_name_max + 1);
  while (p < most && is_fleet_name_char(line[p])) ++p;
  if (p == at + 1 || p - at - 1 > fleet_name_max || p >= line.size() || line[p] != '"') return std::nullopt;
  return p + 1;
}

// The value at `at` as the slot allows it: the index after it; `value` for Slot::u64.
std::optional<std::size_t> take_slot(const Segment& segment, std::string_view line, std::size_t at,
                                     std::uint64_t& value) {
  switch (segment.slot) {
    case Slot::u64:
      return take_u64(line, at, segment.max, value);
    case Slot::string:
      return take_string(line, at, false);
    case Slot::plain_string:
      return take_string(line, at, true);
    case Slot::fleet_name:
      return take_fleet_name(line, at);
    case Slot::boolean:
      if (at < line.size() && line[at] == 't') return take_word(line, at, "true");
      return take_word(line, at, "false");
    case Slot::number:
      return take_number(line, at, true);
    case Slot::nonnegative_number:
      return take_number(line, at, false);
    case Slot::byte_array:
      return take_byte_array(line, at);
    case Slot::end:
      break;
  }
  return std::nullopt;
}

const KindRule* kind_rule(std::string_view kind) noexcept {
  for (const KindRule& rule : record_kind_rules()) {
    if (same_text(rule.kind, kind)) return &rule;
  }
  return nullptr;
}

// Cuts a line that passed the full check into literal bytes and slots. Every value it meets
// is valid JSON already, so it only has to find where each one ends.
class ShapeBuilder {
 public:
  explicit ShapeBuilder(std::string_view line) : line_(line) {}

  // The segments, ending with Slot::end, or nothing when the line's shape is not learnt.
  std::optional<std::vector<Segment>> build() {
    if (!top_level() || pos_ != line_.size() || kind_.empty()) return std::nullopt;
    segments_.push_back(Segment{std::move(literal_), Slot::end, Role::none});
    return std::move(segments_);
  }
  [[nodiscard]] std::string_view kind() const noexcept { return kind_; }
  [[nodiscard]] std::string_view clock() const noexcept { return clock_; }

 private:
  void copy_to(std::size_t end) {
    literal_.append(line_.substr(pos_, end - pos_));
    pos_ = end;
  }
  void copy_blank() {
    std::size_t p = pos_;
    while (p < line_.size() && (line_[p] == ' ' || line_[p] == '\t' || line_[p] == '\r' || line_[p] == '\n')) ++p;
    copy_to(p);
  }
  bool copy_char(char c) {
    if (pos_ >= line_.size() || line_[pos_] != c) return false;
    copy_to(pos_ + 1);
    return true;
  }
  [[nodiscard]] char next() const noexcept { return pos_ < line_.size() ? line_[pos_] : '\0'; }

  // Where the JSON value at p ends (the line is valid: strings and brackets balance).
  [[nodiscard]] std::size_t value_end(std::size_t p) const {
    int depth = 0;
    do {
      const char c = line_[p];
      if (c == '"') {
        ++p;
        while (line_[p] != '"') p += line_[p] == '\\' ? 2U : 1U;
        ++p;
      } else if (c == '{' || c == '[') {
        ++depth;
        ++p;
      } else if (c == '}' || c == ']') {
        --depth;
        ++p;
      } else if (depth == 0) {
        while (p < line_.size() && std::strchr(",}] \t\r\n", line_[p]) == nullptr) ++p;
      } else {
        ++p;
      }
    } while (depth > 0 && p < line_.size());
    return p;
  }

  void slot(Slot type, Role role = Role::none, std::uint64_t max = ~std::uint64_t{0}) {
    segments_.push_back(Segment{std::move(literal_), type, role, max});
    literal_.clear();
    pos_ = value_end(pos_);
  }
  void literal_value() { copy_to(value_end(pos_)); }

  // A string value's bytes when it has no escapes (a name the line is known by).
  std::optional<std::string_view> plain_text() const {
    if (next() != '"') return std::nullopt;
    const std::size_t end = value_end(pos_);
    const std::string_view text = line_.substr(pos_ + 1, end - pos_ - 2);
    if (text.find('\\') != std::string_view::npos) return std::nullopt;
    return text;
  }

  // A value no rule speaks of: any value of its type.
  void any_value() {
    const char c = next();
    if (c == '"') return slot(Slot::string);
    if (c == 't' || c == 'f') return slot(Slot::boolean);
    if (c == '-' || is_digit(c)) return slot(Slot::number);
    literal_value();  // null, an array or an object: as it is
  }

  // Calls member(key) with pos_ at each member's value, until it returns false.
  template <class Member>
  bool object(Member&& member) {
    copy_blank();
    if (!copy_char('{')) return false;
    copy_blank();
    if (copy_char('}')) return true;
    for (;;) {
      const auto key = plain_text();
      if (!key) return false;  // an escaped name may be a field's name written another way
      copy_to(value_end(pos_));
      copy_blank();
      if (!copy_char(':')) return false;
      copy_blank();
      if (!member(*key)) return false;
      copy_blank();
      if (copy_char('}')) return true;
      if (!copy_char(',')) return false;
      copy_blank();
    }
  }

  bool top_level() {
    const bool whole = object([&](std::string_view key) {
      if (key == "timestamp") return slot(Slot::u64, Role::timestamp), true;
      if (key == "port") return slot(Slot::u64, Role::port, 255), true;
      if (key == "source") return next() == '"' && (slot(Slot::plain_string, Role::source), true);
      if (key == "clock") {
        const auto clock = plain_text();
        if (!clock) return false;
        clock_ = *clock;
        return literal_value(), true;
      }
      if (key == "time_exact") return literal_value(), true;
      if (key == "board" || key == "run") return slot(Slot::fleet_name, Role::fleet), true;
      if (key == "seq" || key == "host_us") return slot(Slot::u64, Role::fleet), true;
      if (key == "event") return event();
      if (key == "frames") return false;
      return any_value(), true;
    });
    copy_blank();
    return whole;
  }

  bool event() {
    return object([&](std::string_view key) {
      if (key == "kind") {
        const auto kind = plain_text();
        if (!kind || !kind_.empty()) return false;
        kind_ = *kind;
        rule_ = kind_rule(kind_);
        return rule_ != nullptr && (literal_value(), true);
      }
      if (key == "data") return rule_ != nullptr && data();
      return any_value(), true;
    });
  }

  bool data() {
    return object([&](std::string_view key) {
      const auto field = std::find_if(rule_->fields.begin(), rule_->fields.end(),
                                      [&](const FieldRule& rule) { return rule.name == key; });
      if (field == rule_->fields.end()) return any_value(), true;
      if (next() == 'n') return literal_value(), true;  // null, allowed (the line passed)
      switch (field->type) {
        case FieldType::u64:
          return slot(Slot::u64, Role::none, field->max), true;
        case FieldType::string:
          return slot(Slot::string), true;
        case FieldType::boolean:
          return slot(Slot::boolean), true;
        case FieldType::number:
          return slot(Slot::nonnegative_number), true;
        case FieldType::real:
          return slot(Slot::number), true;
        case FieldType::bytes:
          return slot(Slot::byte_array), true;
        case FieldType::u64_array:
          return false;  // a snapshot's series: few lines, each checked the full way
        case FieldType::string_enum:
        case FieldType::integer_enum:
          return literal_value(), true;
      }
      return false;
    });
  }

  std::string_view line_;
  std::size_t pos_ = 0;
  std::string literal_;
  std::vector<Segment> segments_;
  std::string_view kind_;
  std::string_view clock_;
  const KindRule* rule_ = nullptr;
};

// Whether `line` is made of the segments (the line a shape was cut from must be: a value
// written in a form its slot does not take, -0 for a number, is left to the full check).
bool fits(const std::vector<Segment>& segments, std::string_view line) {
  std::size_t pos = 0;
  for (const Segment& segment : segments) {
    if (line.substr(pos, segment.literal.size()) != segment.literal) return false;
    pos += segment.literal.size();
    if (segment.slot == Slot::end) return pos == line.size();
    std::uint64_t value = 0;
    const auto after = take_slot(segment, line, pos, value);
    if (!after) return false;
    pos = *after;
  }
  return false;
}

}  // namespace

bool RecordShapes::learn(std::string_view line) {
  if (match(line) != nullptr) return true;
  if (full() || line.size() > max_learnt_line) return false;
  ShapeBuilder builder(line);
  auto segments = builder.build();
  if (!segments || !fits(*segments, line)) return false;
  insert(*segments, ShapeNames{std::string(builder.kind()), std::string(builder.clock())});
  return true;
}

void RecordShapes::insert(std::vector<Segment>& segments, ShapeNames names) {
  // The line matched no shape, so it leaves the trie somewhere: its end node is new.
  const auto shape = static_cast<std::uint32_t>(kinds_.size());
  kinds_.push_back(std::move(names));
  std::vector<std::uint32_t>* level = &roots_;
  for (Segment& segment : segments) {
    const auto known = std::find_if(level->begin(), level->end(),
                                    [&](std::uint32_t index) { return nodes_[index].segment == segment; });
    std::uint32_t index = 0;
    if (known != level->end()) {
      index = *known;
    } else {
      index = static_cast<std::uint32_t>(nodes_.size());
      level->push_back(index);
      nodes_.push_back(Node{std::move(segment), {}, shape});
    }
    level = &nodes_[index].children;  // after the push_back: nodes_ may have moved
  }
}

const CheckedLine* RecordShapes::match(std::string_view line) {
  result_ = CheckedLine{};
  return match_from(roots_, line, 0) ? &result_ : nullptr;
}

bool RecordShapes::match_from(const std::vector<std::uint32_t>& candidates, std::string_view line, std::size_t pos) {
  for (const std::uint32_t index : candidates) {
    const Node& node = nodes_[index];
    const std::string& literal = node.segment.literal;
    if (line.size() - pos < literal.size() || std::memcmp(line.data() + pos, literal.data(), literal.size()) != 0) {
      continue;
    }
    const std::size_t at = pos + literal.size();
    if (node.segment.slot == Slot::end) {
      if (at != line.size()) continue;
      const ShapeNames& names = kinds_[node.shape];
      result_.kind = names.kind;
      result_.clock = names.clock;
      return true;
    }
    std::uint64_t value = 0;
    const auto after = take_slot(node.segment, line, at, value);
    if (!after || !match_from(node.children, line, *after)) continue;
    switch (node.segment.role) {
      case Role::timestamp:
        result_.timestamp = value;
        break;
      case Role::port:
        result_.port = static_cast<std::uint32_t>(value);
        break;
      case Role::source:
        result_.source = line.substr(at + 1, *after - at - 2);
        break;
      case Role::fleet:
        result_.has_fleet_fields = true;
        break;
      case Role::none:
        break;
    }
    return true;
  }
  return false;
}

}  // namespace tp
