#include "targets/target_opener.hpp"

#include <memory>
#include <optional>

#include "core/error.hpp"
#include "dap/dap_memory.hpp"
#include "gdb/rsp_client.hpp"
#include "net/tcp_connect.hpp"
#include "probes/probe_catalog.hpp"
#include "usb/usb_device.hpp"

namespace tp {

target::TargetOpener target_opener(const target::TargetLocation& where) {
  auto usb = std::make_shared<std::optional<usb::Context>>();
  return [where, usb]() -> std::unique_ptr<target::TargetMemory> {
    const int timeout_ms = static_cast<int>(where.timeout_s * 1000);
    if (!where.gdb_server.empty()) {
      return gdb::RspClient::connect(net::parse_tcp_endpoint(where.gdb_server, "--gdb-server"), timeout_ms);
    }
    if (where.attach.empty()) {
      throw Error(ExitCode::usage, "say where the target is: --gdb-server HOST:PORT or --attach CHIP");
    }
    if (!*usb) usb->emplace();
    return dap::attach_cmsis_dap(**usb, {where.attach, probes::parse_probe_selector(where.probe, where.serial_number),
                                         where.swd_hz, timeout_ms});
  };
}

}  // namespace tp
