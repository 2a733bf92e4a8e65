#include "decode/itm_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "core/json_writer.hpp"
#include "decode/record_entries.hpp"

namespace tp {

using itm::Packet;
using namespace std::string_view_literals;
using itm::PacketKind;

ItmSession::ItmSession(PortMap port_map, SessionOptions options, BatchedWriter& writer)
    : options_(options),
      writer_(writer),
      router_(std::move(port_map), options.allow_mask, PortDecoderLimits{options.max_line}),
      decoder_(itm::DecoderOptions{options.strict_sync, false}),
      clock_(options.prescaler) {
  if (options_.tpiu) tpiu_.emplace(options_.tpiu_stream);
  staging_.reserve(std::size_t{64} << 10U);
  pending_.reserve(options_.max_pending + 1);
  recent_times_.resize(std::min(std::bit_ceil(options_.max_line + 2), recent_times_cap));
  // Records are staged as entries (decode/record_entries) and formatted when the writer
  // writes them: on its own thread, or on this one (a test comparing the two).
  if (writes_records()) {
    BatchedWriter::BatchEncoder encode = entry_encoder(options_.format, router_.map(), options_.symbols);
    if (options_.format_in_background) {
      writer_.write_in_background(std::move(encode));
    } else {
      writer_.encode_batches(std::move(encode));
    }
  }
}

void ItmSession::feed(std::span<const std::uint8_t> bytes, std::uint64_t host_us) {
  host_us_ = host_us;
  last_input_us_ = host_us;
  stats_.bytes += bytes.size();
  if (tpiu_) {
    deformatted_.clear();
    tpiu_->feed(bytes, deformatted_);
    decode_itm(deformatted_);
  } else {
    decode_itm(bytes);
  }
  lines_may_be_partial_ = true;
  // Input that never pauses must not hold records back: bound how long one may wait
  // for a timestamp (a stream without timestamps would otherwise wait for max_pending).
  if (!pending_.empty() && host_us - pending_.front().host_us >= options_.max_pending_us) release_pending();
}

void ItmSession::decode_itm(std::span<const std::uint8_t> bytes) {
  stats_.itm_bytes += bytes.size();
  decoder_.feed(bytes, PacketSink{*this});
}

void ItmSession::on_byte_run(std::uint16_t port, std::span<const std::uint8_t> bytes) {
  stats_.packets += bytes.size();
  stats_.by_kind[static_cast<std::size_t>(PacketKind::instrumentation)] += bytes.size();
  if (options_.frames) {
    for (const std::uint8_t b : bytes) frames_.push_back(ItmFrame{port, 1, b});
  }
  port_health_[port % PortMap::port_count].received += bytes.size();
  router_.write_bytes(port, bytes, *this);
  release_if_full();
}

void ItmSession::release_if_full() {
  if (pending_.size() >= options_.max_pending || frames_.size() >= options_.max_pending) release_pending();
}

void ItmSession::on_packet(const Packet& p) {
  ++stats_.packets;
  ++stats_.by_kind[static_cast<std::size_t>(p.kind)];
  switch (p.kind) {
    case PacketKind::instrumentation:
      if (options_.frames)
        frames_.push_back(ItmFrame{p.stimulus_port(), p.length, static_cast<std::uint32_t>(p.value)});
      port_health_[p.stimulus_port() % PortMap::port_count].received += p.length;
      router_.write(p.stimulus_port(), static_cast<std::uint32_t>(p.value), p.length, *this);
      break;
    case PacketKind::local_timestamp:
    case PacketKind::global_timestamp1:
    case PacketKind::global_timestamp2: {
      ++stats_.timestamps;
      set_moment(stats_.timestamps);  // EventSink::moment(): the timestamps so far
      const std::uint64_t before = recent_time(stats_.timestamps - 1).time;  // the time only moves here
      const bool had_time = clock_.seen();
      clock_.apply(p);
      // LTS1's TC (D4.2.4): non-zero, the timestamp or the packets were delayed, so the
      // time is not exactly when the packets before it were generated. LTS2 is always exact.
      const bool exact = p.kind != PacketKind::local_timestamp || p.timestamp_control() == 0;
      const std::uint64_t now = target_time();  // once: with --cpu-hz it divides
      recent_time(stats_.timestamps) = Moment{now, exact};
      if (had_time) cut_lines_at_pause(before, now);
      if (options_.timestamps == TimestampMode::target) {
        if (host_stamped_ != 0) note_first_target_time();
        stamp_pending(now, target_clock(), exact);
      }
      return;
    }
    case PacketKind::sync:
      ++stats_.syncs;
      return;
    case PacketKind::stimulus_page:
      return;
    case PacketKind::overflow: {
      ++stats_.overflows;
      router_.flush(FlushReason::overflow, *this);
      stage(Event::of(EventKind::overflow));
      break;
    }
    case PacketKind::malformed: {
      ++stats_.malformed_packets;
      stats_.malformed_bytes += p.value;
      if (!options_.report_malformed) break;
      stage(Event::malformed(0, itm::malformed_reason_name(p.malformed_reason()), p.malformed_byte_count()));
      break;
    }
    case PacketKind::extension:
      stage(Event::extension(p.extension_source_hardware(), p.value));
      break;
    default:
      if (writes_records()) {
        on_hardware_packet(p);
      } else {
        ++stats_.records;  // --format none: every hardware packet is one record, counted
      }
      break;
  }
  release_if_full();
}

// The writes since the previous timestamp (moment timestamps - 1) came `now - before` after
// the ones before it: past the line timeout, partial lines end between them.
void ItmSession::cut_lines_at_pause(std::uint64_t before, std::uint64_t now) {
  if (!options_.cut_lines_by_target_time || options_.cpu_hz == 0) return;
  if (now > before && now - before > options_.line_timeout_us * 1000U) router_.cut_before(stats_.timestamps - 1, *this);
}

void ItmSession::on_hardware_packet(const Packet& p) {
  switch (p.kind) {
    case PacketKind::event_counter:
      stage(Event::event_counter(static_cast<std::uint8_t>(p.value)));
      return;
    case PacketKind::exception:
      // The packet's function is the action's value (ARMv7-M ARM D4.3.2).
      stage(Event::exception(p.exception_number(), static_cast<ExceptionAction>(p.exception_function())));
      return;
    case PacketKind::pc_sample:
      stage(Event::pc_sample(p.value, p.sleeping()));
      return;
    case PacketKind::data_trace_pc:
      stage(Event::data_trace(p.comparator(), DataTraceType::pc, p.value, p.length));
      return;
    case PacketKind::data_trace_address:
      stage(Event::data_trace(p.comparator(), DataTraceType::address, p.value, p.length));
      return;
    case PacketKind::data_trace_value:
      stage(Event::data_trace(p.comparator(), p.is_write() ? DataTraceType::write : DataTraceType::read, p.value,
                              p.length));
      return;
    default:
      stage(Event::hardware(p.address, p.value, p.length));
      return;
  }
}

void ItmSession::on_event(const Event& event) {
  if (event.kind == EventKind::malformed) ++stats_.port_errors;
  note_port_result(event);
  stage(event);
}

// Firmware that does not follow the port map (the sigrok STM32F105 capture, for one,
// writes text and 32-bit values on port 1, the map's TaskIsr port) makes its decoder invent
// records and report most payloads as malformed: say so once per port.
void ItmSession::note_port_result(const Event& event) {
  constexpr std::uint64_t enough_bytes = 16;
  if (event.kind != EventKind::malformed) return;
  PortHealth& health = port_health_[event.port % PortMap::port_count];
  health.failed += event.byte_count();
  if (health.warned || health.failed < enough_bytes || 2 * health.failed <= health.received) return;
  health.warned = true;
  warnings_.push_back(fmt::format(
      "port {}: {} of the {} bytes written to it do not decode as {} records; does the firmware follow the port "
      "map? Give its ports with --port-map",
      event.port, health.failed, health.received, decoder_name(router_.map().at(event.port).decoder)));
}

std::vector<std::string> ItmSession::take_warnings() {
  return std::exchange(warnings_, {});
}

void ItmSession::stage(const Event& event) {
  ++stats_.records;
  if (!writes_records()) return;
  stage_record_entry(staging_, event);
  const Moment began = time_since(event.began);
  pending_.push_back(Pending{staging_.size(), host_us_, began.time, began.exact});
  if (options_.timestamps == TimestampMode::host) release_pending();
}

ItmSession::Moment ItmSession::time_since(std::uint64_t began) const noexcept {
  if (began == began_now || began >= stats_.timestamps || options_.timestamps != TimestampMode::target) {
    return Moment{began_now, true};
  }
  const std::uint64_t kept = recent_times_.size() - 1;
  const std::uint64_t oldest_kept = stats_.timestamps > kept ? stats_.timestamps - kept : 1;
  if (began + 1 >= oldest_kept) return recent_time(began + 1);
  return Moment{recent_time(oldest_kept).time, false};  // its own time is no longer kept: a later one
}

std::uint64_t ItmSession::target_time() const noexcept {
  const std::uint64_t cycles = clock_.now();
  if (options_.cpu_hz == 0) return cycles;
  // cycles * 1e9 / hz without overflowing 64 bits: whole seconds and the remainder apart.
  const std::uint64_t hz = options_.cpu_hz;
  return cycles / hz * 1'000'000'000U + cycles % hz * 1'000'000'000U / hz;
}

void ItmSession::stamp_pending(std::uint64_t timestamp, std::string_view clock, bool exact) {
  if (pending_.empty() && frames_.empty()) return;
  std::size_t begin = 0;
  for (const Pending& record : pending_) {
    if (record.target_time == began_now) {
      stamp_record_entry(staging_.data() + begin, timestamp, clock, exact);
    } else {  // dated earlier: a text line that began before this group's timestamp
      stamp_record_entry(staging_.data() + begin, record.target_time, clock, record.exact);
    }
    begin = record.body_end;
  }
  OutBuffer& out = writer_.buffer();
  out += staging_.view();
  if (!frames_.empty()) {
    frames_line_.clear();
    write_frames_line(frames_line_, timestamp, frames_, clock, exact);
    append_line_entry(out, frames_line_.view());
    frames_.clear();
  }
  pending_.clear();
  staging_.clear();
  writer_.commit();
}

// Records released before the timestamp that dates them: the last target time is only a
// lower bound of theirs, so they say "time_exact":false.
void ItmSession::release_pending() {
  if (pending_.empty() && frames_.empty()) return;
  if (options_.timestamps == TimestampMode::none) {
    stamp_pending(0, clock_name(RecordClock::none), true);
  } else if (options_.timestamps == TimestampMode::target && clock_.seen()) {
    stamp_pending(target_time(), target_clock(), false);
  } else {
    stamp_with_host_time();
  }
}

// No target time (yet): each record keeps the host time its bytes arrived at. With
// --timestamps host that is the time asked for; in target mode it stands in for a target
// time the stream has not given, so it is not exact, and the switch to target time, when
// a timestamp comes, is said once.
void ItmSession::stamp_with_host_time() {
  const bool exact = options_.timestamps == TimestampMode::host;
  if (!exact) host_stamped_ += pending_.size();
  std::size_t begin = 0;
  for (const Pending& record : pending_) {
    stamp_record_entry(staging_.data() + begin, record.host_us, clock_name(RecordClock::us), exact);
    begin = record.body_end;
  }
  writer_.buffer() += staging_.view();
  pending_.clear();
  staging_.clear();
  if (!frames_.empty()) stamp_pending(host_us_, clock_name(RecordClock::us), exact);
  writer_.commit();
}

void ItmSession::note_first_target_time() {
  warnings_.push_back(
      fmt::format("the first {} record(s) came before the stream's first ITM timestamp and carry host receive time "
                  "(\"clock\":\"us\", \"time_exact\":false); from here on records carry target time (\"clock\":\"{}\")",
                  host_stamped_, target_clock()));
  host_stamped_ = 0;
}

void ItmSession::idle(std::uint64_t host_us) {
  host_us_ = host_us;
  if (lines_may_be_partial_ && host_us - last_input_us_ >= options_.line_timeout_us) {
    router_.flush(FlushReason::idle, *this);
    lines_may_be_partial_ = false;
  }
  release_pending();
}

void ItmSession::finish(std::uint64_t host_us) {
  host_us_ = host_us;
  decoder_.finish(PacketSink{*this});
  router_.flush(FlushReason::end, *this);
  lines_may_be_partial_ = false;
  release_pending();
}

DecodeStats ItmSession::stats() const {
  DecodeStats stats = stats_;
  stats.filtered_writes = router_.filtered_writes();
  stats.clock_changes = clock_.clock_changes();
  return stats;
}

std::string ItmSession::stats_summary() const {
  const DecodeStats s = stats();
  std::string out = fmt::format(
      "{} bytes, {} packets, {} records; {} syncs, {} overflows, {} timestamps; "
      "{} malformed packets ({} bytes), {} port decoder errors, {} writes to disabled ports",
      s.bytes, s.packets, s.records, s.syncs, s.overflows, s.timestamps, s.malformed_packets, s.malformed_bytes,
      s.port_errors, s.filtered_writes);
  if (s.clock_changes != 0) out += fmt::format("; {} target clock changes (GTS ClkCh)", s.clock_changes);
  out += "; packets by kind:";
  for (std::size_t kind = 0; kind < s.by_kind.size(); ++kind) {
    if (s.by_kind[kind] == 0) continue;
    out += fmt::format(" {} {}", itm::packet_kind_name(static_cast<PacketKind>(kind)), s.by_kind[kind]);
  }
  if (const auto* t = tpiu_stats()) {
    out += fmt::format("; TPIU: {} frames, {} full syncs, {} stream bytes, {} other-stream bytes, {} trigger bytes",
                       t->frames, t->full_syncs, t->selected_bytes, t->other_bytes, t->trigger_bytes);
  }
  return out;
}

}  // namespace tp
