// chibi-pull: ChibiOS thread statistics and timelines over the threads_utilities shell.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "chibios/records.hpp"
#include "chibios/save_file.hpp"
#include "chibios/shell_session.hpp"
#include "chibios/timeline_svg.hpp"
#include "core/batched_writer.hpp"
#include "core/cli.hpp"
#include "core/clock.hpp"
#include "core/quantity.hpp"
#include "core/signals.hpp"
#include "core/text_file.hpp"

namespace {

using namespace tp::chibios;

struct Options {
  std::string port;
  std::uint32_t baud = 115200;
  double timeout_s = 5;
  std::string format = "ndjson";
  double tick_hz = 1000;
  std::string svg;
  std::string save;
  std::string load;
  std::string every = "1s";
};

Format format_of(const std::string& name) {
  return name == "csv" ? Format::csv : name == "text" ? Format::text : Format::ndjson;
}

ShellSession open_session(const Options& o) {
  if (o.port.empty()) throw tp::Error(tp::ExitCode::usage, "--port DEVICE is required (e.g. --port /dev/ttyACM0)");
  ShellSession session(tp::SerialPort::open(o.port, o.baud),
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

void write_outputs(const Options& o, const Timeline& timeline, SavedData saved) {
  if (!o.svg.empty()) tp::write_text_file(o.svg, render_svg(timeline));
  if (!o.save.empty()) {
    saved.xmin = timeline.start;
    saved.xmax = timeline.end;
    saved.ymin = 0;
    saved.ymax = static_cast<double>(timeline.threads.size());
    tp::write_text_file(o.save, format_save(saved));
  }
}

// --load to NDJSON or CSV: the log is replayed as it is read, in constant memory.
tp::ExitCode stream_loaded_timeline(const Options& o, tp::BatchedWriter& out, const tp::Logger& log) {
  std::ifstream in(o.load, std::ios::binary);
  if (!in) throw tp::Error(tp::ExitCode::not_found, fmt::format("{}: cannot open", o.load));
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
          throw tp::Error(tp::ExitCode::unsupported,
                          "the saved threads_list has no deleted list: timestamps were disabled");
        }
        replay.emplace(list, sink);
      },
      [&](const SwitchRecord& record) { replay->feed(record); });
  if (replay) replay->finish();
  out.write(buffer);
  if (warnings > 10) log.warn(fmt::format("{} records did not fit the thread lists", warnings));
  return tp::ExitCode::ok;
}

tp::ExitCode timeline_command(const Options& o, tp::BatchedWriter& out, const tp::Logger& log) {
  if (!o.load.empty() && o.svg.empty() && o.save.empty() && o.format != "text") {
    return stream_loaded_timeline(o, out, log);
  }
  Pulled pulled;
  if (!o.load.empty()) {
    pulled.saved = parse_save(tp::read_text_file(o.load));
    pulled.list = parse_threads_list(pulled.saved.list_lines);
    pulled.log = parse_threads_timestamps(pulled.saved.timestamp_lines);
  } else {
    ShellSession session = open_session(o);
    pulled = pull(session);
  }
  if (!pulled.list.timestamps_enabled) {
    throw tp::Error(tp::ExitCode::unsupported,
                    "the firmware's threads_list has no deleted list: timestamps are disabled");
  }
  const Timeline timeline = reconstruct(pulled.list, pulled.log);
  for (const std::string& warning : timeline.warnings) log.warn(warning);
  out.write(format_timeline(timeline, format_of(o.format), RecordContext{0, o.tick_hz, 0}));
  write_outputs(o, timeline, pulled.saved);
  log.verbose(fmt::format("{} threads, {} switches", timeline.threads.size(), timeline.switches.size()));
  return tp::ExitCode::ok;
}

// Where the new records of a pull start: after the previous pull's last record, found with
// the records before it (the log is a ring buffer read whole each time).
std::optional<std::size_t> resume_point(const std::vector<SwitchRecord>& previous,
                                        const std::vector<SwitchRecord>& now) {
  if (previous.empty()) return 0;
  const auto same = [](const SwitchRecord& a, const SwitchRecord& b) {
    return a.out == b.out && a.in == b.in && a.time == b.time;
  };
  const std::size_t context = std::min<std::size_t>(previous.size(), 8);
  for (std::size_t end = now.size(); end >= context && end > 0; --end) {
    bool match = true;
    for (std::size_t k = 0; k < context && match; ++k) {
      match = same(now[end - 1 - k], previous[previous.size() - 1 - k]);
    }
    if (match) return end;
  }
  return std::nullopt;
}

tp::ExitCode watch_command(const Options& o, tp::BatchedWriter& out, const tp::Logger& log) {
  const auto period = tp::parse_duration(o.every);
  if (o.format != "ndjson") throw tp::Error(tp::ExitCode::usage, "watch streams NDJSON records only (--format ndjson)");
  ShellSession session = open_session(o);
  std::vector<SwitchRecord> previous;
  double offset = 0;          // absolute tick of the current pull's tick 0
  double last_absolute = -1;  // absolute tick of the last record emitted
  while (tp::stop_requested() == 0) {
    const auto started = std::chrono::steady_clock::now();
    Pulled pulled = pull(session);
    const Timeline timeline = reconstruct(pulled.list, pulled.log);
    const auto resume = resume_point(previous, pulled.log.records);
    std::size_t first = 0;
    if (resume && !previous.empty()) {
      first = *resume;
      if (first > 0) offset = last_absolute - static_cast<double>(timeline.switches[first - 1].tick);
    } else if (!previous.empty()) {
      log.warn("the switch log was cleared or overflowed between two pulls: there is a gap in the timeline");
      offset = last_absolute + 1;
    }
    if (first < timeline.switches.size()) {
      out.write(format_timeline(timeline, Format::ndjson, RecordContext{0, o.tick_hz, offset}, first));
      last_absolute = offset + static_cast<double>(timeline.switches.back().tick);
    }
    out.flush();
    previous = pulled.log.records;
    while (tp::stop_requested() == 0 && std::chrono::steady_clock::now() - started < period) {
      if (out.reader_gone()) throw tp::BrokenPipe();  // `watch | head`: head is done, so are we
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return tp::ExitCode::ok;
}

tp::ExitCode simple_command(const Options& o, const std::string& name, tp::BatchedWriter& out) {
  ShellSession session = open_session(o);
  const RecordContext context{tp::monotonic_us(), o.tick_hz, 0};
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
  return tp::ExitCode::ok;
}

tp::ExitCode run(const Options& o, const std::string& command, const tp::CommonOptions& common, const tp::Logger& log) {
  tp::BatchedWriter out = tp::BatchedWriter::open(common.output, common.append);
  try {
    tp::ExitCode code = tp::ExitCode::ok;
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
    throw tp::Error(error.kind() == ShellError::Kind::malformed ? tp::ExitCode::bad_input : tp::ExitCode::unsupported,
                    error.what());
  }
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "Pull thread statistics and context-switch timelines from a ChibiOS target through the\n"
      "threads_utilities shell on a serial port, as NDJSON records (default), CSV or text.\n\n"
      "Examples:\n"
      "  chibi-pull --port /dev/ttyACM0 stat --format text\n"
      "  chibi-pull --port /dev/ttyACM0 timeline --svg timeline.svg --save run1.txt\n"
      "  chibi-pull timeline --load run1.txt --format csv > runs.csv\n"
      "  chibi-pull --port /dev/ttyACM0 watch --every 1s | trace-serve",
      "chibi-pull"};
  Options o;
  tp::CommonOptions common;
  app.add_option("--port", o.port, "Serial device of the shell (e.g. /dev/ttyACM0)")->envname("CHIBI_PULL_PORT");
  app.add_option("--baud", o.baud, "Baud rate (any rate; USB CDC ignores it)")->default_val(o.baud);
  app.add_option("--timeout", o.timeout_s, "Seconds to wait for the prompt after a command")
      ->default_val(o.timeout_s)
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--format", o.format, "ndjson, csv or text")
      ->check(CLI::IsMember({"ndjson", "csv", "text"}))
      ->default_val("ndjson");
  app.add_option("--tick-hz", o.tick_hz, "System tick rate (CH_CFG_ST_FREQUENCY) for microsecond timestamps")
      ->default_val(o.tick_hz)
      ->check(CLI::Range(1.0, 1e9));
  app.require_subcommand(1);
  app.fallthrough();  // parent options may follow the subcommand
  app.add_subcommand("stat", "Stack use of every thread (threads_stat)");
  app.add_subcommand("uc", "CPU use of every thread (threads_uc)");
  app.add_subcommand("list", "Threads alive and deleted (threads_list)");
  app.add_subcommand("timestamps", "The raw context-switch log (threads_timestamps)");
  app.add_subcommand("trigger", "Set the trigger (threads_timestamps_trigger)");
  app.add_subcommand("run", "Clear the trigger and the log (threads_timestamps_run)");
  CLI::App* timeline = app.add_subcommand("timeline", "threads_list + threads_timestamps, reconstructed");
  timeline->add_option("--svg", o.svg, "Also draw the timeline as an SVG file")->type_name("FILE");
  timeline->add_option("--save", o.save, "Also save the replies in the reference tool's .txt format")
      ->type_name("FILE");
  timeline->add_option("--load", o.load, "Rebuild from a saved .txt file instead of the port")->type_name("FILE");
  CLI::App* watch = app.add_subcommand("watch", "Keep pulling and stream new TaskSwitch records");
  watch->add_option("--every", o.every, "Time between pulls (500ms, 2s, 1m)")->default_val(o.every);
  tp::add_common_options(app, common);
  return tp::run_tool(app, common, argc, argv, [&](const tp::Logger& log) {
    return run(o, app.get_subcommands().front()->get_name(), common, log);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("chibi-pull", [&] { return run_main(argc, argv); });
}
