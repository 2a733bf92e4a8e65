// A source of raw SWO bytes (a probe, a serial port, a TCP stream, a file, the simulated
// target). The capture loop pulls from it with a timeout, so a stop request, --duration
// and output flushing are handled in one place whatever the source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace tp::swo {

// What a source knows about the quality of its stream. Every byte is either delivered
// once or accounted for here: nothing is dropped or repeated silently.
struct SourceCounters {
  std::uint64_t lost_bytes = 0;         // known to be missing (gaps, probe overruns)
  std::uint64_t gaps = 0;               // places where bytes are known to be missing
  std::uint64_t duplicate_bytes = 0;    // repeated by the probe and suppressed
  std::uint64_t overruns = 0;           // the probe reported its buffer overflowed
  std::uint64_t lost_sync = 0;          // protocol bookkeeping lost and re-established
  std::uint64_t malformed_replies = 0;  // replies that made no sense (ignored, counted)
  std::uint64_t reconnects = 0;         // the peer went away and came back

  SourceCounters& operator+=(const SourceCounters& other) noexcept {
    lost_bytes += other.lost_bytes;
    gaps += other.gaps;
    duplicate_bytes += other.duplicate_bytes;
    overruns += other.overruns;
    lost_sync += other.lost_sync;
    malformed_replies += other.malformed_replies;
    reconnects += other.reconnects;
    return *this;
  }
};

// What a source knows of the far end, stated once at start (swo-capture's "facts" log
// line, which trace-serve reads in command mode for Status and Meta.cpu_hz).
struct SourceFacts {
  std::string probe;                    // what delivers the bytes: "LPC-Link2", "serial port", "simulator", ...
  std::optional<std::string> serial;    // the probe's USB serial number, the device path, the address
  std::optional<std::uint32_t> baud;    // the SWO rate in use, bit/s
  std::optional<std::uint64_t> cpu_hz;  // the target's clock, when the source knows it
  std::optional<std::string> target;    // what the target is, when the source knows it
};

// {"probe":...,"serial":...,"baud":...,"cpu_hz":...,"target":...}: the fields known.
std::string facts_json(const SourceFacts& facts);

enum class Pull { data, timeout, end };

struct PullResult {
  Pull status = Pull::timeout;
  std::size_t size = 0;
};

class SwoSource {
 public:
  SwoSource() = default;
  SwoSource(const SwoSource&) = delete;
  SwoSource& operator=(const SwoSource&) = delete;
  SwoSource(SwoSource&&) = delete;
  SwoSource& operator=(SwoSource&&) = delete;
  virtual ~SwoSource() = default;

  // Fills at most buffer.size() bytes, waiting at most about timeout_ms. Throws tp::Error
  // (with the exit code and protocol code that fit) when the source fails.
  virtual PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) = 0;
  // Leaves the device as it was found (stops the capture on the probe). Called once, also
  // after an error; must not throw.
  virtual void close() noexcept {}
  [[nodiscard]] virtual SourceCounters counters() const noexcept { return counters_; }
  // One line for -v: the rate negotiated, the transport in use.
  [[nodiscard]] virtual std::string description() const = 0;
  [[nodiscard]] virtual SourceFacts facts() const { return facts_; }
  // The probe a source was opened on (its model and USB serial number).
  void identify(std::string probe, std::string serial) {
    facts_.probe = std::move(probe);
    if (!serial.empty()) facts_.serial = std::move(serial);
  }

 protected:
  SourceCounters counters_;
  SourceFacts facts_;
};

}  // namespace tp::swo
