#include "serve/record_classifier.hpp"

#include <algorithm>

#include "records/record_check.hpp"
#include "records/vocabulary.hpp"

namespace tp::serve {

KindTable::KindTable() : names_(record_kind_names.begin(), record_kind_names.begin() + callisto_kind_count) {
  names_.emplace_back(frames_kind_name);
  names_.insert(names_.end(), record_kind_names.begin() + callisto_kind_count, record_kind_names.end());
}

std::uint8_t KindTable::intern(std::string_view name) {
  const std::scoped_lock lock(mutex_);
  const auto found = std::find(names_.begin(), names_.end(), name);
  if (found != names_.end()) return static_cast<std::uint8_t>(found - names_.begin());
  if (names_.size() >= other) return other;
  names_.emplace_back(name);
  generation_.fetch_add(1, std::memory_order_release);
  return static_cast<std::uint8_t>(names_.size() - 1);
}

std::uint64_t KindTable::mask_for(const std::vector<std::string>& names, std::vector<std::string>& unknown) const {
  unknown.clear();
  if (std::find(names.begin(), names.end(), "*") != names.end()) return ~0ULL;
  const std::scoped_lock lock(mutex_);
  std::uint64_t mask = 0;
  for (const std::string& name : names) {
    const auto found = std::find(names_.begin(), names_.end(), name);
    if (found == names_.end()) {
      unknown.push_back(name);
    } else {
      mask |= 1ULL << static_cast<unsigned>(found - names_.begin());
    }
  }
  return mask;
}

namespace {

void add_port(RecordRoute& route, std::uint64_t port) {
  if (port < 32) {
    route.port_bits |= 1U << port;
  } else {
    route.high_port = true;
  }
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

std::optional<RecordRoute> RecordClassifier::classify(simdjson::dom::object root, std::string& problem) {
  const std::optional<CheckedLine> line = check_record_line(root, problem);
  if (!line) return std::nullopt;
  return route(*line);
}

RecordRoute RecordClassifier::route(const CheckedLine& line) {
  RecordRoute route;
  if (line.frames) {
    route.itm = true;
    route.kind = KindTable::itm;
    route.port_bits = line.frame_port_bits;
    route.high_port = line.frame_high_port;
  } else {
    route.kind = kind_bit(line.kind);
    add_port(route, line.port);
  }
  route.cycles_clock = line.clock == clock_name(RecordClock::cycles);
  return route;
}

}  // namespace tp::serve
