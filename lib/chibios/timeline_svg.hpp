// A standalone SVG of a reconstructed timeline, showing what the reference tool's
// matplotlib plot shows: rows by priority then creation order (lowest priority at the
// bottom), run bars of logged threads, IN (green) and OUT (red) ticks of threads not
// logged, exit markers, the trigger line and a tick axis. Elements carry classes (row,
// run, in, out, exit, trigger, axis) so tests and style sheets can find them.
#pragma once

#include <string>

#include "chibios/timeline.hpp"

namespace tp::chibios {

struct SvgOptions {
  double width = 1400;
  double row_height = 26;
  std::optional<double> from;  // ticks; default: the whole log
  std::optional<double> to;
};

std::string render_svg(const Timeline& timeline, const SvgOptions& options = {});

}  // namespace tp::chibios
