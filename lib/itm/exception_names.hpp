// Names of ARMv7-M exception numbers (ARMv7-M ARM B1.5.2, table B1-4).
#pragma once

#include <cstdint>
#include <string_view>

namespace tp::itm {

// "Thread", "Reset", "NMI", "HardFault", ..., "SysTick", "IRQ0".."IRQ495".
std::string_view exception_name(std::uint16_t number);

}  // namespace tp::itm
