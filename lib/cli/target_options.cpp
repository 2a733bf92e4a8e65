#include "cli/target_options.hpp"

#include <optional>
#include <string>

#include "dap/dap_memory.hpp"
#include "gdb/rsp_client.hpp"
#include "net/tcp_connect.hpp"
#include "probes/probe_catalog.hpp"
#include "usb/usb_device.hpp"

namespace tp {

void add_target_options(CLI::App& app, target::TargetLocation& where, const TargetOptionsHelp& help) {
  app.add_option(std::string(help.gdb_server_names), where.gdb_server, std::string(help.gdb_server))
      ->type_name("HOST:PORT");
  app.add_option("-a,--attach", where.attach, std::string(help.attach))->type_name("CHIP");
  app.add_option("--timeout", where.timeout_s, "Seconds to wait for the server or probe")
      ->default_val(where.timeout_s)
      ->check(CLI::Range(0.05, 600.0));
  app.add_option("--probe", where.probe, "With --attach: cmsis-dap or VID:PID")->default_val(where.probe);
  app.add_option("--serial-number", where.serial_number, "With --attach: the probe's serial number");
  app.add_option("--swd-clock", where.swd_hz, "With --attach: SWD clock in Hz")->default_val(where.swd_hz);
}

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
