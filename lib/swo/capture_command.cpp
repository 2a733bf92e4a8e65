#include "swo/capture_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "core/quantity.hpp"
#include "probes/probe_catalog.hpp"
#include "swo/capture_loop.hpp"
#include "swo/probe_sources.hpp"
#include "swo/reconnecting_source.hpp"
#include "swo/simulator_source.hpp"
#include "swo/stream_sources.hpp"

namespace tp::swo {
namespace {

using namespace tp::probes;

constexpr std::uint64_t default_simulator_rate = 200'000;  // a 2 Mbit/s SWO line

int source_count(const CaptureOptions& o) {
  return static_cast<int>(!o.probe.empty()) + static_cast<int>(!o.serial_device.empty()) +
         static_cast<int>(!o.tcp.empty()) + static_cast<int>(!o.file.empty()) + static_cast<int>(o.simulate);
}

ProbeSettings probe_settings(const CaptureOptions& o) {
  ProbeSettings settings;
  settings.rate = {o.baud, o.tolerance_percent / 100.0, o.allow_approx};
  settings.mode = o.swo_mode == "manchester" ? probes::cmsis_dap::Mode::manchester : probes::cmsis_dap::Mode::uart;
  settings.reply_timeout_ms = o.reply_timeout_ms;
  return settings;
}

// Builds the factory of the chosen source (called again by --reconnect).
ReconnectingSource::Factory source_factory(const CaptureOptions& o, std::uint64_t max_bytes,
                                           const std::shared_ptr<usb::Context>& usb) {
  if (o.simulate) {
    return [&o, max_bytes]() -> std::unique_ptr<SwoSource> {
      std::unique_ptr<BatchedWriter> events;
      if (!o.sim_events.empty()) events = std::make_unique<BatchedWriter>(BatchedWriter::open(o.sim_events, false));
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
    const net::TcpEndpoint endpoint = net::parse_tcp_endpoint(o.tcp, "--tcp");
    return [endpoint, &o] { return std::make_unique<TcpSource>(endpoint, o.reply_timeout_ms); };
  }
  const ProbeSelector selector = parse_probe_selector(o.probe, o.serial_number);
  return [selector, usb, settings = probe_settings(o)] {
    return open_probe_source(*usb, select_probe(find_probes(*usb), selector), settings);
  };
}

}  // namespace

void check_capture_options(const CaptureOptions& o) {
  if (o.list) return;
  if (source_count(o) != 1) {
    throw Error(ExitCode::usage,
                "choose one source: --probe KIND, --serial DEVICE, --tcp HOST:PORT, --file FILE or --simulate "
                "(--list shows the probes)");
  }
  if (o.realtime && o.file.empty()) throw Error(ExitCode::usage, "--realtime applies to --file only");
  if (!o.max_bytes.empty() && parse_byte_count(o.max_bytes) == 0) {
    throw Error(ExitCode::usage, "--max-bytes 0 would capture nothing (leave it out for no limit)");
  }
  if (!o.duration.empty() && parse_duration(o.duration) == std::chrono::milliseconds(0)) {
    throw Error(ExitCode::usage, "--duration 0 would capture nothing (leave it out for no limit)");
  }
}

ExitCode list_probes(const CaptureOptions& o, BatchedWriter& out, const Logger& log) {
  const usb::Context usb;
  const auto probes = find_probes(usb);
  for (const auto& probe : probes)
    out.write(o.list_format == "ndjson" ? probe_json_line(probe) : probe_text_line(probe));
  if (probes.empty()) log.info("no supported probe attached (LPC-Link2, CMSIS-DAP v2, ST-Link)");
  out.flush();
  return ExitCode::ok;
}

ExitCode capture(const CaptureOptions& o, BatchedWriter& out, const Logger& log) {
  const CaptureLimits limits{o.max_bytes.empty() ? 0 : parse_byte_count(o.max_bytes),
                             o.duration.empty() ? std::chrono::milliseconds(0) : parse_duration(o.duration)};
  const auto usb = o.probe.empty() ? nullptr : std::make_shared<usb::Context>();
  auto factory = source_factory(o, limits.max_bytes, usb);
  std::unique_ptr<SwoSource> source;
  if (o.reconnect) {
    source = std::make_unique<ReconnectingSource>(std::move(factory),
                                                  [&log](const std::string& notice) { log.warn(notice); });
  } else {
    source = factory();
  }
  log.verbose(fmt::format("capturing from {}", source->description()));
  log.facts("source facts", facts_json(source->facts()));
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
  return ExitCode::ok;
}

}  // namespace tp::swo
