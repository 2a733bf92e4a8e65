// Capture from USB debug probes: the LPC-Link2's proprietary SWO port, CMSIS-DAP v2 and
// ST-Link. Each source configures the probe when opened and stops it again in close().
#pragma once

#include <memory>

#include "probes/cmsis_dap_protocol.hpp"
#include "probes/probe_catalog.hpp"
#include "swo/rate.hpp"
#include "swo/swo_source.hpp"

namespace tp::swo {

struct ProbeSettings {
  RateRequest rate;
  probes::cmsis_dap::Mode mode = probes::cmsis_dap::Mode::uart;  // Manchester only where the probe offers it
  int reply_timeout_ms = 1000;  // a probe that does not answer a command by then is stuck
};

// Opens, claims and configures `probe`. Throws tp::Error with the fitting exit code and
// Callisto code (PROBE_IN_USE, PERMISSION_DENIED, BAUD_RATE_ERROR, TARGET_NOT_RESPONDING).
std::unique_ptr<SwoSource> open_probe_source(const usb::Context& context, const probes::ProbeInfo& probe,
                                             const ProbeSettings& settings);

// One per probe family (lpclink2_source.cpp, cmsis_dap_source.cpp, stlink_source.cpp).
std::unique_ptr<SwoSource> open_lpclink2(const usb::Context& context, const probes::ProbeInfo& probe,
                                         const ProbeSettings& settings);
std::unique_ptr<SwoSource> open_cmsis_dap(const usb::Context& context, const probes::ProbeInfo& probe,
                                          const ProbeSettings& settings);
std::unique_ptr<SwoSource> open_stlink(const usb::Context& context, const probes::ProbeInfo& probe,
                                       const ProbeSettings& settings);

}  // namespace tp::swo
