#include "ekotrace/collector.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "ekotrace/report_finish.hpp"

namespace tp::ekotrace {
namespace {

constexpr std::uint64_t log_item_size = 4;
constexpr std::uint64_t clock_size = 8;  // LogicalClock { id u32, count u32 }

}  // namespace

Collector::Collector(target::TargetMemory& memory, std::vector<TracerSpec> tracers, CollectorOptions options,
                     std::size_t max_read)
    : memory_(memory), options_(options), snapshot_(memory, max_read, options_.merge_gap) {
  tracers_.reserve(tracers.size());
  for (auto& spec : tracers) tracers_.push_back({std::move(spec), {}, {}, {}, 0, 0, {}, {}});
}

std::uint64_t Collector::word(std::uint64_t address) const noexcept {
  return snapshot_.word(address, options_.layout.word_size, options_.endian);
}

void Collector::note(TracerState& tracer, std::string problem) {
  if (problem != tracer.last_problem && !problem.empty()) {
    warnings_.push_back(fmt::format("tracer {}: {}", tracer.spec.label, problem));
  }
  tracer.last_problem = std::move(problem);
}

std::vector<std::string> Collector::take_warnings() {
  return std::exchange(warnings_, {});
}

// References, then handles, then histories: cached pointers are read in the same pass as
// the references, so a steady state costs one pass; a pointer that changed costs one more.
void Collector::resolve_pointers() {
  const unsigned w = options_.layout.word_size;
  const std::uint64_t history_size = options_.layout.history_size();
  std::vector<Region> regions;
  for (const auto& t : tracers_) {
    regions.push_back({t.spec.reference, w});
    if (t.handle) regions.push_back({*t.handle + options_.layout.handle_history, w});
    if (t.history) regions.push_back({*t.history, history_size});
  }
  snapshot_.read(regions);
  regions.clear();
  for (auto& t : tracers_) {
    if (!snapshot_.has(t.spec.reference, w)) continue;
    const std::uint64_t handle = word(t.spec.reference);
    if (t.handle != handle) t.history.reset();
    t.handle = handle;
    if (handle != 0) regions.push_back({handle + options_.layout.handle_history, w});
  }
  snapshot_.read(regions);
  regions.clear();
  for (auto& t : tracers_) {
    if (!t.handle || *t.handle == 0 || !snapshot_.has(*t.handle + options_.layout.handle_history, w)) continue;
    const std::uint64_t history = word(*t.handle + options_.layout.handle_history);
    t.history = history;
    if (history != 0) regions.push_back({history, history_size});
  }
  snapshot_.read(regions);
}

std::optional<Collector::History> Collector::read_history(TracerState& t) {
  const Layout& layout = options_.layout;
  const unsigned w = layout.word_size;
  if (!snapshot_.has(t.spec.reference, w)) {
    ++t.counters.unreadable;
    note(t, fmt::format("cannot read the tracer reference at 0x{:x}", t.spec.reference));
    return std::nullopt;
  }
  if (t.handle.value_or(0) == 0 || (t.history && *t.history == 0)) {
    ++t.counters.null_reference;
    note(t, t.handle.value_or(0) == 0 ? "the tracer pointer is NULL (not initialised yet?)"
                                      : "the tracer's history pointer is NULL");
    t.handle.reset();
    t.history.reset();
    return std::nullopt;
  }
  if (!t.history || !snapshot_.has(*t.history, layout.history_size())) {
    ++t.counters.unreadable;
    note(t, fmt::format("cannot read the tracer at 0x{:x}", t.history ? *t.history : *t.handle));
    t.handle.reset();
    t.history.reset();
    return std::nullopt;
  }
  const std::uint64_t at = *t.history;
  History h;
  h.tracer_id = static_cast<std::uint32_t>(snapshot_.word(at + layout.tracer_id, 4, options_.endian));
  h.clocks = word(at + layout.clocks);
  h.clocks_capacity = word(at + layout.clocks + w);
  h.clocks_length = word(at + layout.clocks + 2ULL * w);
  h.log = word(at + layout.compact_log);
  h.log_capacity = word(at + layout.compact_log + w);
  h.log_length = word(at + layout.compact_log + 2ULL * w);
  h.in_use = layout.in_use && snapshot_.bytes(at + *layout.in_use, 1)[0] != 0;
  const bool sane = h.log_length <= h.log_capacity && h.log_capacity <= layout.max_log_items &&
                    h.clocks_length <= h.clocks_capacity &&
                    h.clocks_capacity <= plausible_max_clocks(layout, h.log_capacity) &&
                    (h.log != 0 || h.log_length == 0) && (h.clocks != 0 || h.clocks_length == 0);
  if (!sane) {
    ++t.counters.invalid;
    note(t, fmt::format("the history at 0x{:x} makes no sense (log {} of {} items at 0x{:x}, clocks {} of {}): "
                        "wrong layout or word size?",
                        at, h.log_length, h.log_capacity, h.log, h.clocks_length, h.clocks_capacity));
    return std::nullopt;
  }
  return h;
}

std::vector<Row> Collector::collect() {
  memory_.halt();
  snapshot_.clear();
  pending_.clear();
  resolve_pointers();

  std::vector<Region> regions;
  for (std::size_t i = 0; i < tracers_.size(); ++i) {
    auto& t = tracers_[i];
    const auto history = read_history(t);
    if (!history) continue;
    if (history->in_use) {
      ++t.counters.skipped_in_use;
      continue;  // the firmware is inside the tracer: next poll
    }
    note(t, {});
    // --no-clear: only what was added since the last poll, unless the log moved or shrank.
    const bool continues = !options_.clear && history->log == t.seen_log && history->log_length >= t.seen_length;
    const std::uint64_t first = continues ? t.seen_length : 0;
    pending_.push_back({i, *history, *t.history, first, false});
    regions.push_back({history->log + first * log_item_size, (history->log_length - first) * log_item_size});
    if (options_.clear) regions.push_back({history->clocks, history->clocks_length * clock_size});
  }
  snapshot_.read(regions);

  std::vector<Row> rows;
  std::vector<std::uint32_t> items;
  for (auto& p : pending_) {
    auto& t = tracers_[p.tracer];
    const auto& h = p.history;
    const std::uint64_t first = p.first_item;
    const std::uint64_t count = h.log_length - first;
    if (!snapshot_.has(h.log + first * log_item_size, count * log_item_size) ||
        (options_.clear && !snapshot_.has(h.clocks, h.clocks_length * clock_size))) {
      ++t.counters.unreadable;
      note(t, fmt::format("cannot read its log at 0x{:x}", h.log));
      continue;
    }
    ++t.counters.collected_polls;
    const auto bytes = snapshot_.bytes(h.log + first * log_item_size, count * log_item_size);
    items.resize(count);
    for (std::uint64_t k = 0; k < count; ++k) {
      items[k] =
          static_cast<std::uint32_t>(decode_word(bytes.subspan(k * log_item_size, log_item_size), options_.endian));
    }
    if (items.empty() || (options_.clear && items == t.restarted)) continue;  // nothing, or only what our clear wrote
    p.fresh = true;
    const DecodedLog log = decode_compact_log(items);
    if (log.truncated) ++t.counters.truncated;
    if (log.zero_events > 0) {
      t.counters.malformed += log.zero_events;
      note(t, fmt::format("{} event(s) with id 0 in its log (not an ekotrace event id): dropped", log.zero_events));
    }
    for (const auto& entry : log.entries) {
      if (!entry.is_clock && is_overflow_event(entry.id)) ++t.counters.overflows;
    }
    t.counters.entries += log.entries.size();
    segmenter_.add(h.tracer_id, p.tracer, log.entries, rows);
  }
  return rows;
}

// The clear after a poll is ekotrace's own end of a report (report_finish.hpp): the clocks
// with the tracer's local clock incremented, the log restarted from them with the "produced
// report" event, event_count reset. All of it is written in the same halt as the read.
void Collector::clear_log(const Pending& p, TracerState& t) {
  const Layout& layout = options_.layout;
  const auto& h = p.history;
  const auto clock_bytes = snapshot_.bytes(h.clocks, h.clocks_length * clock_size);
  std::vector<LogicalClock> clocks(h.clocks_length);
  for (std::uint64_t k = 0; k < h.clocks_length; ++k) {
    clocks[k].id = static_cast<std::uint32_t>(decode_word(clock_bytes.subspan(k * clock_size, 4), options_.endian));
    clocks[k].count =
        static_cast<std::uint32_t>(decode_word(clock_bytes.subspan(k * clock_size + 4, 4), options_.endian));
  }
  const FinishedReport after = finished_report_logging(clocks, h.log_capacity);
  std::vector<std::uint8_t> log_bytes(after.log.size() * log_item_size);
  for (std::size_t k = 0; k < after.log.size(); ++k) {
    encode_word(after.log[k], 4, options_.endian, std::span(log_bytes).subspan(k * log_item_size, log_item_size));
  }
  bool written = log_bytes.empty() || snapshot_.modify(h.log, log_bytes);
  if (!written) {  // the new log is longer than the one read: read that room to write it
    snapshot_.read({{h.log, log_bytes.size()}});
    written = snapshot_.modify(h.log, log_bytes);
  }
  std::vector<std::uint8_t> word_bytes(layout.word_size);
  if (!written) {  // the log cannot be written: leave it empty, never with stale items
    t.restarted.clear();
    encode_word(0, layout.word_size, options_.endian, word_bytes);
    snapshot_.modify(p.history_address + layout.compact_log + 2ULL * layout.word_size, word_bytes);
    return;
  }
  t.restarted = after.log;
  if (!after.clocks.empty()) {
    std::array<std::uint8_t, 4> count{};
    encode_word(after.clocks[0].count, 4, options_.endian, count);
    snapshot_.modify(h.clocks + 4, count);
  }
  std::array<std::uint8_t, 4> event_count{};
  encode_word(after.event_count, 4, options_.endian, event_count);
  snapshot_.modify(p.history_address + layout.event_count, event_count);
  encode_word(after.log.size(), layout.word_size, options_.endian, word_bytes);
  snapshot_.modify(p.history_address + layout.compact_log + 2ULL * layout.word_size, word_bytes);
}

void Collector::finish() {
  for (const auto& p : pending_) {
    auto& t = tracers_[p.tracer];
    if (!p.fresh) continue;
    if (options_.clear) {
      clear_log(p, t);
    } else {
      t.seen_log = p.history.log;
      t.seen_length = p.history.log_length;
    }
  }
  pending_.clear();
  snapshot_.write_back();
  memory_.resume();
}

}  // namespace tp::ekotrace
