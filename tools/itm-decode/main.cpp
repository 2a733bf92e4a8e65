// itm-decode: raw ITM/DWT (or TPIU-framed) bytes in, NDJSON records out.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "decode/decode_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Decode ARM ITM/DWT trace (raw SWO bytes, or TPIU frames with --tpiu) into NDJSON records,\n"
      "one per line, shaped like a Callisto Event: {\"timestamp\":..,\"port\":..,\"event\":{\"kind\":..}}.\n\n"
      "Examples:\n"
      "  itm-decode swo.bin | jq -c 'select(.port == 0)'\n"
      "  itm-decode capture.bin --cpu-hz 72000000 | jq -r 'select(.event.kind==\"Text\") | .event.data.message'\n"
      "  itm-decode --tpiu --tpiu-stream 1 --format text swo_tpiu.bin",
      "itm-decode"};
  tp::DecodeOptions o;
  tp::CommonOptions common;
  app.add_option("FILE", o.input, "Raw SWO bytes to decode ('-' or none = stdin)");
  app.add_flag("--tpiu", o.tpiu, "Input is TPIU-formatted (16-byte frames); extract one stream");
  app.add_option("--tpiu-stream", o.tpiu_stream, "TPIU stream ID carrying ITM")
      ->default_val(o.tpiu_stream)
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
  tp::add_cpu_hz_option(app, o.cpu_hz, "timestamps in nanoseconds instead of cycles");
  app.add_option("--prescaler", o.prescaler, "ITM timestamp prescaler (TCR.TSPrescale): 1, 4, 16 or 64")
      ->check(CLI::IsMember({1U, 4U, 16U, 64U}))
      ->default_val(o.prescaler);
  app.add_option("--timestamps", o.timestamps,
                 "target: from ITM timestamps (host time when there are none); host; none")
      ->check(CLI::IsMember({"target", "host", "none"}))
      ->default_val(o.timestamps);
  app.add_flag("--frames", o.frames, "Also write raw ITM frame lines {\"timestamp\":..,\"frames\":[..]}");
  app.add_option("--format", o.format, "ndjson, text (for a terminal) or none (count only, with --stats)")
      ->check(CLI::IsMember({"ndjson", "text", "none"}))
      ->default_val(o.format);
  app.add_flag("--stats", o.stats, "Print packet, overflow, malformed and resync counts on stderr at exit");
  app.add_flag("-f,--follow", o.follow, "Keep reading a growing file (like tail -f)");
  app.add_flag("--strict-sync", o.strict_sync, "After a malformed packet, skip everything until the next sync");
  app.add_flag("--no-malformed", o.no_malformed, "Do not write Malformed records (they are still counted)");
  app.add_option("--max-line", o.max_line, "Longest Text line before it is split")
      ->default_val(o.max_line)
      ->check(CLI::Range(1, 1 << 24));
  app.add_option(
         "--line-timeout", o.line_timeout_ms,
         "Emit a partial Text line after this many ms without input (a file replay: a target-time gap, with --cpu-hz)")
      ->default_val(o.line_timeout_ms)
      ->type_name("MS");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv,
                      [&](const tp::Logger& log) { return tp::decode(o, common.output, common.append, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("itm-decode", [&] { return run_main(argc, argv); });
}
