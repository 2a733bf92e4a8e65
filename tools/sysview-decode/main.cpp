// sysview-decode: a SEGGER SystemView stream (RTT channel 1's bytes) in, NDJSON records out.
#include "cli/cli.hpp"
#include "sysview/decode_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Decode a SEGGER SystemView recording (the bytes SEGGER_SYSVIEW.c writes to its RTT channel)\n"
      "into NDJSON records: task switches with names, ISR enter/exit, idle, timers, markers,\n"
      "printf text formatted on the host, overflows with the packets the target dropped, task\n"
      "and stack info, data samples, heap events; the system's descriptions as SystemInfo.\n"
      "Decoding starts at the first sync (10 zero bytes), as every SystemView start sends one;\n"
      "rtt-capture sends the start command when it reads a channel named SysView.\n\n"
      "Examples:\n"
      "  rtt-capture --gdb-server localhost:1234 --elf fw.elf --channel 1 | sysview-decode | trace-top\n"
      "  sysview-decode recording.bin --stats | trace-timeline -o timeline.json\n"
      "  nc localhost 19111 | sysview-decode --cpu-hz 64000000 | trace-serve",
      "sysview-decode"};
  tp::sysview::DecodeOptions o;
  tp::CommonOptions common;
  app.add_option("FILE", o.input, "SystemView bytes to decode ('-' or none = stdin)");
  tp::add_cpu_hz_option(app, o.timestamp_hz,
                        "the timestamp rate, overriding what the target announces (records in ns either way)");
  app.add_flag("--ticks", o.ticks, "Keep timestamps in the target's timestamp ticks (clock cycles), not ns");
  app.add_option("--port", o.port, "The records' port (SystemView's RTT channel)")
      ->default_val(o.port)
      ->check(CLI::Range(0, 255));
  app.add_flag("--no-sync", o.no_sync, "The input starts at a packet: decode from the first byte");
  std::string format = "ndjson";
  app.add_option("--format", format, "ndjson, or none (frame and check only: with --stats)")
      ->check(CLI::IsMember({"ndjson", "none"}))
      ->default_val(format);
  app.add_flag("--stats", o.stats, "Print packet, record, malformed, overflow and drop counts on stderr at exit");
  app.add_flag("-f,--follow", o.follow, "Keep reading a growing file (like tail -f)");
  app.add_flag("--no-malformed", o.no_malformed, "Do not write Malformed records (they are still counted)");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    o.count_only = format == "none";
    return tp::sysview::decode(o, common.output, common.append, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("sysview-decode", [&] { return run_main(argc, argv); });
}
