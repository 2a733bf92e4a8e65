#include "chibios/timeline_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tp::chibios {

namespace {

std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// 1, 2 or 5 times a power of ten: about `count` ticks over `span`.
double tick_step(double span, int count) {
  const double raw = span / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
}

}  // namespace

std::string render_svg(const Timeline& timeline, const SvgOptions& options) {
  std::vector<const TimelineThread*> rows;
  for (const auto& thread : timeline.threads) rows.push_back(&thread);
  // Bottom to top: priority, then creation order (the reference plot's order).
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return a->prio < b->prio; });
  const double label_width = 230;
  const double top = 30;
  const double axis_height = 40;
  const double height = top + options.row_height * static_cast<double>(rows.size()) + axis_height;
  const double from = options.from.value_or(timeline.start);
  const double to = std::max(options.to.value_or(timeline.end), from + 1);
  const double plot_width = options.width - label_width - 20;
  const auto x = [&](double t) { return label_width + (t - from) / (to - from) * plot_width; };
  const auto row_y = [&](std::size_t index) {  // top of the row for rows[index] (index 0 at the bottom)
    return top + options.row_height * static_cast<double>(rows.size() - 1 - index);
  };

  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="12">)"
      "\n<style>.run{{fill:#3b7dd8}}.in{{fill:#2ca02c}}.out{{fill:#d62728}}.exit{{stroke:#d62728;stroke-width:3}}"
      ".trigger{{stroke:#ff0000;stroke-width:2}}.axis{{stroke:#555}}.grid{{stroke:#ddd}}.label{{fill:#222}}</style>\n"
      R"(<rect width="100%" height="100%" fill="white"/>)"
      "\n<text x=\"{2}\" y=\"18\" font-size=\"14\">ChibiOS threads timeline: ticks {3:.0f} to {4:.0f}{5}</text>\n",
      options.width, height, label_width, from, to,
      timeline.trigger ? fmt::format(", trigger at {:.0f}", *timeline.trigger) : std::string{});

  // Tick axis and grid.
  const double bottom = top + options.row_height * static_cast<double>(rows.size());
  const double step = tick_step(to - from, 10);
  svg += fmt::format(R"(<g class="axis-group"><line class="axis" x1="{}" y1="{}" x2="{}" y2="{}"/>)", label_width,
                     bottom, label_width + plot_width, bottom);
  const double first_tick = std::ceil(from / step) * step;
  const auto ticks = static_cast<int>(std::floor((to - first_tick) / step));
  for (int i = 0; i <= ticks; ++i) {
    const double t = first_tick + step * static_cast<double>(i);
    svg += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}"/>)", x(t), top, bottom);
    svg += fmt::format(R"(<line class="axis" x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}"/>)", x(t), bottom, bottom + 5);
    svg +=
        fmt::format(R"(<text class="label" x="{:.1f}" y="{}" text-anchor="middle">{:g}</text>)", x(t), bottom + 18, t);
  }
  svg += fmt::format(R"(<text class="label" x="{}" y="{}" text-anchor="middle">system ticks</text></g>)",
                     label_width + plot_width / 2, bottom + 34);
  svg += "\n";

  for (std::size_t index = 0; index < rows.size(); ++index) {
    const TimelineThread& thread = *rows[index];
    const double y = row_y(index);
    svg += fmt::format(R"(<g class="row" data-thread="{}" data-name="{}" data-logged="{}">)", thread.id,
                       escape(thread.name), thread.logged ? "yes" : "no");
    svg += fmt::format(R"(<text class="label" x="6" y="{:.1f}">{} (prio {}{})</text>)", y + options.row_height * 0.65,
                       escape(thread.name), thread.prio, thread.logged ? "" : ", not logged");
    if (thread.logged) {
      for (const Run& run : thread.runs) {
        if (run.end < from || run.start > to) continue;
        const double x0 = x(std::max(run.start, from));
        const double x1 = x(std::min(run.end, to));
        svg += fmt::format(R"(<rect class="run" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{:.1f}"/>)", x0, y + 4,
                           std::max(0.5, x1 - x0), options.row_height - 8);
      }
    } else {
      for (const double t : thread.ins) {
        if (t >= from && t <= to) {
          svg += fmt::format(R"(<rect class="in" x="{:.2f}" y="{:.1f}" width="2" height="{:.1f}"/>)", x(t),
                             y + options.row_height / 2 - 1, options.row_height / 2 - 4);
        }
      }
      for (const double t : thread.outs) {
        if (t >= from && t <= to) {
          svg += fmt::format(R"(<rect class="out" x="{:.2f}" y="{:.1f}" width="2" height="{:.1f}"/>)", x(t) - 2, y + 4,
                             options.row_height / 2 - 4);
        }
      }
    }
    if (thread.exit_time && *thread.exit_time >= from && *thread.exit_time <= to) {
      svg += fmt::format(R"(<line class="exit" x1="{0:.2f}" y1="{1:.1f}" x2="{0:.2f}" y2="{2:.1f}"/>)",
                         x(*thread.exit_time), y, y + options.row_height);
    }
    svg += "</g>\n";
  }
  if (timeline.trigger && *timeline.trigger >= from && *timeline.trigger <= to) {
    svg += fmt::format(R"(<line class="trigger" x1="{0:.2f}" y1="{1}" x2="{0:.2f}" y2="{2}"/>)", x(*timeline.trigger),
                       top, bottom);
    svg += "\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace tp::chibios
