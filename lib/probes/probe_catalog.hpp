// The USB debug probes swo-capture knows, recognised from their descriptors: the
// LPC-Link2 (its proprietary "LPC-LINK2 DATA PORT"), CMSIS-DAP v2 probes (a vendor
// interface named "...CMSIS-DAP..." with bulk endpoints) and ST-Links with trace.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "usb/usb_device.hpp"

namespace tp::probes {

enum class ProbeKind { lpclink2, cmsis_dap, stlink };

std::string_view probe_kind_name(ProbeKind kind);  // "lpclink2", "cmsis-dap", "stlink"

struct ProbeInfo {
  ProbeKind kind = ProbeKind::cmsis_dap;
  usb::DeviceInfo device;
  std::string model;         // "LPC-Link2", "CMSIS-DAP v2", "STLINK-V3", ...
  std::string capabilities;  // what it offers for SWO, for --list
};

// Classifies one device; nothing if it is not a probe with SWO that we support.
std::optional<ProbeInfo> classify_probe(const usb::DeviceInfo& device);
// Every supported probe attached (opening each USB device briefly to read its strings).
std::vector<ProbeInfo> find_probes(const usb::Context& context);

// --probe KIND|VID:PID [--serial-number SN]
struct ProbeSelector {
  std::optional<ProbeKind> kind;
  std::optional<std::uint16_t> vendor_id;
  std::optional<std::uint16_t> product_id;
  std::string serial_number;
};
// Throws Error(usage) for an unknown kind or a malformed VID:PID.
ProbeSelector parse_probe_selector(std::string_view probe, std::string serial_number);
bool matches(const ProbeSelector& selector, const ProbeInfo& probe);
// The one probe that matches; throws Error(not_found, PROBE_NOT_FOUND) for none and
// Error(usage) when several match and nothing tells them apart.
ProbeInfo select_probe(const std::vector<ProbeInfo>& probes, const ProbeSelector& selector);

// --list output.
std::string probe_text_line(const ProbeInfo& probe);
std::string probe_json_line(const ProbeInfo& probe);

}  // namespace tp::probes
