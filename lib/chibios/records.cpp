#include "chibios/records.hpp"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

#include "core/csv_field.hpp"
#include "records/record_line.hpp"

namespace tp::chibios {

namespace {

// One record through the record's writer (records/record_line), appended to `out`.
template <typename Fill>
void append_record(std::string& out, std::uint64_t timestamp, RecordKind kind, const Fill& fill) {
  thread_local OutBuffer line;
  line.clear();
  RecordLine record(line, {timestamp, clock_name(RecordClock::us), 0, kind, source_name(RecordSource::chibios)});
  fill(record);
  record.end();
  out.append(line.data(), line.size());
}

std::string csv_cell(std::string_view text) {
  std::string out;
  append_csv_field(out, text);
  return out;
}

std::string percent(std::uint32_t hundredths) {
  return fmt::format("{}.{:02}", hundredths / 100, hundredths % 100);
}

std::uint64_t micros(double tick, const RecordContext& context) {
  return static_cast<std::uint64_t>(std::llround((tick + context.tick_offset) * 1e6 / context.tick_hz));
}

}  // namespace

std::string format_stat(const std::vector<ThreadStat>& threads, Format format, const RecordContext& context) {
  std::string out;
  if (format == Format::csv) out = "name,prio,state,stack_begin,stack_end,stack_size,stack_used,stack_percent\n";
  if (format == Format::text)
    out = fmt::format("{:<20} {:>4} {:<10} {:>10} {:>8} {:>8} {:>4}\n", "name", "prio", "state", "stack", "size",
                      "used", "%");
  const auto opt = [](const std::optional<std::uint32_t>& v) { return v ? std::to_string(*v) : std::string{}; };
  for (const ThreadStat& t : threads) {
    if (format == Format::ndjson) {
      append_record(out, context.host_us, RecordKind::thread_stat, [&](RecordLine& record) {
        RecordData& data = record.data();
        data.string("name", t.name).uint("prio", t.prio).string("state", t.state);
        data.uint("stack_begin", t.stack_begin).uint("stack_end", t.stack_end);
        const auto optional = [&](std::string_view name, const std::optional<std::uint32_t>& value) {
          value ? data.uint(name, *value) : data.null(name);
        };
        optional("stack_size", t.size);
        optional("stack_used", t.used);
        optional("stack_percent", t.percent);
      });
    } else if (format == Format::csv) {
      out += fmt::format("{},{},{},0x{:08x},0x{:08x},{},{},{}\n", csv_cell(t.name), t.prio, t.state, t.stack_begin,
                         t.stack_end, opt(t.size), opt(t.used), opt(t.percent));
    } else {
      out += fmt::format("{:<20} {:>4} {:<10} 0x{:08x} {:>8} {:>8} {:>4}\n", t.name, t.prio, t.state, t.stack_begin,
                         t.size ? opt(t.size) : "?", t.used ? opt(t.used) : "?", t.percent ? opt(t.percent) : "?");
    }
  }
  return out;
}

std::string format_usage(const UsageReport& report, Format format, const RecordContext& context) {
  std::string out;
  if (format == Format::csv) out = "name,percent\n";
  for (const ThreadUsage& u : report.threads) {
    if (format == Format::ndjson) {
      append_record(out, context.host_us, RecordKind::thread_usage, [&](RecordLine& record) {
        RecordData& data = record.data();
        data.string("name", u.name).number("percent", u.hundredths / 100.0);
      });
    } else if (format == Format::csv) {
      out += fmt::format("{},{}\n", csv_cell(u.name), percent(u.hundredths));
    } else {
      out += fmt::format("{:<25} {:>7}%\n", u.name, percent(u.hundredths));
    }
  }
  if (format == Format::ndjson) {
    append_record(out, context.host_us, RecordKind::critical_usage, [&](RecordLine& record) {
      RecordData& data = record.data();
      data.number("thread_percent", report.critical_thread_hundredths / 100.0);
      data.number("isr_percent", report.critical_isr_hundredths / 100.0);
    });
  } else if (format == Format::csv) {
    out += fmt::format("(critical thd),{}\n(critical isr),{}\n", percent(report.critical_thread_hundredths),
                       percent(report.critical_isr_hundredths));
  } else {
    out += fmt::format("critical: threads {}%, ISRs {}%\n", percent(report.critical_thread_hundredths),
                       percent(report.critical_isr_hundredths));
  }
  return out;
}

std::string format_list(const ThreadList& list, Format format, const RecordContext& context) {
  std::string out;
  if (format == Format::csv) out = "number,name,prio,logged,deleted\n";
  const auto one = [&](const ListedThread& t, bool deleted) {
    if (format == Format::ndjson) {
      append_record(out, context.host_us, RecordKind::thread_info, [&](RecordLine& record) {
        RecordData& data = record.data();
        data.uint("number", static_cast<std::uint64_t>(t.number)).string("name", t.name);
        data.uint("prio", static_cast<std::uint64_t>(t.prio)).boolean("logged", t.logged);
        data.boolean("deleted", deleted);
      });
    } else if (format == Format::csv) {
      out += fmt::format("{},{},{},{},{}\n", t.number, csv_cell(t.name), t.prio, t.logged, deleted);
    } else {
      out += fmt::format("{:>2} {:<24} prio {:>3} {}{}\n", t.number, t.name, t.prio, t.logged ? "logged" : "not logged",
                         deleted ? ", deleted" : "");
    }
  };
  for (const auto& t : list.alive) one(t, false);
  for (const auto& t : list.deleted) one(t, true);
  return out;
}

std::string format_log(const TimestampLog& log, Format format, const RecordContext& context) {
  std::string out;
  if (format == Format::csv) out = "out,in,time\n";
  if (log.trigger && format == Format::text) out += fmt::format("triggered at {}\n", *log.trigger);
  for (const SwitchRecord& r : log.records) {
    if (format == Format::ndjson) {
      append_record(out, micros(r.time, RecordContext{0, context.tick_hz, 0}), RecordKind::switch_record,
                    [&](RecordLine& record) {
                      RecordData& data = record.data();
                      data.uint("out", static_cast<std::uint64_t>(r.out)).uint("in", static_cast<std::uint64_t>(r.in));
                      data.uint("tick", r.time);
                    });
    } else if (format == Format::csv) {
      out += fmt::format("{},{},{}\n", r.out, r.in, r.time);
    } else {
      out += fmt::format("from {:>2} to {:>2} at {:>7}\n", r.out, r.in, r.time);
    }
  }
  return out;
}

std::string format_trigger(const TriggerReply& reply, Format format, const RecordContext& context) {
  if (format == Format::csv) return fmt::format("name,time\n{},{}\n", csv_cell(reply.name), reply.time);
  if (format == Format::text) return fmt::format("trigger set by {} at {}\n", reply.name, reply.time);
  std::string out;
  append_record(out, context.host_us, RecordKind::trigger, [&](RecordLine& record) {
    RecordData& data = record.data();
    data.string("name", reply.name).uint("tick", reply.time);
  });
  return out;
}

void append_switch_record(std::string& out, const Switch& change, const std::vector<TimelineThread>& threads,
                          const RecordContext& context) {
  const auto name_of = [&](int id) -> const std::string* {
    return id > 0 && static_cast<std::size_t>(id) <= threads.size() ? &threads[static_cast<std::size_t>(id) - 1].name
                                                                    : nullptr;
  };
  append_record(out, micros(change.time, context), change.exit ? RecordKind::thread_exit : RecordKind::task_switch,
                [&](RecordLine& record) {
                  RecordData& data = record.data();
                  if (change.exit) {
                    data.uint("thread", static_cast<std::uint64_t>(change.from));
                    if (const auto* name = name_of(change.from)) data.string("name", *name);
                  } else {
                    data.uint("from_task", static_cast<std::uint64_t>(change.from))
                        .uint("to_task", static_cast<std::uint64_t>(change.to));
                    if (const auto* name = name_of(change.from)) data.string("from_name", *name);
                    if (const auto* name = name_of(change.to)) data.string("to_name", *name);
                  }
                  record.meta("tick", static_cast<std::uint64_t>(
                                          std::llround(static_cast<double>(change.tick) + context.tick_offset)));
                });
}

void append_run_row(std::string& out, const TimelineThread& thread, const Run& run, const RecordContext& context) {
  // On the hot path of `timeline --load --format csv`: no temporary strings.
  fmt::format_to(std::back_inserter(out), "{},", thread.id);
  append_csv_field(out, thread.name);
  fmt::format_to(std::back_inserter(out), ",{},{},{:.6f},{:.6f},{},{},{},{}\n", thread.prio, thread.logged,
                 run.start + context.tick_offset, run.end + context.tick_offset, micros(run.start, context),
                 micros(run.end, context), run.from_log_start, run.to_read_time);
}

std::string format_timeline(const Timeline& timeline, Format format, const RecordContext& context,
                            std::size_t first_switch) {
  std::string out;
  if (format == Format::ndjson) {
    for (std::size_t i = first_switch; i < timeline.switches.size(); ++i) {
      append_switch_record(out, timeline.switches[i], timeline.threads, context);
    }
    return out;
  }
  if (format == Format::csv) {
    out = runs_csv_header;
    for (const TimelineThread& t : timeline.threads) {
      for (const Run& run : t.runs) append_run_row(out, t, run, context);
    }
    return out;
  }
  out = fmt::format("{} switches over ticks {:.0f} to {:.0f}{}\n", timeline.switches.size(), timeline.start,
                    timeline.end, timeline.trigger ? fmt::format(", trigger at {:.0f}", *timeline.trigger) : "");
  for (const TimelineThread* t : display_order(timeline)) {
    double busy = 0;
    for (const Run& run : t->runs) busy += run.end - run.start;
    out += fmt::format("{:>2} {:<24} prio {:>3} {:<10} {:>5} runs {:>10.2f} ticks{}{}{}\n", t->id, t->name, t->prio,
                       t->logged ? "logged" : "not logged", t->logged ? t->runs.size() : t->ins.size(), busy,
                       t->running_at_log_start ? ", running when the log began" : "",
                       t->running_when_read ? ", running when read" : "",
                       t->exit_time ? fmt::format(", exited at {:.2f}", *t->exit_time) : "");
  }
  for (const std::string& warning : timeline.warnings) out += fmt::format("warning: {}\n", warning);
  return out;
}

}  // namespace tp::chibios
