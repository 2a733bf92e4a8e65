#include "swo/probe_sources.hpp"

namespace tp::swo {

namespace {

std::unique_ptr<SwoSource> open_by_kind(const usb::Context& context, const probes::ProbeInfo& probe,
                                        const ProbeSettings& settings) {
  switch (probe.kind) {
    case probes::ProbeKind::lpclink2:
      return open_lpclink2(context, probe, settings);
    case probes::ProbeKind::stlink:
      return open_stlink(context, probe, settings);
    case probes::ProbeKind::cmsis_dap:
      break;
  }
  return open_cmsis_dap(context, probe, settings);
}

}  // namespace

std::unique_ptr<SwoSource> open_probe_source(const usb::Context& context, const probes::ProbeInfo& probe,
                                             const ProbeSettings& settings) {
  auto source = open_by_kind(context, probe, settings);
  source->identify(probe.model, probe.device.serial_number);
  return source;
}

}  // namespace tp::swo
