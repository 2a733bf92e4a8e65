#include "sysview/decode_command.hpp"

#include <fmt/format.h>

#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/progress.hpp"
#include "core/stream_loop.hpp"
#include "sysview/records.hpp"
#include "sysview/stream_decoder.hpp"

namespace tp::sysview {
namespace {

class DecodeHandler final : public StreamHandler {
 public:
  DecodeHandler(const DecodeOptions& o, BatchedWriter& writer)
      : decoder_(!o.no_sync),
        records_({o.timestamp_hz, o.ticks, o.port}),
        writer_(writer),
        malformed_(!o.no_malformed),
        count_only_(o.count_only) {}

  void on_data(std::span<const std::uint8_t> bytes, std::uint64_t /*now_us*/) override { decoder_.feed(bytes, *this); }
  void on_end(std::uint64_t /*now_us*/) override {
    decoder_.finish(*this);
    if (count_only_) return;
    records_.finish(writer_.buffer());
    writer_.commit();
  }

  // The decoder's sink.
  void packet(const Packet& packet) {
    if (count_only_) return;
    records_.packet(packet, writer_.buffer());
    writer_.commit();
  }
  void skipped(std::string_view reason, std::uint64_t bytes) {
    if (!malformed_ || count_only_) return;
    records_.skipped(reason, bytes, writer_.buffer());
    writer_.commit();
  }

  [[nodiscard]] const StreamCounters& stream() const noexcept { return decoder_.counters(); }
  [[nodiscard]] const RecordWriter& records() const noexcept { return records_; }

 private:
  StreamDecoder decoder_;
  RecordWriter records_;
  BatchedWriter& writer_;
  bool malformed_;
  bool count_only_;
};

std::string summary(const DecodeHandler& handler) {
  const StreamCounters& s = handler.stream();
  const RecordCounters& r = handler.records().counters();
  return fmt::format(
      "{} packets, {} records ({} clock{}), {} syncs, {} malformed packets, {} bytes skipped, {} overflows "
      "({} packets dropped by the target), {} time mismatches, {} ISR exits without an enter",
      s.packets, r.records, handler.records().clock().empty() ? "no" : handler.records().clock(),
      handler.records().timestamp_hz() != 0 ? fmt::format(", {} Hz", handler.records().timestamp_hz()) : "", s.syncs,
      s.malformed, s.skipped_bytes, r.overflows, r.dropped, r.time_mismatches, r.unmatched_exits);
}

}  // namespace

ExitCode decode(const DecodeOptions& o, const std::string& output, bool append, const Logger& log) {
  ByteSource source = ByteSource::open(o.input);
  source.follow(o.follow);
  BatchedWriter writer = BatchedWriter::open(output, append, {o.input});
  DecodeHandler handler(o, writer);
  Progress progress(source.size(), log.verbosity() != Verbosity::quiet && !o.follow);
  StreamLoopOptions loop;
  loop.report_every_us = 1'000'000;
  loop.on_report = [&] {
    if (log.verbosity() == Verbosity::verbose) log.verbose(summary(handler));
  };
  try {
    run_stream_loop(source, handler, writer, progress, loop);
  } catch (const Error&) {
    writer.flush();  // the records before the one refused (a time past 2^64 ns)
    throw;
  }
  if (o.stats) log.report(summary(handler));
  const StreamCounters& s = handler.stream();
  if (s.packets == 0 && s.syncs == 0 && s.skipped_bytes > 0) {
    log.warn(
        fmt::format("no SystemView sync (10 zero bytes) in {} bytes: not a SystemView stream, or a capture "
                    "started after the recording did (restart it, or --no-sync if it starts at a packet)",
                    s.skipped_bytes));
  } else if (s.malformed != 0) {
    log.warn(fmt::format("{} malformed packets: {} bytes skipped to the next sync (see Malformed records)", s.malformed,
                         s.skipped_bytes));
  }
  if (handler.records().counters().dropped != 0) {
    log.warn(fmt::format("the target dropped {} packets (its RTT buffer was full: see Overflow records)",
                         handler.records().counters().dropped));
  }
  return ExitCode::ok;
}

}  // namespace tp::sysview
