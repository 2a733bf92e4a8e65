#include "analysis/top_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "records/record_line.hpp"

namespace tp::analysis {
namespace {

double share_of(std::uint64_t part, std::uint64_t whole) noexcept {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

RecordHead head(const LiveStats& stats, RecordKind kind) {
  return RecordHead{stats.last_time(), stats.clock(), 0, kind, source_name(RecordSource::trace_top)};
}

// "load_width", "load_first", "load": the series on the snapshot's grid (`width` 0: none).
void write_load(RecordData& data, const LoadSeries* series, std::uint64_t width) {
  if (width == 0 || series == nullptr) return;
  const LoadSeries load = series->widened_to(width);
  data.uint("load_width", load.width()).uint("load_first", load.first()).uints("load", load.bins());
}

// "hist_first", "hist": the certain durations per bucket of DurationHistogram; "p50", "p99":
// the last duration of the buckets holding them (never above max); "worst_start",
// "worst_end": where the longest was.
void write_durations(RecordData& data, const HandlerTracker::Chart* chart) {
  if (chart == nullptr || chart->durations.count() == 0) return;
  const DurationHistogram& histogram = chart->durations;
  data.uint("hist_first", histogram.first())
      .uints("hist", histogram.counts())
      .uint("p50", std::min(histogram.quantile_high(0.5), chart->worst))
      .uint("p99", std::min(histogram.quantile_high(0.99), chart->worst))
      .uint("worst_start", chart->worst_start)
      .uint("worst_end", chart->worst_end);
}

void write_handlers(OutBuffer& out, const LiveStats& stats, const HandlerTracker& tracker, std::string_view source,
                    std::size_t top, std::uint64_t load_width) {
  for (const auto& [number, entry] : tracker.heaviest(top)) {
    const HandlerTracker::Handler& handler = *entry;
    const Durations& d = handler.durations;
    RecordLine line(out, head(stats, RecordKind::top_handler));
    RecordData& data = line.data();
    data.string("source", source).uint("number", number);
    if (handler.name.empty()) {
      data.null("name");
    } else {
      data.string("name", handler.name);
    }
    data.uint("count", d.count).uint("total", d.total);
    if (d.has_certain()) {
      data.uint("min", d.min);
    } else {
      data.null("min");
    }
    data.number("avg", d.count == 0 ? 0.0 : static_cast<double>(d.total) / static_cast<double>(d.count));
    if (d.has_certain()) {
      data.uint("max", d.max);
    } else {
      data.null("max");
    }
    data.uint("max_nesting", handler.max_nesting)
        .number("share", share_of(d.total, stats.span()))
        .uint("uncertain", d.uncertain);
    write_load(data, tracker.load(number), load_width);
    if (load_width != 0) write_durations(data, tracker.chart(number));
    line.end();
  }
}

std::uint64_t uncertain_intervals(const HandlerTracker& tracker) {
  std::uint64_t uncertain = 0;
  for (const auto& entry : tracker.handlers()) uncertain += entry.second.durations.uncertain;
  return uncertain;
}

// A time in the records' clock as seconds, when the clock (with --cpu-hz for cycles) allows.
std::optional<double> seconds_of(std::uint64_t value, std::string_view clock, std::uint64_t cpu_hz) {
  if (clock == clock_name(RecordClock::ns)) return static_cast<double>(value) / 1e9;
  if (clock == clock_name(RecordClock::us)) return static_cast<double>(value) / 1e6;
  if (clock == clock_name(RecordClock::cycles) && cpu_hz != 0)
    return static_cast<double>(value) / static_cast<double>(cpu_hz);
  return std::nullopt;
}

// Seconds when the clock allows, else the clock's own units.
std::string duration_text(std::uint64_t value, std::string_view clock, std::uint64_t cpu_hz) {
  const std::optional<double> seconds = seconds_of(value, clock, cpu_hz);
  if (!seconds) return fmt::format("{} {}", value, clock.empty() ? "units" : clock);
  if (*seconds >= 1.0) return fmt::format("{:.3f} s", *seconds);
  if (*seconds >= 1e-3) return fmt::format("{:.3f} ms", *seconds * 1e3);
  return fmt::format("{:.3f} us", *seconds * 1e6);
}

// Events per second over the span, when the clock allows; "-" otherwise.
std::string rate_text(std::uint64_t count, std::uint64_t span, std::string_view clock, std::uint64_t cpu_hz) {
  const std::optional<double> seconds = seconds_of(span, clock, cpu_hz);
  if (!seconds || *seconds <= 0) return "-";
  const double rate = static_cast<double>(count) / *seconds;
  return rate >= 100 ? fmt::format("{:.0f}/s", rate) : fmt::format("{:.2f}/s", rate);
}

struct Style {
  bool colour;
  [[nodiscard]] std::string heading(std::string_view text) const {
    return colour ? fmt::format("\x1b[1;36m{}\x1b[0m", text) : std::string(text);
  }
  [[nodiscard]] std::string warning(std::string_view text) const {
    return colour ? fmt::format("\x1b[33m{}\x1b[0m", text) : std::string(text);
  }
};

void table_handlers(std::string& out, const LiveStats& stats, const HandlerTracker& tracker, std::string_view title,
                    const ReportOptions& options, const Style& style) {
  if (tracker.handlers().empty()) return;
  out += style.heading(fmt::format("\n{} (max nesting {})\n", title, tracker.max_nesting()));
  out += fmt::format("{:>5}  {:<28} {:>9} {:>9} {:>7} {:>12} {:>12} {:>12} {:>12}  {}\n", "#", "handler", "count",
                     "rate", "CPU", "total", "min", "avg", "max", "nest");
  const std::string_view clock = stats.clock();
  for (const auto& [number, entry] : tracker.heaviest(options.top)) {
    const HandlerTracker::Handler& handler = *entry;
    const Durations& d = handler.durations;
    const auto avg = d.count == 0 ? 0 : d.total / d.count;
    out += fmt::format(
        "{:>5}  {:<28.28} {:>9} {:>9} {:>6.2f}% {:>12} {:>12} {:>12} {:>12}  {}{}\n", number,
        handler.name.empty() ? "-" : handler.name, d.count, rate_text(d.count, stats.span(), clock, options.cpu_hz),
        100.0 * share_of(d.total, stats.span()), duration_text(d.total, clock, options.cpu_hz),
        d.has_certain() ? duration_text(d.min, clock, options.cpu_hz) : "?", duration_text(avg, clock, options.cpu_hz),
        d.has_certain() ? duration_text(d.max, clock, options.cpu_hz) : "?", handler.max_nesting,
        d.uncertain != 0 ? style.warning(fmt::format("  ({} uncertain)", d.uncertain)) : "");
  }
}

// A frame of a folded stack: ';' separates frames and the last ' ' the count.
std::string frame_name(std::string_view name) {
  std::string frame(name);
  for (char& c : frame) {
    if (c == ';') c = ':';
  }
  return frame;
}

}  // namespace

std::string folded_stacks(const LiveStats& stats) {
  std::map<std::string, std::uint64_t> stacks;
  for (const auto& [place, samples] : stats.places().samples()) {
    std::string stack = place.task.empty() ? std::string() : frame_name(place.task) + ';';
    stack += frame_name(place.function);
    stacks[stack] += samples;
  }
  std::string out;
  for (const auto& [stack, samples] : stacks) out += fmt::format("{} {}\n", stack, samples);
  return out;
}

std::string callgrind_profile(const LiveStats& stats) {
  // Callgrind Format Specification (valgrind docs): a header, then per "fl=" file and "fn="
  // function, "line cost" lines; the places are already ordered by task, function, file, line.
  std::map<std::pair<std::string, std::string>, std::map<std::uint32_t, std::uint64_t>> costs;
  std::uint64_t total = 0;
  for (const auto& [place, samples] : stats.places().samples()) {
    costs[{place.file.empty() ? "???" : place.file, place.function}][place.line] += samples;
    total += samples;
  }
  std::string out = fmt::format(
      "# callgrind format\nversion: 1\ncreator: trace-top (tracepipe)\npositions: line\nevents: Samples\n"
      "summary: {}\n",
      total);
  for (const auto& [where, lines] : costs) {
    out += fmt::format("\nfl={}\nfn={}\n", where.first, where.second);
    for (const auto& [line, samples] : lines) out += fmt::format("{} {}\n", line, samples);
  }
  return out;
}

namespace {

// The shown tasks' series up to the newest record (none without options.load).
std::map<std::uint32_t, LoadSeries> task_loads(const LiveStats& stats, const ReportOptions& options,
                                               const std::vector<std::pair<std::uint32_t, TaskTracker::Task>>& tasks) {
  std::map<std::uint32_t, LoadSeries> loads;
  if (!options.load) return loads;
  for (const auto& entry : tasks) {
    if (auto load = stats.tasks().load_until(entry.first, stats.last_time()))
      loads.emplace(entry.first, std::move(*load));
  }
  return loads;
}

// The grid all the snapshot's series are drawn on: the widest of theirs (0 without load).
std::uint64_t load_width(const LiveStats& stats, const ReportOptions& options,
                         const std::map<std::uint32_t, LoadSeries>& task_loads, const LoadSeries& idle) {
  if (!options.load) return 0;
  std::uint64_t width = idle.width();
  for (const auto& entry : task_loads) width = std::max(width, entry.second.width());
  for (const HandlerTracker* tracker : {&stats.exceptions(), &stats.isrs()}) {
    for (const auto& entry : tracker->heaviest(options.top)) {
      if (const LoadSeries* load = tracker->load(entry.first)) width = std::max(width, load->width());
    }
  }
  return width;
}

}  // namespace

void write_snapshot(OutBuffer& out, const LiveStats& stats, const ReportOptions& options, bool final) {
  const auto tasks = stats.tasks().heaviest_until(stats.last_time(), options.top);
  const LoadSeries idle_load = stats.tasks().idle_load_until(stats.last_time());
  const std::map<std::uint32_t, LoadSeries> loads = task_loads(stats, options, tasks);
  const std::uint64_t width = load_width(stats, options, loads, idle_load);
  {
    RecordLine line(out, head(stats, RecordKind::top_summary));
    line.data()
        .uint("records", stats.records())
        .uint("span", stats.span())
        .uint("pc_samples", stats.profile().samples())
        .uint("sleep_samples", stats.profile().sleeping())
        .uint("overflows", stats.overflows())
        .uint("resyncs", stats.resyncs())
        .uint("time_anomalies", stats.time_anomalies())
        .uint("other_clock_records", stats.other_clock_records())
        .uint("uncertain", uncertain_intervals(stats.exceptions()) + uncertain_intervals(stats.isrs()))
        .boolean("final", final);
    line.end();
  }
  std::uint64_t rank = 0;
  for (const Profile::Entry& entry : stats.profile().top(options.top)) {
    RecordLine line(out, head(stats, RecordKind::top_function));
    line.data()
        .uint("rank", ++rank)
        .string("function", entry.function)
        .uint("samples", entry.samples)
        .number("share", share_of(entry.samples, stats.profile().samples()));
    line.end();
  }
  write_handlers(out, stats, stats.exceptions(), "exception", options.top, width);
  write_handlers(out, stats, stats.isrs(), "isr", options.top, width);
  if (!stats.tasks().seen()) return;
  for (const auto& [number, task] : tasks) {
    RecordLine line(out, head(stats, RecordKind::top_task));
    RecordData& data = line.data();
    data.uint("task", number);
    if (task.name.empty()) {
      data.null("name");
    } else {
      data.string("name", task.name);
    }
    data.uint("time", task.time)
        .number("share", share_of(task.time, stats.span()))
        .uint("uncertain_time", task.uncertain_time);
    const auto load = loads.find(number);
    write_load(data, load == loads.end() ? nullptr : &load->second, width);
    line.end();
  }
  RecordLine idle(out, head(stats, RecordKind::top_task));
  idle.data()
      .null("task")
      .string("name", "idle")
      .uint("time", stats.tasks().idle_until(stats.last_time()))
      .number("share", share_of(stats.tasks().idle_until(stats.last_time()), stats.span()))
      .uint("uncertain_time", 0);
  write_load(idle.data(), &idle_load, width);
  idle.end();
}

std::string render_table(const LiveStats& stats, const ReportOptions& options) {
  const Style style{options.colour};
  const std::string_view clock = stats.clock();
  std::string out = style.heading("trace-top");
  out += fmt::format("  {} records over {}", stats.records(), duration_text(stats.span(), clock, options.cpu_hz));
  if (stats.overflows() != 0 || stats.resyncs() != 0) {
    out += style.warning(fmt::format("  {} overflows, {} resyncs: intervals across them are uncertain",
                                     stats.overflows(), stats.resyncs()));
  }
  if (stats.time_anomalies() != 0) {
    out += style.warning(
        fmt::format("  {} records earlier than one before them: taken at the latest time", stats.time_anomalies()));
  }
  if (stats.other_clock_records() != 0) {
    out += style.warning(fmt::format("  {} records of another clock than {}: their times do not compare",
                                     stats.other_clock_records(), stats.clock()));
  }
  out += '\n';
  const Profile& profile = stats.profile();
  if (profile.samples() != 0) {
    out += style.heading(fmt::format("\nPC samples: {} ({:.2f}% asleep, {})\n", profile.samples(),
                                     100.0 * share_of(profile.sleeping(), profile.samples()),
                                     rate_text(profile.samples(), stats.span(), clock, options.cpu_hz)));
    for (const Profile::Entry& entry : profile.top(options.top)) {
      out += fmt::format("{:>7.2f}%  {:>9}  {}\n", 100.0 * share_of(entry.samples, profile.samples()), entry.samples,
                         entry.function);
    }
  }
  table_handlers(out, stats, stats.exceptions(), "Exceptions", options, style);
  table_handlers(out, stats, stats.isrs(), "ISRs (TaskIsr)", options, style);
  if (stats.tasks().seen()) {
    out += style.heading("\nTasks\n");
    for (const auto& [number, task] : stats.tasks().heaviest_until(stats.last_time(), options.top)) {
      // How much of it spanned a loss: the table says how much of the time is uncertain.
      const std::string uncertain =
          task.uncertain_time == 0
              ? std::string()
              : style.warning(
                    fmt::format("  ({} uncertain)", duration_text(task.uncertain_time, clock, options.cpu_hz)));
      out += fmt::format("{:>7.2f}%  task {:<6} {:<24} {}{}\n", 100.0 * share_of(task.time, stats.span()), number,
                         task.name, duration_text(task.time, clock, options.cpu_hz), uncertain);
    }
    out +=
        fmt::format("{:>7.2f}%  idle\n", 100.0 * share_of(stats.tasks().idle_until(stats.last_time()), stats.span()));
  }
  return out;
}

}  // namespace tp::analysis
