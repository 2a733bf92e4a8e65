// One decoding session: raw bytes (optionally TPIU-framed) -> ITM packets -> port
// decoders -> records stamped with target time -> batched output.
//
// Timestamps: an ITM local timestamp follows the packets it dates (ARMv7-M D4.2.4),
// so records wait (as record entries, formatted when the writer writes them) until the next
// timestamp packet.
// When input pauses, ends, or too many wait, they are released with the last target
// time, or with the host receive time if the stream has carried no target time; either
// way the record says "time_exact":false, as it does when the timestamp that dates it was
// flagged delayed (LTS1 TC != 0, D4.2.4).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/batched_writer.hpp"
#include "decode/record_writer.hpp"
#include "itm/decoder.hpp"
#include "itm/timestamp.hpp"
#include "itm/tpiu.hpp"
#include "ports/port_router.hpp"
#include "records/vocabulary.hpp"

namespace tp {

enum class TimestampMode : std::uint8_t { target, host, none };

struct SessionOptions {
  OutputFormat format = OutputFormat::ndjson;
  TimestampMode timestamps = TimestampMode::target;
  std::uint64_t cpu_hz = 0;      // non-zero: target time in nanoseconds instead of cycles
  std::uint32_t prescaler = 1;   // ITM TCR.TSPrescale divider: 1, 4, 16 or 64
  bool frames = false;           // also write raw frame lines (Callisto Itm messages)
  bool tpiu = false;             // input is TPIU-formatted
  std::uint8_t tpiu_stream = 1;  // the TPIU stream ID carrying ITM
  bool strict_sync = false;      // after a malformed packet, wait for a sync
  bool report_malformed = true;  // write Malformed records (they are always counted)
  std::uint32_t allow_mask = 0xFFFFFFFFU;
  std::size_t max_line = 4096;
  std::size_t max_pending = 4096;                // records waiting for a timestamp
  std::uint64_t max_pending_us = 50'000;         // ... and for at most this long (host time)
  std::uint64_t line_timeout_us = 200'000;       // partial text lines are emitted after this pause
  const symbols::Symbolizer* symbols = nullptr;  // --elf: names for PC samples and handlers
  // Replaying a file (input that never pauses): a pause is seen in target time instead, a
  // timestamp delta longer than line_timeout_us ends partial lines, so a replay gives the
  // lines the live decode gave. Needs cpu_hz (target time in ns).
  bool cut_lines_by_target_time = false;
  // Records are handed to the writer as entries (decode/record_entries) and formatted as
  // they are written: on the writer's own thread (BatchedWriter::write_in_background), or,
  // without one, on the session's (BatchedWriter::encode_batches); the output is the same.
  // No thread when nothing is written (--format none without frames).
  bool format_in_background = false;
};

struct DecodeStats {
  std::uint64_t bytes = 0;      // input bytes (before TPIU deformatting)
  std::uint64_t itm_bytes = 0;  // bytes given to the ITM decoder
  std::uint64_t packets = 0;
  std::uint64_t syncs = 0;
  std::uint64_t overflows = 0;
  std::uint64_t timestamps = 0;
  std::uint64_t malformed_packets = 0;
  std::uint64_t malformed_bytes = 0;
  std::uint64_t port_errors = 0;  // malformed records reported by port decoders
  std::uint64_t records = 0;
  std::uint64_t filtered_writes = 0;
  std::uint64_t clock_changes = 0;          // GTS1 ClkCh: target times on either side are not comparable
  std::array<std::uint64_t, 16> by_kind{};  // indexed by itm::PacketKind
};

class ItmSession final : private EventSink {
 public:
  ItmSession(PortMap port_map, SessionOptions options, BatchedWriter& writer);

  void feed(std::span<const std::uint8_t> bytes, std::uint64_t host_us);
  // Input paused: release waiting records; after line_timeout_us also partial lines.
  void idle(std::uint64_t host_us);
  void finish(std::uint64_t host_us);
  // Whether idle() still has something to do.
  [[nodiscard]] bool wants_idle() const noexcept { return !pending_.empty() || lines_may_be_partial_; }

  [[nodiscard]] DecodeStats stats() const;
  [[nodiscard]] const itm::TpiuStats* tpiu_stats() const noexcept { return tpiu_ ? &tpiu_->stats() : nullptr; }
  [[nodiscard]] std::string stats_summary() const;
  // Problems noticed since the last call, each said once (a port whose payloads mostly fail
  // its decoder: the firmware likely does not follow the port map).
  std::vector<std::string> take_warnings();

 private:
  struct Pending {
    std::size_t body_end;
    std::uint64_t host_us;
    std::uint64_t target_time;  // known already (a text line's first character), or began_now
    bool exact;                 // of target_time, when known already
  };
  // A timestamp packet's target time, and whether it is exact (not flagged delayed).
  struct Moment {
    std::uint64_t time = 0;
    bool exact = true;
  };
  struct PortHealth {
    std::uint64_t received = 0;  // payload bytes written to the port
    std::uint64_t failed = 0;    // of them reported Malformed by its decoder
    bool warned = false;
  };

  // What the ITM decoder delivers to: packets, and runs of 1-byte writes in bulk.
  struct PacketSink {
    ItmSession& session;
    void operator()(const itm::Packet& packet) const { session.on_packet(packet); }
    void byte_run(std::uint16_t port, std::span<const std::uint8_t> bytes) const { session.on_byte_run(port, bytes); }
  };

  void decode_itm(std::span<const std::uint8_t> bytes);
  void on_packet(const itm::Packet& packet);
  void on_byte_run(std::uint16_t port, std::span<const std::uint8_t> bytes);
  void release_if_full();
  void cut_lines_at_pause(std::uint64_t before, std::uint64_t now);
  void on_hardware_packet(const itm::Packet& packet);
  // Events from port decoders (EventSink); their Malformed events count as port errors.
  void on_event(const Event& event) override;
  void note_port_result(const Event& event);
  // The target time an event that began at `began` has, if a timestamp came since then: that
  // of the first one after it (it dates the packets before it); else began_now.
  [[nodiscard]] Moment time_since(std::uint64_t began) const noexcept;
  // Whether records are formatted and written (else only counted: --format none).
  [[nodiscard]] bool writes_records() const noexcept {
    return options_.format != OutputFormat::none || options_.frames;
  }
  // Stages an event's record until its timestamp is known.
  void stage(const Event& event);
  void stamp_pending(std::uint64_t timestamp, std::string_view clock, bool exact);
  // Records released before the stream carried any target time: host time, said once.
  void stamp_with_host_time();
  void note_first_target_time();
  void release_pending();
  [[nodiscard]] std::uint64_t target_time() const noexcept;
  [[nodiscard]] std::string_view target_clock() const noexcept {
    return clock_name(options_.cpu_hz != 0 ? RecordClock::ns : RecordClock::cycles);
  }

  SessionOptions options_;
  BatchedWriter& writer_;
  PortRouter router_;
  itm::ItmDecoder decoder_;
  itm::TargetClock clock_;
  std::optional<itm::TpiuDeformatter> tpiu_;
  std::vector<std::uint8_t> deformatted_;
  OutBuffer staging_;
  std::vector<Pending> pending_;
  // The target time after each of the last timestamp packets, by count modulo the size (a
  // power of two): a line spans at most max_line writes, so at most that many timestamps,
  // but no more than recent_times_cap are kept (a large --max-line must not cost 32 bytes per
  // character up front); a line that began before the oldest kept gets that time, not exact.
  static constexpr std::size_t recent_times_cap = std::size_t{1} << 16U;
  std::vector<Moment> recent_times_;
  [[nodiscard]] Moment& recent_time(std::uint64_t count) noexcept {
    return recent_times_[count & (recent_times_.size() - 1)];
  }
  [[nodiscard]] const Moment& recent_time(std::uint64_t count) const noexcept {
    return recent_times_[count & (recent_times_.size() - 1)];
  }
  std::uint64_t host_stamped_ = 0;  // records given host time before the first target time
  std::vector<ItmFrame> frames_;
  OutBuffer frames_line_;  // a frames line, made before it is handed over as an entry
  std::array<PortHealth, PortMap::port_count> port_health_{};
  std::vector<std::string> warnings_;
  std::uint64_t host_us_ = 0;
  std::uint64_t last_input_us_ = 0;
  bool lines_may_be_partial_ = false;
  DecodeStats stats_;
};

}  // namespace tp
