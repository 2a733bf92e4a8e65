#include "itm/exception_names.hpp"

#include <array>
#include <string>

namespace tp::itm {
namespace {

constexpr std::size_t exception_count = 512;  // the 9-bit number of an exception trace packet

std::array<std::string, exception_count> make_names() {
  std::array<std::string, exception_count> names;
  constexpr std::array<std::string_view, 16> system = {
      "Thread",    "Reset",     "NMI",        "HardFault", "MemManage",    "BusFault",   "UsageFault", "Reserved7",
      "Reserved8", "Reserved9", "Reserved10", "SVCall",    "DebugMonitor", "Reserved13", "PendSV",     "SysTick"};
  for (std::size_t i = 0; i < system.size(); ++i) names[i] = system[i];
  for (std::size_t i = system.size(); i < exception_count; ++i) names[i] = "IRQ" + std::to_string(i - 16);
  return names;
}

}  // namespace

std::string_view exception_name(std::uint16_t number) {
  static const auto names = make_names();
  return names[number % exception_count];
}

}  // namespace tp::itm
