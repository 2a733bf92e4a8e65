#include "cli/target_options.hpp"

#include <string>

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

}  // namespace tp
