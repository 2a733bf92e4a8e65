#include "decode/decode_command.hpp"

#include <fmt/format.h>

#include <optional>

#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/number.hpp"
#include "core/progress.hpp"
#include "core/text_file.hpp"
#include "decode/decode_loop.hpp"
#include "symbols/symbolizer.hpp"

namespace tp {
namespace {

std::uint32_t parse_mask(const std::string& text) {
  const auto value = parse_c_number<std::uint32_t>(text);
  if (!value) throw Error(ExitCode::usage, fmt::format("--ports: '{}' is not a 32-bit mask (e.g. 0x0F)", text));
  return *value;
}

SessionOptions session_options(const DecodeOptions& o) {
  SessionOptions s;
  s.format = o.format == "text" ? OutputFormat::text : o.format == "none" ? OutputFormat::none : OutputFormat::ndjson;
  s.timestamps = o.timestamps == "host"   ? TimestampMode::host
                 : o.timestamps == "none" ? TimestampMode::none
                                          : TimestampMode::target;
  s.cpu_hz = o.cpu_hz;
  s.prescaler = o.prescaler;
  s.frames = o.frames;
  s.tpiu = o.tpiu;
  s.tpiu_stream = static_cast<std::uint8_t>(o.tpiu_stream);
  s.strict_sync = o.strict_sync;
  s.report_malformed = !o.no_malformed;
  s.allow_mask = parse_mask(o.ports);
  s.max_line = o.max_line;
  s.line_timeout_us = static_cast<std::uint64_t>(o.line_timeout_ms) * 1000U;
  // Records outweigh their input 3-30x and cost as much to format as to decode: they are
  // formatted and written on a second thread.
  s.format_in_background = true;
  return s;
}

}  // namespace

ExitCode decode(const DecodeOptions& o, const std::string& output, bool append, const Logger& log) {
  PortMap map = o.port_map.empty() ? PortMap::standard() : PortMap::load(o.port_map);
  std::optional<symbols::Symbolizer> symbols;
  if (!o.elf.empty()) {
    symbols.emplace(symbols::Symbolizer::load(o.elf));
    if (!symbols->machine_warning().empty()) log.warn(symbols->machine_warning());
  }
  if (!o.isr_names.empty()) {
    map.add_isr_names(parse_id_names(read_text_file(o.isr_names), o.isr_names));
  } else if (symbols) {
    map.add_isr_names(symbols->handlers());  // an IsrEnter's isr_id as the exception number (IPSR)
  }
  SessionOptions options = session_options(o);
  if (symbols) options.symbols = &*symbols;
  ByteSource source = ByteSource::open(o.input);
  source.follow(o.follow);
  options.cut_lines_by_target_time = source.size().has_value() && !o.follow;  // a file replay
  BatchedWriter writer = BatchedWriter::open(output, append, {o.input, o.elf, o.port_map, o.isr_names});
  ItmSession session(std::move(map), options, writer);
  Progress progress(source.size(), log.verbosity() != Verbosity::quiet && !o.follow);
  StreamLoopOptions loop;
  const auto say_warnings = [&] {
    for (const auto& warning : session.take_warnings()) log.warn(warning);
  };
  loop.report_every_us = 1'000'000;
  loop.on_report = [&] {
    say_warnings();
    if (log.verbosity() == Verbosity::verbose) log.verbose(session.stats_summary());
  };
  run_decode_loop(source, session, writer, progress, loop);
  say_warnings();
  if (o.stats) {
    log.report(fmt::format("{}; {} batches formatted on the decoding thread (the writer's queue full)",
                           session.stats_summary(), writer.owner_encoded_batches()));
  }
  const DecodeStats stats = session.stats();
  if (stats.malformed_packets + stats.port_errors != 0) {
    log.warn(
        fmt::format("{} malformed packets ({} bytes) and {} port decoder errors were skipped (see Malformed records)",
                    stats.malformed_packets, stats.malformed_bytes, stats.port_errors));
  }
  return ExitCode::ok;
}

}  // namespace tp
