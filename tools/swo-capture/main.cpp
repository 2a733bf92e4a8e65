// swo-capture: raw SWO bytes from a USB debug probe, a serial port, a TCP stream, a file
// or the built-in simulated target, to stdout or a file.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "core/batched_writer.hpp"
#include "core/cli.hpp"
#include "core/quantity.hpp"
#include "swo/capture_loop.hpp"
#include "swo/probe_sources.hpp"
#include "swo/reconnecting_source.hpp"
#include "swo/simulator_source.hpp"
#include "swo/stream_sources.hpp"

namespace {

using namespace tp::swo;

constexpr std::uint64_t default_simulator_rate = 200'000;  // a 2 Mbit/s SWO line

struct Options {
  std::string probe;
  std::string serial_number;
  std::string serial_device;
  std::string tcp;
  std::string file;
  bool simulate = false;
  bool list = false;
  std::string list_format = "text";
  std::uint32_t baud = 2'000'000;
  double tolerance_percent = 2.0;
  bool allow_approx = false;
  std::string swo_mode = "uart";
  int reply_timeout_ms = 1000;
  bool realtime = false;
  std::optional<std::uint64_t> rate;  // bytes/s for --simulate and --file --realtime
  std::uint32_t seed = 1;
  std::uint32_t cpu_hz = 64'000'000;
  std::string sim_events;
  std::string duration;
  std::string max_bytes;
  bool reconnect = false;
};

int source_count(const Options& o) {
  return static_cast<int>(!o.probe.empty()) + static_cast<int>(!o.serial_device.empty()) +
         static_cast<int>(!o.tcp.empty()) + static_cast<int>(!o.file.empty()) + static_cast<int>(o.simulate);
}

ProbeSettings probe_settings(const Options& o) {
  ProbeSettings settings;
  settings.rate = {o.baud, o.tolerance_percent / 100.0, o.allow_approx};
  settings.mode = o.swo_mode == "manchester" ? tp::swo::cmsis_dap::Mode::manchester : tp::swo::cmsis_dap::Mode::uart;
  settings.reply_timeout_ms = o.reply_timeout_ms;
  return settings;
}

// Builds the factory of the chosen source (called again by --reconnect).
ReconnectingSource::Factory source_factory(const Options& o, std::uint64_t max_bytes,
                                           const std::shared_ptr<tp::usb::Context>& usb) {
  if (o.simulate) {
    return [&o, max_bytes]() -> std::unique_ptr<SwoSource> {
      std::unique_ptr<tp::BatchedWriter> events;
      if (!o.sim_events.empty())
        events = std::make_unique<tp::BatchedWriter>(tp::BatchedWriter::open(o.sim_events, false));
      return std::make_unique<SimulatorSource>(
          SimulatorSourceOptions{{o.seed, o.cpu_hz}, o.rate.value_or(default_simulator_rate), max_bytes},
          std::move(events));
    };
  }
  if (!o.file.empty()) {
    const std::uint64_t pace = o.realtime ? o.rate.value_or(o.baud / 10U) : 0;  // NRZ: 10 bits a byte
    return [&o, pace] { return std::make_unique<FileSource>(o.file, pace); };
  }
  if (!o.serial_device.empty()) return [&o] { return std::make_unique<SerialSource>(o.serial_device, o.baud); };
  if (!o.tcp.empty()) {
    const tp::net::TcpEndpoint endpoint = tp::net::parse_tcp_endpoint(o.tcp, "--tcp");
    return [endpoint, &o] { return std::make_unique<TcpSource>(endpoint, o.reply_timeout_ms); };
  }
  const ProbeSelector selector = parse_probe_selector(o.probe, o.serial_number);
  return [selector, usb, settings = probe_settings(o)] {
    return open_probe_source(*usb, select_probe(find_probes(*usb), selector), settings);
  };
}

tp::ExitCode list_probes(const Options& o, tp::BatchedWriter& out, const tp::Logger& log) {
  const tp::usb::Context usb;
  const auto probes = find_probes(usb);
  for (const auto& probe : probes)
    out.write(o.list_format == "ndjson" ? probe_json_line(probe) : probe_text_line(probe));
  if (probes.empty()) log.info("no supported probe attached (LPC-Link2, CMSIS-DAP v2, ST-Link)");
  out.flush();
  return tp::ExitCode::ok;
}

tp::ExitCode capture(const Options& o, tp::BatchedWriter& out, const tp::Logger& log) {
  const CaptureLimits limits{o.max_bytes.empty() ? 0 : tp::parse_byte_count(o.max_bytes),
                             o.duration.empty() ? std::chrono::milliseconds(0) : tp::parse_duration(o.duration)};
  const auto usb = o.probe.empty() ? nullptr : std::make_shared<tp::usb::Context>();
  auto factory = source_factory(o, limits.max_bytes, usb);
  std::unique_ptr<SwoSource> source;
  if (o.reconnect) {
    source = std::make_unique<ReconnectingSource>(std::move(factory),
                                                  [&log](const std::string& notice) { log.warn(notice); });
  } else {
    source = factory();
  }
  log.verbose(fmt::format("capturing from {}", source->description()));
  const CaptureResult result =
      run_capture(*source, out, limits, [&log](const CaptureProgress& p) { log.verbose(format_progress(p)); });
  log.verbose(fmt::format("{}: {}", source->description(), format_progress(result.progress)));
  const auto& c = result.progress.counters;
  if (c.lost_bytes != 0 || c.gaps != 0 || c.overruns != 0 || c.lost_sync != 0 || c.malformed_replies != 0) {
    log.warn(fmt::format("the stream has gaps: {}", format_progress(result.progress)));
  }
  if (const auto* simulator = dynamic_cast<const SimulatorSource*>(source.get())) {
    std::string kinds;
    const auto& counts = simulator->target().counts();
    for (std::size_t kind = 0; kind < counts.size(); ++kind) {
      kinds += fmt::format(" {}={}", simulated_kind_name(static_cast<SimulatedKind>(kind)), counts[kind]);
    }
    log.verbose(fmt::format("simulated {} events:{}", simulator->events(), kinds));
  }
  return tp::ExitCode::ok;
}

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
  Options o;
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
    tp::BatchedWriter out = tp::BatchedWriter::open(common.output, common.append);
    if (o.list) return list_probes(o, out, log);
    if (source_count(o) != 1) {
      throw tp::Error(tp::ExitCode::usage,
                      "choose one source: --probe KIND, --serial DEVICE, --tcp HOST:PORT, --file FILE or --simulate "
                      "(--list shows the probes)");
    }
    if (o.realtime && o.file.empty()) throw tp::Error(tp::ExitCode::usage, "--realtime applies to --file only");
    return capture(o, out, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("swo-capture", [&] { return run_main(argc, argv); });
}
