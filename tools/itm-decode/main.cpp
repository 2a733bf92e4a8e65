// itm-decode: raw ITM/DWT (or TPIU-framed) bytes in, NDJSON records out.
#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "cli/cli.hpp"
#include "core/clock.hpp"
#include "core/number.hpp"
#include "core/text_file.hpp"
#include "decode/decode_loop.hpp"
#include "symbols/symbolizer.hpp"

namespace {

struct Options {
  std::string input = "-";
  bool tpiu = false;
  unsigned tpiu_stream = 1;
  std::string port_map;
  std::string isr_names;
  std::string elf;
  std::string ports = "0xFFFFFFFF";
  std::uint64_t cpu_hz = 0;
  unsigned prescaler = 1;
  std::string timestamps = "target";
  bool frames = false;
  std::string format = "ndjson";
  bool stats = false;
  bool follow = false;
  bool strict_sync = false;
  bool no_malformed = false;
  std::size_t max_line = 4096;
  unsigned line_timeout_ms = 200;
};

std::uint32_t parse_mask(const std::string& text) {
  const auto value = tp::parse_c_number<std::uint32_t>(text);
  if (!value) throw tp::Error(tp::ExitCode::usage, fmt::format("--ports: '{}' is not a 32-bit mask (e.g. 0x0F)", text));
  return *value;
}

tp::SessionOptions session_options(const Options& o) {
  tp::SessionOptions s;
  s.format = o.format == "text"   ? tp::OutputFormat::text
             : o.format == "none" ? tp::OutputFormat::none
                                  : tp::OutputFormat::ndjson;
  s.timestamps = o.timestamps == "host"   ? tp::TimestampMode::host
                 : o.timestamps == "none" ? tp::TimestampMode::none
                                          : tp::TimestampMode::target;
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

tp::ExitCode run(const Options& o, const tp::CommonOptions& common, const tp::Logger& log) {
  tp::PortMap map = o.port_map.empty() ? tp::PortMap::standard() : tp::PortMap::load(o.port_map);
  std::optional<tp::symbols::Symbolizer> symbols;
  if (!o.elf.empty()) {
    symbols.emplace(tp::symbols::Symbolizer::load(o.elf));
    if (!symbols->machine_warning().empty()) log.warn(symbols->machine_warning());
  }
  if (!o.isr_names.empty()) {
    map.add_isr_names(tp::parse_id_names(tp::read_text_file(o.isr_names), o.isr_names));
  } else if (symbols) {
    map.add_isr_names(symbols->handlers());  // an IsrEnter's isr_id as the exception number (IPSR)
  }
  tp::SessionOptions options = session_options(o);
  if (symbols) options.symbols = &*symbols;
  tp::ByteSource source = tp::ByteSource::open(o.input);
  source.follow(o.follow);
  options.cut_lines_by_target_time = source.size().has_value() && !o.follow;  // a file replay
  tp::BatchedWriter writer =
      tp::BatchedWriter::open(common.output, common.append, {o.input, o.elf, o.port_map, o.isr_names});
  tp::ItmSession session(std::move(map), options, writer);
  tp::Progress progress(source.size(), log.verbosity() != tp::Verbosity::quiet && !o.follow);
  tp::StreamLoopOptions loop;
  const auto say_warnings = [&] {
    for (const auto& warning : session.take_warnings()) log.warn(warning);
  };
  loop.report_every_us = 1'000'000;
  loop.on_report = [&] {
    say_warnings();
    if (log.verbosity() == tp::Verbosity::verbose) log.verbose(session.stats_summary());
  };
  tp::run_decode_loop(source, session, writer, progress, loop);
  say_warnings();
  if (o.stats) {
    log.report(fmt::format("{}; {} batches formatted on the decoding thread (the writer's queue full)",
                           session.stats_summary(), writer.owner_encoded_batches()));
  }
  const tp::DecodeStats stats = session.stats();
  if (stats.malformed_packets + stats.port_errors != 0) {
    log.warn(
        fmt::format("{} malformed packets ({} bytes) and {} port decoder errors were skipped (see Malformed records)",
                    stats.malformed_packets, stats.malformed_bytes, stats.port_errors));
  }
  return tp::ExitCode::ok;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "Decode ARM ITM/DWT trace (raw SWO bytes, or TPIU frames with --tpiu) into NDJSON records,\n"
      "one per line, shaped like a Callisto Event: {\"timestamp\":..,\"port\":..,\"event\":{\"kind\":..}}.\n\n"
      "Examples:\n"
      "  itm-decode swo.bin | jq -c 'select(.port == 0)'\n"
      "  itm-decode capture.bin --cpu-hz 72000000 | jq -r 'select(.event.kind==\"Text\") | .event.data.message'\n"
      "  itm-decode --tpiu --tpiu-stream 1 --format text swo_tpiu.bin",
      "itm-decode"};
  Options o;
  tp::CommonOptions common;
  app.add_option("FILE", o.input, "Input file ('-' or none = stdin)");
  app.add_flag("--tpiu", o.tpiu, "Input is TPIU-formatted (16-byte frames); extract one stream");
  app.add_option("--tpiu-stream", o.tpiu_stream, "TPIU stream ID carrying ITM")
      ->default_val(1)
      ->check(CLI::Range(1, 0x7C));
  app.add_option("--port-map", o.port_map, "Port map JSON (Callisto ports_map form); default: the standard map")
      ->type_name("FILE");
  app.add_option("--isr-names", o.isr_names, "JSON object of ISR names for TaskIsr ports: {\"10\":\"TIM1_IRQHandler\"}")
      ->type_name("FILE");
  app.add_option("--elf", o.elf,
                 "Firmware ELF: PC samples get their function (and file and line with DWARF), exceptions their "
                 "handler from the vector table, IsrEnter names from it without --isr-names")
      ->type_name("FILE");
  app.add_option("--ports", o.ports, "Decode only these ports 0-31: a bit mask, e.g. 0x0F")->type_name("MASK");
  app.add_option("--cpu-hz", o.cpu_hz, "Target clock: timestamps in nanoseconds instead of cycles")->type_name("HZ");
  app.add_option("--prescaler", o.prescaler, "ITM timestamp prescaler (TCR.TSPrescale): 1, 4, 16 or 64")
      ->check(CLI::IsMember({1U, 4U, 16U, 64U}))
      ->default_val(1);
  app.add_option("--timestamps", o.timestamps,
                 "target: from ITM timestamps (host time when there are none); host; none")
      ->check(CLI::IsMember({"target", "host", "none"}))
      ->default_val("target");
  app.add_flag("--frames", o.frames, "Also write raw ITM frame lines {\"timestamp\":..,\"frames\":[..]}");
  app.add_option("--format", o.format, "ndjson, text (for a terminal) or none (count only, with --stats)")
      ->check(CLI::IsMember({"ndjson", "text", "none"}))
      ->default_val("ndjson");
  app.add_flag("--stats", o.stats, "Print packet, overflow, malformed and resync counts on stderr at exit");
  app.add_flag("-f,--follow", o.follow, "Keep reading a growing file (like tail -f)");
  app.add_flag("--strict-sync", o.strict_sync, "After a malformed packet, skip everything until the next sync");
  app.add_flag("--no-malformed", o.no_malformed, "Do not write Malformed records (they are still counted)");
  app.add_option("--max-line", o.max_line, "Longest Text line before it is split")
      ->default_val(4096)
      ->check(CLI::Range(1, 1 << 24));
  app.add_option(
         "--line-timeout", o.line_timeout_ms,
         "Emit a partial Text line after this many ms without input (a file replay: a target-time gap, with --cpu-hz)")
      ->default_val(200)
      ->type_name("MS");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) { return run(o, common, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("itm-decode", [&] { return run_main(argc, argv); });
}
