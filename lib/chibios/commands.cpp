#include "chibios/commands.hpp"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include "chibios/records.hpp"
#include "chibios/save_file.hpp"
#include "chibios/shell_session.hpp"
#include "chibios/timeline_svg.hpp"
#include "chibios/watch_stitcher.hpp"
#include "core/clock.hpp"
#include "core/quantity.hpp"
#include "core/signals.hpp"
#include "core/text_file.hpp"

namespace tp::chibios {
namespace {

Format format_of(const std::string& name) {
  return name == "csv" ? Format::csv : name == "text" ? Format::text : Format::ndjson;
}

ShellSession open_session(const PullOptions& o) {
  if (o.port.empty()) throw Error(ExitCode::usage, "--port DEVICE is required (e.g. --port /dev/ttyACM0)");
  ShellSession session(SerialPort::open(o.port, o.baud),
                       std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_s * 1000)));
  session.synchronise();
  return session;
}

struct Pulled {
  ThreadList list;
  TimestampLog log;
  SavedData saved;
};

Pulled pull(ShellSession& session) {
  Pulled pulled;
  pulled.saved.list_lines = session.run("threads_list");
  pulled.saved.timestamp_lines = session.run("threads_timestamps");
  pulled.list = parse_threads_list(pulled.saved.list_lines);
  pulled.log = parse_threads_timestamps(pulled.saved.timestamp_lines);
  return pulled;
}

void write_outputs(const PullOptions& o, const Timeline& timeline, SavedData saved) {
  if (!o.svg.empty()) write_text_file(o.svg, render_svg(timeline));
  if (!o.save.empty()) {
    // The original script's view: absolute ticks on x, 10 units per thread row on y.
    saved.xmin = timeline.start;
    saved.xmax = timeline.end;
    saved.ymin = 0;
    saved.ymax = 10.0 * static_cast<double>(timeline.threads.size() + 1);
    write_text_file(o.save, format_save(saved));
  }
}

// --load to NDJSON or CSV: the log is replayed as it is read, in constant memory.
ExitCode stream_loaded_timeline(const PullOptions& o, BatchedWriter& out, const Logger& log) {
  std::ifstream in(o.load, std::ios::binary);
  if (!in) throw Error(ExitCode::not_found, fmt::format("{}: cannot open", o.load));
  const RecordContext context{0, o.tick_hz, 0};
  const bool csv = o.format == "csv";
  std::optional<TimelineReplay> replay;
  std::string buffer;
  const auto flush_some = [&] {
    if (buffer.size() < (1U << 16U)) return;
    out.write(buffer);
    buffer.clear();
  };
  TimelineReplay::Sink sink;
  if (csv) {
    buffer = runs_csv_header;
    sink.on_run = [&](const TimelineThread& thread, const Run& run) {
      append_run_row(buffer, thread, run, context);
      flush_some();
    };
  } else {
    sink.on_switch = [&](const Switch& change) {
      append_switch_record(buffer, change, replay->threads(), context);
      flush_some();
    };
  }
  std::uint64_t warnings = 0;
  sink.on_warning = [&](const std::string& warning) {
    if (++warnings <= 10) log.warn(warning);
  };
  stream_save(
      in,
      [&](const SavedData& saved, std::optional<std::uint32_t>) {
        const ThreadList list = parse_threads_list(saved.list_lines);
        if (!list.timestamps_enabled) {
          throw Error(ExitCode::unsupported, "the saved threads_list has no deleted list: timestamps were disabled");
        }
        replay.emplace(list, sink, o.time_bits);
      },
      [&](const SwitchRecord& record) { replay->feed(record); });
  if (replay) replay->finish();
  out.write(buffer);
  if (warnings > 10) log.warn(fmt::format("{} records did not fit the thread lists", warnings));
  return ExitCode::ok;
}

ExitCode timeline_command(const PullOptions& o, BatchedWriter& out, const Logger& log) {
  if (!o.load.empty() && o.svg.empty() && o.save.empty() && o.format != "text") {
    return stream_loaded_timeline(o, out, log);
  }
  Pulled pulled;
  if (!o.load.empty()) {
    pulled.saved = parse_save(read_text_file(o.load));
    pulled.list = parse_threads_list(pulled.saved.list_lines);
    pulled.log = parse_threads_timestamps(pulled.saved.timestamp_lines);
  } else {
    ShellSession session = open_session(o);
    pulled = pull(session);
  }
  if (!pulled.list.timestamps_enabled) {
    throw Error(ExitCode::unsupported, "the firmware's threads_list has no deleted list: timestamps are disabled");
  }
  const Timeline timeline = reconstruct(pulled.list, pulled.log, o.time_bits);
  for (const std::string& warning : timeline.warnings) log.warn(warning);
  out.write(format_timeline(timeline, format_of(o.format), RecordContext{0, o.tick_hz, 0}));
  write_outputs(o, timeline, pulled.saved);
  log.verbose(fmt::format("{} threads, {} switches", timeline.threads.size(), timeline.switches.size()));
  return ExitCode::ok;
}

ExitCode watch_command(const PullOptions& o, BatchedWriter& out, const Logger& log) {
  const auto period = parse_duration(o.every);
  if (o.format != "ndjson") throw Error(ExitCode::usage, "watch streams NDJSON records only (--format ndjson)");
  ShellSession session = open_session(o);
  WatchStitcher stitcher(1ULL << o.time_bits);
  while (stop_requested() == 0) {
    const auto started = std::chrono::steady_clock::now();
    const Pulled pulled = pull(session);
    const Timeline timeline = reconstruct(pulled.list, pulled.log, o.time_bits);
    const WatchStitcher::Step step = stitcher.next(pulled.log.records, timeline);
    if (step.gap)
      log.warn("the switch log was cleared or overflowed between two pulls: there is a gap in the timeline");
    if (step.first < timeline.switches.size()) {
      out.write(format_timeline(timeline, Format::ndjson, RecordContext{0, o.tick_hz, step.tick_offset}, step.first));
    }
    out.flush();
    while (stop_requested() == 0 && std::chrono::steady_clock::now() - started < period) {
      if (out.reader_gone()) throw BrokenPipe();  // `watch | head`: head is done, so are we
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return ExitCode::ok;
}

ExitCode simple_command(const PullOptions& o, std::string_view name, BatchedWriter& out) {
  ShellSession session = open_session(o);
  const RecordContext context{monotonic_us(), o.tick_hz, 0};
  const Format format = format_of(o.format);
  if (name == "stat") {
    out.write(format_stat(parse_threads_stat(session.run("threads_stat")), format, context));
  } else if (name == "uc") {
    out.write(format_usage(parse_threads_uc(session.run("threads_uc")), format, context));
  } else if (name == "list") {
    out.write(format_list(parse_threads_list(session.run("threads_list")), format, context));
  } else if (name == "timestamps") {
    out.write(format_log(parse_threads_timestamps(session.run("threads_timestamps")), format, context));
  } else if (name == "trigger") {
    out.write(format_trigger(parse_trigger_reply(session.run("threads_timestamps_trigger")), format, context));
  } else {
    parse_run_reply(session.run("threads_timestamps_run"));
  }
  return ExitCode::ok;
}

}  // namespace

ExitCode run_command(const PullOptions& o, std::string_view command, BatchedWriter& out, const Logger& log) {
  try {
    ExitCode code = ExitCode::ok;
    if (command == "timeline") {
      code = timeline_command(o, out, log);
    } else if (command == "watch") {
      code = watch_command(o, out, log);
    } else {
      code = simple_command(o, command, out);
      if (command == "run") log.info("run mode: the switch log was cleared and records again");
    }
    out.flush();
    return code;
  } catch (const ShellError& error) {
    out.flush();
    throw Error(error.kind() == ShellError::Kind::malformed ? ExitCode::bad_input : ExitCode::unsupported,
                error.what());
  }
}

}  // namespace tp::chibios
