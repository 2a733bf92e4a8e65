// swo-capture: raw SWO bytes from a USB debug probe, a serial port, a TCP stream, a file
// or the built-in simulated target, to stdout or a file.
#include "cli/cli.hpp"
#include "swo/capture_command.hpp"

namespace {

int run_main(int argc, char** argv) {
  CLI::App app{
      "Capture raw SWO bytes (ITM/DWT trace, or TPIU frames) from a debug probe, a serial port,\n"
      "a TCP stream, a file or the built-in simulated target, and write them to stdout or -o FILE.\n\n"
      "Examples:\n"
      "  swo-capture --simulate | itm-decode | trace-serve\n"
      "  swo-capture --probe lpclink2 --baud 2000000 | itm-decode --format text\n"
      "  swo-capture --probe cmsis-dap --serial-number 0240000034 --duration 10s -o trace.swo\n"
      "  swo-capture --tcp localhost:3443 --reconnect | itm-decode\n"
      "  swo-capture --list",
      "swo-capture"};
  tp::swo::CaptureOptions o;
  tp::CommonOptions common;
  auto* sources = app.add_option_group("Source (choose one)");
  sources->add_option("--probe", o.probe, "USB probe: lpclink2, cmsis-dap, stlink, auto, or VID:PID")
      ->type_name("KIND");
  sources->add_option("--serial", o.serial_device, "Serial adapter on the SWO pin (NRZ), e.g. /dev/ttyUSB0")
      ->type_name("DEVICE");
  sources->add_option("--tcp", o.tcp, "Raw SWO served over TCP: OpenOCD, orbuculum/pyOCD (3443), J-Link (2332)")
      ->type_name("HOST:PORT");
  sources->add_option("--file", o.file, "A captured SWO file ('-' = stdin)")->type_name("FILE");
  sources->add_flag("--simulate", o.simulate, "The built-in simulated Cortex-M target (deterministic ITM stream)");
  sources->add_flag("--list", o.list, "List the attached probes (kind, VID:PID, serial, SWO) and exit");
  app.add_option("--serial-number", o.serial_number, "Choose the probe with this USB serial number")->type_name("SN");
  app.add_option("--baud", o.baud, "SWO bit rate (probes and serial); the target's TPIU must match")
      ->default_val(o.baud)
      ->check(CLI::Range(1U, 200'000'000U));
  app.add_option("--baud-tolerance", o.tolerance_percent, "Largest rate error accepted from a probe, in %")
      ->default_val(o.tolerance_percent)
      ->check(CLI::Range(0.0, 50.0));
  app.add_flag("--allow-approx", o.allow_approx, "Accept the closest rate a probe offers even beyond the tolerance");
  app.add_option("--swo-mode", o.swo_mode, "uart (NRZ) or manchester (CMSIS-DAP probes that offer it)")
      ->check(CLI::IsMember({"uart", "manchester"}))
      ->default_val(o.swo_mode);
  app.add_option("--timeout", o.reply_timeout_ms, "Milliseconds a probe or TCP peer may take to answer")
      ->default_val(o.reply_timeout_ms)
      ->check(CLI::Range(10, 600'000));
  app.add_flag("--realtime", o.realtime, "With --file: deliver at --rate (default --baud/10) bytes/s, as if live");
  app.add_option("--rate", o.rate,
                 "Bytes/s: --simulate (default 200000, like 2 Mbit/s SWO; 0 = as fast as read), --file --realtime "
                 "(default --baud/10)")
      ->type_name("N");
  app.add_option("--seed", o.seed, "Seed of the simulated target (same seed, same stream)")->default_val(o.seed);
  app.add_option("--cpu-hz", o.cpu_hz, "Clock of the simulated target (timestamps are its cycles)")
      ->default_val(o.cpu_hz)
      ->check(CLI::Range(1000U, 4'000'000'000U));
  app.add_option("--sim-events", o.sim_events, "Write the records the simulated events decode to (NDJSON)")
      ->type_name("FILE");
  app.add_option("--duration", o.duration, "Stop after this long (500ms, 10s, 5m, 1h)")->type_name("TIME");
  app.add_option("--max-bytes", o.max_bytes, "Stop after this many bytes (64K, 10M); --simulate: whole events")
      ->type_name("N");
  app.add_flag("--reconnect", o.reconnect, "Wait for an unplugged probe or a closed TCP stream to come back");
  app.add_option("--format", o.list_format, "--list output: text or ndjson")
      ->check(CLI::IsMember({"text", "ndjson"}))
      ->default_val(o.list_format);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    tp::swo::check_capture_options(o);
    tp::BatchedWriter out = tp::BatchedWriter::open(common.output, common.append, {o.file});
    return o.list ? tp::swo::list_probes(o, out, log) : tp::swo::capture(o, out, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("swo-capture", [&] { return run_main(argc, argv); });
}
