// SEGGER_SYSVIEW_PrintfHost and friends send the format string and its arguments (each as a
// U32) and leave the formatting to the host: this is that formatting. The target takes one
// va_arg per '%' in the format (SEGGER_SYSVIEW.c _VPrintHost: "%%" counts twice), in order,
// so the k-th conversion's argument is the k-th sent, as in C's printf; the ones "%%" added
// are read past the caller's arguments and come last, unused.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tp::sysview {

// Appends the formatted text to `out`. Conversions: d i u x X o c p s (a %s argument is
// the string's target address: the target cannot send the string) and %%; flags - 0 + space
// #, width, precision, and the l, h, ll, z length modifiers (ignored: every argument is a
// U32). A conversion without an argument prints as it is written.
void format_host(std::string_view format, std::span<const std::uint32_t> arguments, std::string& out);

}  // namespace tp::sysview
