// rtt-capture: SEGGER RTT channels from a running target (a GDB server, a CMSIS-DAP probe, or
// an RTT TCP server) to stdout, as raw bytes or Text records; host data to a down channel.
#include "cli/cli.hpp"
#include "cli/target_options.hpp"
#include "rtt/capture_command.hpp"
#include "targets/target_opener.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Read SEGGER RTT channels from a running target: the control block found (--elf's\n"
      "_SEGGER_RTT, --address, or a scan of RAM for its id), its up buffers polled between RdOff\n"
      "and WrOff and given back, through a GDB server (halting the target only for each read,\n"
      "as QEMU's gdbstub needs), a CMSIS-DAP probe (reads while the core runs) or an RTT TCP\n"
      "server. Writes one channel's raw bytes (for sysview-decode and other decoders) or Text\n"
      "records per line (--format ndjson). Sends --send and stdin (--stdin) to a down buffer; on a\n"
      "channel named SysView it sends SystemView's start command, and the stop command at the end.\n\n"
      "Examples:\n"
      "  rtt-capture --gdb-server localhost:1234 --elf fw.elf --format ndjson | trace-filter --kind Text\n"
      "  rtt-capture --attach stm32f4 --channel 1 | sysview-decode | trace-top\n"
      "  rtt-capture --tcp localhost:9090 --format ndjson          # OpenOCD: rtt server start 9090 0\n"
      "  rtt-capture -g :3333 --elf fw.elf --list",
      "rtt-capture"};
  tp::rtt::CaptureOptions o;
  tp::target::TargetLocation where;
  tp::CommonOptions common;
  tp::add_target_options(app, where,
                         {.gdb_server_names = "-g,--gdb-server",
                          .gdb_server = "GDB server (HOST:PORT): QEMU, OpenOCD, pyOCD, J-Link",
                          .attach = "Through a CMSIS-DAP probe attached to CHIP (the chips eko-collect knows)"});
  app.add_option("--tcp", o.tcp, "An RTT TCP server instead (OpenOCD rtt server, J-Link 19021, probe-rs)")
      ->type_name("HOST:PORT");
  app.add_option("-e,--elf", o.elf, "Firmware ELF: the control block is its _SEGGER_RTT")->type_name("FILE");
  app.add_option("--address", o.address, "The control block's address (e.g. 0x20000400)")->type_name("ADDR");
  app.add_option("--scan", o.scan, "Without --elf or --address: RAM to search for the block's id")
      ->type_name("START:SIZE")
      ->default_val(o.scan);
  app.add_option("--ram", o.ram, "RAM the buffers must be in (a check of the block)")->type_name("START:SIZE");
  app.add_option("-c,--channel", o.channels, "Up channels to read (raw output: one)")
      ->delimiter(',')
      ->type_name("N[,N...]")
      ->default_str("0");
  app.add_option("--down-channel", o.down_channel, "Down channel for --send/--stdin (default: the first --channel)")
      ->type_name("N");
  app.add_option("--format", o.format, "raw (one channel's bytes) or ndjson (Text records per line)")
      ->check(CLI::IsMember({"raw", "ndjson"}))
      ->default_val(o.format);
  app.add_option("--max-line", o.max_line, "Longest Text line before it is split")
      ->default_val(o.max_line)
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--line-timeout", o.line_timeout_ms, "Write a partial line after this many ms")
      ->default_val(o.line_timeout_ms)
      ->type_name("MS");
  app.add_flag("--list", o.list, "List the channels (name, size, mode, bytes waiting) and exit");
  app.add_option("--send", o.send, "Bytes to write to the down channel at the start")->type_name("TEXT");
  app.add_flag("--stdin", o.forward_stdin, "Forward stdin to the down channel");
  app.add_option("--sysview", o.sysview,
                 "Send SystemView's start/stop commands: auto (a channel named SysView), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->default_val(o.sysview);
  app.add_option("-i,--interval", o.interval, "Longest pause between polls (adaptive: shorter while data flows)")
      ->default_val(o.interval);
  app.add_option("--min-interval", o.min_interval, "Shortest pause between polls")->default_val(o.min_interval);
  app.add_option("--wait", o.wait, "How long to wait for a valid control block (a target still starting)")
      ->default_val(o.wait);
  app.add_option("--duration", o.duration, "Stop after this long (e.g. 10s; default: until stopped)");
  app.add_option("--idle-exit", o.idle_exit, "Stop once no data came for this long (after some did)");
  app.add_flag("--stats", o.stats, "Print polls, bytes, full rings, round trips and halted time at the end");
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    if (o.tcp.empty() && where.gdb_server.empty() && where.attach.empty()) {
      throw tp::Error(tp::ExitCode::usage,
                      "say where the target is: --gdb-server HOST:PORT, --attach CHIP (a CMSIS-DAP probe) or --tcp");
    }
    return tp::rtt::capture(o, tp::target_opener(where), common.output, common.append, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("rtt-capture", [&] { return run_main(argc, argv); });
}
