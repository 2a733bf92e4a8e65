#include "probes/probe_catalog.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/json_writer.hpp"
#include "core/number.hpp"
#include "probes/lpclink2_protocol.hpp"
#include "probes/stlink_protocol.hpp"

namespace tp::probes {
namespace {

constexpr std::uint8_t vendor_specific_class = 0xff;

const usb::InterfaceInfo* cmsis_dap_v2_interface(const usb::DeviceInfo& device) {
  for (const auto& interface : device.interfaces) {
    const bool bulk = std::any_of(interface.endpoints.begin(), interface.endpoints.end(),
                                  [](const usb::EndpointInfo& e) { return e.type == usb::TransferType::bulk; });
    if (interface.class_code == vendor_specific_class && bulk &&
        interface.name.find("CMSIS-DAP") != std::string::npos) {
      return &interface;
    }
  }
  return nullptr;
}

bool has_interface_named(const usb::DeviceInfo& device, std::string_view name) {
  return std::any_of(device.interfaces.begin(), device.interfaces.end(),
                     [&](const usb::InterfaceInfo& i) { return i.name == name; });
}

std::uint16_t parse_hex16(std::string_view text, std::string_view whole) {
  const auto value = parse_whole_number<std::uint16_t>(text, 16);
  if (!value) throw Error(ExitCode::usage, fmt::format("'{}' is not VID:PID (hex, e.g. 1fc9:0090)", whole));
  return *value;
}

}  // namespace

std::string_view probe_kind_name(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::lpclink2:
      return "lpclink2";
    case ProbeKind::cmsis_dap:
      return "cmsis-dap";
    case ProbeKind::stlink:
      return "stlink";
  }
  return "cmsis-dap";
}

std::optional<ProbeInfo> classify_probe(const usb::DeviceInfo& device) {
  if (device.vendor_id == lpclink2::vendor_id && device.product_id == lpclink2::product_id &&
      (has_interface_named(device, lpclink2::interface_name) || device.open_error)) {
    return ProbeInfo{ProbeKind::lpclink2, device, "LPC-Link2", "SWO UART (proprietary data port)"};
  }
  if (device.vendor_id == stlink::vendor_id) {
    if (const auto model = stlink::model_for(device.product_id)) {
      return ProbeInfo{ProbeKind::stlink, device, std::string(model->name),
                       fmt::format("SWO NRZ up to {} bit/s", stlink::max_trace_hz(model->generation))};
    }
  }
  if (const auto* interface = cmsis_dap_v2_interface(device)) {
    const auto bulk_in =
        std::count_if(interface->endpoints.begin(), interface->endpoints.end(),
                      [](const usb::EndpointInfo& e) { return e.is_in() && e.type == usb::TransferType::bulk; });
    return ProbeInfo{
        ProbeKind::cmsis_dap, device, "CMSIS-DAP v2",
        bulk_in >= 2 ? "SWO streaming endpoint (modes per DAP_Info)" : "SWO via DAP_SWO_Data (modes per DAP_Info)"};
  }
  return std::nullopt;
}

std::vector<ProbeInfo> find_probes(const usb::Context& context) {
  std::vector<ProbeInfo> probes;
  for (const auto& device : context.list([](std::uint16_t, std::uint16_t) { return true; })) {
    if (auto probe = classify_probe(device)) probes.push_back(std::move(*probe));
  }
  return probes;
}

ProbeSelector parse_probe_selector(std::string_view probe, std::string serial_number) {
  ProbeSelector selector;
  selector.serial_number = std::move(serial_number);
  if (probe == "lpclink2") {
    selector.kind = ProbeKind::lpclink2;
  } else if (probe == "cmsis-dap") {
    selector.kind = ProbeKind::cmsis_dap;
  } else if (probe == "stlink") {
    selector.kind = ProbeKind::stlink;
  } else if (probe != "auto") {
    const auto colon = probe.find(':');
    if (colon == std::string_view::npos) {
      throw Error(ExitCode::usage,
                  fmt::format("--probe '{}': expected lpclink2, cmsis-dap, stlink, auto or VID:PID", probe));
    }
    selector.vendor_id = parse_hex16(probe.substr(0, colon), probe);
    selector.product_id = parse_hex16(probe.substr(colon + 1), probe);
  }
  return selector;
}

bool matches(const ProbeSelector& selector, const ProbeInfo& probe) {
  return (!selector.kind || *selector.kind == probe.kind) &&
         (!selector.vendor_id || *selector.vendor_id == probe.device.vendor_id) &&
         (!selector.product_id || *selector.product_id == probe.device.product_id) &&
         (selector.serial_number.empty() || selector.serial_number == probe.device.serial_number);
}

ProbeInfo select_probe(const std::vector<ProbeInfo>& probes, const ProbeSelector& selector) {
  std::vector<const ProbeInfo*> found;
  for (const auto& probe : probes) {
    if (matches(selector, probe)) found.push_back(&probe);
  }
  if (found.empty()) {
    std::string what = selector.kind ? std::string(probe_kind_name(*selector.kind)) : std::string("supported");
    if (selector.vendor_id) what = fmt::format("{:04x}:{:04x}", *selector.vendor_id, *selector.product_id);
    if (!selector.serial_number.empty()) what += fmt::format(" with serial number {}", selector.serial_number);
    throw Error(
        ExitCode::not_found,
        fmt::format("no {} probe found ({} probe(s) attached; `swo-capture --list` shows them)", what, probes.size()),
        ErrorCode::probe_not_found);
  }
  if (found.size() > 1) {
    std::string serials;
    for (const auto* probe : found) serials += fmt::format(" {}", probe->device.serial_number);
    throw Error(ExitCode::usage, fmt::format("{} probes match; choose one with --serial-number (serial numbers:{})",
                                             found.size(), serials));
  }
  if (found.front()->device.open_error) {
    throw Error(ExitCode::permission_denied, *found.front()->device.open_error, ErrorCode::permission_denied);
  }
  return *found.front();
}

std::string probe_text_line(const ProbeInfo& probe) {
  const auto& d = probe.device;
  return fmt::format("{:<9} {}  serial {:<16} {:<14} {} ({}){}\n", probe_kind_name(probe.kind), d.id(),
                     d.serial_number.empty() ? "-" : d.serial_number, d.location(), probe.model, probe.capabilities,
                     d.open_error ? fmt::format(" [{}]", *d.open_error) : std::string{});
}

std::string probe_json_line(const ProbeInfo& probe) {
  const auto& d = probe.device;
  std::string line;
  JsonWriter json(line);
  json.begin_object();
  json.key("kind").string(probe_kind_name(probe.kind));
  json.key("vid_pid").string(d.id());
  json.key("serial_number").string(d.serial_number);
  json.key("bus").uint(d.bus);
  json.key("address").uint(d.address);
  json.key("manufacturer").string(d.manufacturer);
  json.key("product").string(d.product);
  json.key("model").string(probe.model);
  json.key("swo").string(probe.capabilities);
  if (d.open_error) json.key("error").string(*d.open_error);
  json.end_object();
  line += '\n';
  return line;
}

}  // namespace tp::probes
