#include "serve/record_classifier.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tp::serve {

KindTable::KindTable() : names_(builtin.begin(), builtin.end()) {}

std::uint8_t KindTable::intern(std::string_view name) {
  const std::scoped_lock lock(mutex_);
  const auto found = std::find(names_.begin(), names_.end(), name);
  if (found != names_.end()) return static_cast<std::uint8_t>(found - names_.begin());
  if (names_.size() >= other) return other;
  names_.emplace_back(name);
  return static_cast<std::uint8_t>(names_.size() - 1);
}

std::uint64_t KindTable::mask_for(const std::vector<std::string>& names) {
  std::uint64_t mask = 0;
  for (const std::string& name : names) {
    if (name == "*") return ~0ULL;
    mask |= 1ULL << intern(name);
  }
  return mask;
}

namespace {

using simdjson::ondemand::document;

// After some errors simdjson abandons the document, and looking again would use its
// released parser: every lookup goes through here.
simdjson::simdjson_result<simdjson::ondemand::value> lookup(document& doc, std::string_view pointer) {
  if (!doc.is_alive()) return simdjson::TAPE_ERROR;
  return doc.at_pointer(pointer);
}

bool is_u64(document& doc, std::string_view pointer, std::uint64_t limit = ~0ULL) {
  std::uint64_t value = 0;
  return lookup(doc, pointer).get_uint64().get(value) == simdjson::SUCCESS && value <= limit;
}

bool is_string(document& doc, std::string_view pointer) {
  std::string_view text;
  return lookup(doc, pointer).get_string().get(text) == simdjson::SUCCESS;
}

// Absent, null or a string (the schema's optional names).
bool is_optional_string(document& doc, std::string_view pointer) {
  auto value = lookup(doc, pointer);
  if (value.error() == simdjson::NO_SUCH_FIELD) return true;
  bool null = false;
  if (value.is_null().get(null) == simdjson::SUCCESS && null) return true;
  return is_string(doc, pointer);
}

bool is_byte_array(simdjson::ondemand::value value) {
  simdjson::ondemand::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) return false;
  for (auto item : array) {
    std::uint64_t byte = 0;
    if (item.get_uint64().get(byte) != simdjson::SUCCESS || byte > 255) return false;
  }
  return true;
}

constexpr std::uint32_t u32_max = 0xFFFFFFFFU;

// The fields Callisto's TraceEvent schema requires for each core kind (bits 0-8).
bool core_fields_valid(document& doc, std::uint8_t kind) {
  switch (kind) {
    case 0:
      return is_string(doc, "/event/data/message");
    case 1:
      return is_u64(doc, "/event/data/id", u32_max) && is_optional_string(doc, "/event/data/name");
    case 2:
      return is_u64(doc, "/event/data/from_task", u32_max) && is_u64(doc, "/event/data/to_task", u32_max);
    case 3:
      return is_u64(doc, "/event/data/isr_id", u32_max) && is_optional_string(doc, "/event/data/name");
    case 4:
      return is_u64(doc, "/event/data/isr_id", u32_max);
    case 5:
    case 6:
      return true;
    case 7:
      return is_u64(doc, "/event/data/counter_id", u32_max) && is_u64(doc, "/event/data/value");
    case 8: {
      auto data = lookup(doc, "/event/data/data");
      return data.error() == simdjson::SUCCESS && is_byte_array(data.value_unsafe());
    }
    default:
      return true;
  }
}

void add_port(RecordRoute& route, std::uint64_t port) {
  if (port < 32) {
    route.port_bits |= 1U << port;
  } else {
    route.high_port = true;
  }
}

std::optional<RecordRoute> classify_frames(document& doc, std::string& problem) {
  RecordRoute route;
  route.itm = true;
  route.kind = KindTable::itm;
  simdjson::ondemand::array frames;
  if (lookup(doc, "/frames").get_array().get(frames) != simdjson::SUCCESS) {
    problem = "\"frames\" is not an array";
    return std::nullopt;
  }
  for (auto item : frames) {
    simdjson::ondemand::object frame;
    std::uint64_t port = 0;
    if (item.get_object().get(frame) != simdjson::SUCCESS ||
        frame.find_field_unordered("port").get(port) != simdjson::SUCCESS || port > 255) {
      problem = "a frame without a port 0-255";
      return std::nullopt;
    }
    simdjson::ondemand::value data;
    if (frame.find_field_unordered("data").get(data) != simdjson::SUCCESS || !is_byte_array(data)) {
      problem = "a frame without a data byte array";
      return std::nullopt;
    }
    add_port(route, port);
  }
  if (!doc.is_alive()) {
    problem = "malformed JSON";
    return std::nullopt;
  }
  return route;
}

}  // namespace

std::uint8_t RecordClassifier::kind_bit(std::string_view name) {
  for (const auto& [known, bit] : cache_) {
    if (known == name) return bit;
  }
  const std::uint8_t bit = kinds_.intern(name);
  if (cache_.size() < KindTable::capacity) cache_.emplace_back(name, bit);
  return bit;
}

std::optional<RecordRoute> RecordClassifier::classify(simdjson::ondemand::document& doc, std::string& problem) {
  if (!is_u64(doc, "/timestamp")) {
    problem = "no \"timestamp\" (an unsigned integer)";
    return std::nullopt;
  }
  std::string_view kind;
  const auto kind_error = lookup(doc, "/event/kind").get_string().get(kind);
  if (kind_error != simdjson::SUCCESS) {
    if (lookup(doc, "/frames").error() == simdjson::SUCCESS) return classify_frames(doc, problem);
    problem = "no \"event\".\"kind\" string (and not a frames line)";
    return std::nullopt;
  }
  std::uint64_t port = 0;
  if (lookup(doc, "/port").get_uint64().get(port) != simdjson::SUCCESS || port > 255) {
    problem = "no \"port\" from 0 to 255";
    return std::nullopt;
  }
  RecordRoute route;
  route.kind = kind_bit(kind);
  if (route.kind == KindTable::itm) {
    problem = "kind \"Itm\" is reserved for frames lines";
    return std::nullopt;
  }
  add_port(route, port);
  if (route.kind < KindTable::itm && !core_fields_valid(doc, route.kind)) {
    problem = fmt::format("a {} event without the fields and types of Callisto's schema", kind);
    return std::nullopt;
  }
  std::string_view clock;
  route.cycles_clock = lookup(doc, "/clock").get_string().get(clock) == simdjson::SUCCESS && clock == "cycles";
  if (!doc.is_alive()) {
    problem = "malformed JSON";
    return std::nullopt;
  }
  return route;
}

}  // namespace tp::serve
