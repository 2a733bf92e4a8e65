#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "analysis/live_stats.hpp"
#include "analysis/observation.hpp"
#include "analysis/timeline.hpp"
#include "analysis/top_report.hpp"

using namespace tp::analysis;
using tp::ExceptionAction;

namespace {

Observation at(std::uint64_t t, ObservationKind kind, std::uint32_t number = 0,
               ExceptionAction action = ExceptionAction::reserved) {
  Observation o;
  o.timestamp = t;
  o.clock = "cycles";
  o.kind = kind;
  o.number = number;
  o.action = action;
  return o;
}

Observation exception(std::uint64_t t, std::uint32_t number, ExceptionAction action) {
  return at(t, ObservationKind::exception, number, action);
}

std::optional<Observation> parse(const std::string& line) {
  static simdjson::dom::parser parser;
  simdjson::dom::object root;
  if (parser.parse(line).get_object().get(root) != simdjson::SUCCESS) return std::nullopt;
  return observe(root);
}

}  // namespace

TEST_CASE("handlers: own time without what preempted them, nesting, tail-chaining") {
  LiveStats stats;
  // SysTick (15) 100..200, preempted by IRQ3 (19) 120..150; then IRQ3 tail-chained after
  // IRQ0 (16) 300..310, 310..330; thread resumes.
  stats.add(exception(100, 15, ExceptionAction::enter));
  stats.add(exception(120, 19, ExceptionAction::enter));
  stats.add(exception(150, 19, ExceptionAction::exit));
  stats.add(exception(150, 15, ExceptionAction::resume));
  stats.add(exception(200, 15, ExceptionAction::exit));
  stats.add(exception(200, 0, ExceptionAction::resume));
  stats.add(exception(300, 16, ExceptionAction::enter));
  stats.add(exception(310, 16, ExceptionAction::exit));
  stats.add(exception(310, 19, ExceptionAction::enter));
  stats.add(exception(330, 19, ExceptionAction::exit));
  const auto& handlers = stats.exceptions().handlers();
  REQUIRE(handlers.size() == 3);
  CHECK(handlers.at(15).durations.count == 1);
  CHECK(handlers.at(15).durations.total == 70);  // 100 cycles less the 30 of IRQ3
  CHECK(handlers.at(15).max_nesting == 1);
  CHECK(handlers.at(19).durations.count == 2);
  CHECK(handlers.at(19).durations.min == 20);
  CHECK(handlers.at(19).durations.max == 30);
  CHECK(handlers.at(19).max_nesting == 2);
  CHECK(handlers.at(16).durations.total == 10);
  CHECK(stats.exceptions().max_nesting() == 2);
  CHECK(stats.exceptions().total_time() == 130);
  CHECK(stats.span() == 230);
}

TEST_CASE("handlers: an interval open across an Overflow is counted but uncertain, out of min and max") {
  LiveStats stats;
  stats.add(exception(0, 15, ExceptionAction::enter));
  stats.add(exception(10, 15, ExceptionAction::exit));
  stats.add(exception(20, 15, ExceptionAction::enter));
  stats.add(at(25, ObservationKind::overflow));
  stats.add(exception(1000, 15, ExceptionAction::exit));  // its exit may have been lost: 980 is not trusted
  stats.add(exception(1100, 22, ExceptionAction::exit));  // an exit without an entry: not counted
  const Durations& d = stats.exceptions().handlers().at(15).durations;
  CHECK(d.count == 2);
  CHECK(d.uncertain == 1);
  CHECK(d.total == 990);
  CHECK(d.min == 10);
  CHECK(d.max == 10);
  CHECK(stats.overflows() == 1);
  CHECK(stats.exceptions().unmatched_exits() == 1);
  CHECK(stats.exceptions().handlers().count(22) == 0);
}

TEST_CASE("handlers: a missing exit closes the handlers above as uncertain") {
  HandlerTracker tracker;
  tracker.enter(15, 0, "SysTick");
  tracker.enter(19, 10, "");
  tracker.exit(15, 50);  // 19's exit was lost
  CHECK(tracker.handlers().at(19).durations.uncertain == 1);
  CHECK(tracker.handlers().at(15).durations.count == 1);
  CHECK(tracker.handlers().at(15).name == "SysTick");
}

TEST_CASE("tasks: time between switches without idle stretches; tasks and idle add up to the span") {
  LiveStats stats;
  Observation to1 = at(0, ObservationKind::task_switch, 1);
  stats.add(to1);
  stats.add(at(100, ObservationKind::idle_enter));
  stats.add(at(160, ObservationKind::idle_exit));
  stats.add(at(200, ObservationKind::task_switch, 2));
  stats.add(at(230, ObservationKind::overflow));
  stats.add(at(300, ObservationKind::task_switch, 1));
  stats.add(at(350, ObservationKind::other));
  const auto tasks = stats.tasks().tasks_until(stats.last_time());
  CHECK(tasks.at(1).time == 100 + 40 + 50);  // 0-100, 160-200, and the running stretch 300-350
  CHECK(tasks.at(2).time == 100);
  CHECK(tasks.at(2).uncertain_time == 100);
  CHECK(stats.tasks().idle_until(stats.last_time()) == 60);
  CHECK(tasks.at(1).time + tasks.at(2).time + stats.tasks().idle_until(stats.last_time()) == stats.span());
}

TEST_CASE("profile: functions by samples, the PC in hex without a function, sleep apart") {
  Profile profile;
  Observation sample = at(0, ObservationKind::pc_sample);
  sample.name = "main";
  profile.add(sample);
  profile.add(sample);
  sample.name = "";
  sample.pc = 0x08000100;
  profile.add(sample);
  sample.sleep = true;
  profile.add(sample);
  const auto top = profile.top(5);
  REQUIRE(top.size() == 2);
  CHECK(top[0].function == "main");
  CHECK(top[0].samples == 2);
  CHECK(top[1].function == "0x08000100");
  CHECK(profile.samples() == 4);
  CHECK(profile.sleeping() == 1);
  CHECK(profile.top(1).size() == 1);
}

TEST_CASE("observations from records: the fields each statistic uses; malformed data is no observation") {
  const auto pc = parse(R"({"timestamp":5,"port":0,"event":{"kind":"PcSample","data":{"pc":256,"sleep":false,)"
                        R"("function":"main"}},"source":"dwt","clock":"cycles"})");
  REQUIRE(pc);
  CHECK(pc->kind == ObservationKind::pc_sample);
  CHECK(pc->pc == 256);
  CHECK(pc->name == "main");
  CHECK(pc->clock == "cycles");
  const auto ex = parse(R"({"timestamp":6,"port":0,"event":{"kind":"Exception","data":{"number":19,"name":"IRQ3",)"
                        R"("action":"exit","handler":"TIM1_IRQHandler"}}})");
  REQUIRE(ex);
  CHECK(ex->action == ExceptionAction::exit);
  CHECK(ex->name == "TIM1_IRQHandler");
  const auto idle = parse(R"({"timestamp":7,"port":1,"event":{"kind":"IdleEnter"}})");
  REQUIRE(idle);
  CHECK(idle->kind == ObservationKind::idle_enter);
  CHECK_FALSE(parse(R"({"timestamp":7,"port":0,"event":{"kind":"PcSample","data":{"sleep":true}}})"));
  CHECK_FALSE(parse(R"({"port":0,"event":{"kind":"Text","data":{"message":"x"}}})"));
  CHECK_FALSE(parse(R"({"timestamp":1,"frames":[]})"));
  const auto text = parse(R"({"timestamp":1,"port":3,"event":{"kind":"Text","data":{"message":"x"}}})");
  REQUIRE(text);
  CHECK(text->kind == ObservationKind::text);
  CHECK(text->text == "x");
  CHECK(text->port == 3);
  CHECK_FALSE(parse(R"({"timestamp":1,"port":0,"event":{"kind":"Counter","data":{"counter_id":1}}})"));
  CHECK_FALSE(parse(R"({"timestamp":1,"port":0,"event":{"kind":"Counter"}})"));
  CHECK(parse(R"({"timestamp":1,"port":0,"event":{"kind":"Hardware","data":{}}})")->kind == ObservationKind::other);
}

TEST_CASE("snapshots: records of the schema's Top kinds; the table shows what is uncertain") {
  LiveStats stats;
  stats.add(exception(0, 15, ExceptionAction::enter));
  stats.add(at(5, ObservationKind::overflow));
  stats.add(exception(10, 15, ExceptionAction::exit));
  tp::OutBuffer out;
  write_snapshot(out, stats, ReportOptions{}, true);
  const std::string text(out.view());
  CHECK(text.find(R"("kind":"TopSummary","data":{"records":3,"span":10,"pc_samples":0,"sleep_samples":0,)"
                  R"("overflows":1,"resyncs":0,"time_anomalies":0,"other_clock_records":0,"uncertain":1,)"
                  R"("final":true})") != std::string::npos);
  CHECK(text.find(R"("kind":"TopHandler","data":{"source":"exception","number":15,"name":null,"count":1,)"
                  R"("total":10,"min":null,"avg":10,"max":null,"max_nesting":1,"share":1,"uncertain":1})") !=
        std::string::npos);
  const std::string table = render_table(stats, ReportOptions{});
  CHECK(table.find("1 overflows, 0 resyncs") != std::string::npos);
  CHECK(table.find("(1 uncertain)") != std::string::npos);
}

TEST_CASE("a timestamp earlier than one before it is taken at the latest time, and counted") {
  // 1000, 100, 1100: task 2 runs from 1000 (its switch taken then), not from 100: 100 cycles
  // of a 100-cycle span, not 1000.
  LiveStats stats;
  stats.add(at(1000, ObservationKind::task_switch, 1));
  stats.add(at(100, ObservationKind::task_switch, 2));
  stats.add(at(1100, ObservationKind::task_switch, 1));
  CHECK(stats.span() == 100);
  CHECK(stats.time_anomalies() == 1);
  const auto tasks = stats.tasks().tasks_until(stats.last_time());
  CHECK(tasks.at(2).time == 100);
  CHECK(tasks.at(1).time == 0);
  const std::string table = render_table(stats, ReportOptions{});
  CHECK(table.find("1 records earlier than one before them") != std::string::npos);
  CHECK(table.find("100.00%") != std::string::npos);
  CHECK(table.find("1000.00%") == std::string::npos);
}

TEST_CASE("--top: the heaviest handlers and tasks, most first") {
  LiveStats stats;
  std::uint64_t t = 0;
  for (const auto& [number, length] : std::vector<std::pair<std::uint32_t, std::uint64_t>>{{1, 5}, {2, 50}, {3, 20}}) {
    stats.add(exception(t, number, ExceptionAction::enter));
    t += length;
    stats.add(exception(t, number, ExceptionAction::exit));
  }
  const auto top = stats.exceptions().heaviest(2);
  REQUIRE(top.size() == 2);
  CHECK(top[0].first == 2);
  CHECK(top[1].first == 3);
  CHECK(stats.exceptions().heaviest(10).size() == 3);
}

TEST_CASE("snapshots: a resync (Malformed: bytes skipped) is a loss like an overflow") {
  LiveStats stats;
  stats.add(at(0, ObservationKind::task_switch, 1));
  stats.add(exception(0, 15, ExceptionAction::enter));
  stats.add(at(5, ObservationKind::malformed));
  stats.add(exception(10, 15, ExceptionAction::exit));
  CHECK(stats.resyncs() == 1);
  CHECK(stats.overflows() == 0);
  CHECK(stats.exceptions().handlers().at(15).durations.uncertain == 1);
  CHECK(stats.tasks().tasks_until(10).at(1).uncertain_time == 10);
  const std::string table = render_table(stats, ReportOptions{});
  CHECK(table.find("0 overflows, 1 resyncs") != std::string::npos);
  CHECK(table.find("(10 cycles uncertain)") != std::string::npos);  // the task's time across the loss
}

namespace {

// The events of a timeline as "phase track ts name" lines (track by its thread_name), in order.
std::vector<std::string> timeline_events(const TimelineOptions& options, const std::vector<Observation>& observations) {
  TimelineWriter timeline(options);
  tp::OutBuffer out;
  timeline.begin(out);
  for (const Observation& o : observations) timeline.add(o, out);
  timeline.finish(out);
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(std::string(out.data(), out.size())).get(root) == simdjson::SUCCESS);
  std::map<std::int64_t, std::string> tracks;
  std::vector<std::string> events;
  for (const simdjson::dom::element e : root["traceEvents"].get_array()) {
    const std::string_view phase = e["ph"].get_string().value();
    const std::int64_t tid = e["tid"].get_int64().value();
    if (phase == "M") {
      if (e["name"].get_string().value() == "thread_name") tracks[tid] = e["args"]["name"].get_string().value();
      continue;
    }
    std::string line = std::string(phase) + " " + (tid == 0 ? "-" : tracks.at(tid)) + " ";
    // As written: integers for unscaled clocks, three decimals (ns) for microseconds.
    const simdjson::dom::element ts = e["ts"];
    line += ts.is_uint64() ? std::to_string(ts.get_uint64().value()) : fmt::format("{:.3f}", ts.get_double().value());
    line += " " + std::string(e["name"].get_string().value());
    if (e["args"]["uncertain"].error() == simdjson::SUCCESS) line += " uncertain";
    events.push_back(line);
  }
  return events;
}

Observation named(Observation o, std::string_view name) {
  o.name = name;
  return o;
}

}  // namespace

TEST_CASE("timeline: task slices between switches and around idle; handlers nest; a lost exit ends uncertain") {
  const std::vector<Observation> observations = {
      named(at(100, ObservationKind::task_switch, 1), "blink"),
      named(exception(150, 15, ExceptionAction::enter), "SysTick"),
      named(exception(160, 19, ExceptionAction::enter), "IRQ3"),  // its exit is lost
      exception(180, 15, ExceptionAction::exit),
      exception(190, 99, ExceptionAction::exit),  // an exit without its entry: nothing
      at(200, ObservationKind::idle_enter),
      at(250, ObservationKind::task_switch, 2),  // while idle: task 2 gets the CPU back
      at(300, ObservationKind::idle_exit),
      at(350, ObservationKind::overflow),
      at(400, ObservationKind::task_switch, 1),
  };
  const std::vector<std::string> expected = {
      "B blink 100 blink",
      "B SysTick 150 SysTick",
      "B exceptions 150 SysTick",
      "B IRQ3 160 IRQ3",
      "B exceptions 160 IRQ3",
      "E IRQ3 180 IRQ3 uncertain",
      "E exceptions 180 IRQ3 uncertain",
      "E SysTick 180 SysTick",
      "E exceptions 180 SysTick",
      "E blink 200 blink",
      "B idle 200 idle",
      "E idle 300 idle",
      "B task 2 300 task 2",
      "i - 350 overflow: packets lost",
      "E task 2 400 task 2 uncertain",
      "B blink 400 blink",
      "E blink 400 blink",
  };
  CHECK(timeline_events({}, observations) == expected);
}

TEST_CASE("timeline: microseconds from cycles; a window starts what runs and ends it at its end") {
  const std::vector<Observation> observations = {
      at(1000, ObservationKind::task_switch, 1), at(2000, ObservationKind::isr_enter, 7),
      at(3000, ObservationKind::marker, 5),      at(4000, ObservationKind::isr_exit, 7),
      at(9000, ObservationKind::task_switch, 2),
  };
  // 1 MHz: one cycle is one microsecond; 3 MHz: thirds, written to the nanosecond.
  CHECK(timeline_events({3'000'000, {}, {}}, {at(1000, ObservationKind::marker, 1)}) ==
        std::vector<std::string>{"i markers 333.333 marker 1"});
  const std::vector<std::string> window = {
      "B task 1 2500.000 task 1",    "B ISR 7 2500.000 ISR 7", "B interrupts 2500.000 ISR 7",
      "i markers 3000.000 marker 5", "E ISR 7 4000.000 ISR 7", "E interrupts 4000.000 ISR 7",
      "E task 1 5000.000 task 1",
  };
  CHECK(timeline_events({1'000'000, 2500, 5000}, observations) == window);
  // A window no record falls into still shows what ran through it.
  CHECK(timeline_events({1'000'000, 5000, 6000}, observations) ==
        std::vector<std::string>{"B task 1 5000.000 task 1", "E task 1 6000.000 task 1"});
}

TEST_CASE("timeline: PC samples with functions as runs, console lines cut at a character, counters") {
  Observation text = at(10, ObservationKind::text);
  text.port = 2;
  const std::string long_line = std::string(119, 'x') + "\xc3\xa9" + "tail";  // é across the cut
  text.text = long_line;
  Observation counter = at(20, ObservationKind::counter, 3);
  counter.value = 42;
  Observation sample = named(at(30, ObservationKind::pc_sample), "main");
  Observation unnamed = at(40, ObservationKind::pc_sample);
  Observation asleep = at(50, ObservationKind::pc_sample);
  asleep.sleep = true;
  const std::vector<std::string> events =
      timeline_events({}, {at(5, ObservationKind::pc_sample), text, counter, sample,
                           named(at(35, ObservationKind::pc_sample), "main"), unnamed, asleep});
  const std::vector<std::string> expected = {
      "i console port 2 10 " + std::string(119, 'x'),
      "C - 20 counter 3",
      "B PC samples 30 main",
      "E PC samples 40 main",
      "B PC samples 50 [sleep]",
      "E PC samples 50 [sleep]",
  };
  CHECK(events == expected);
}

TEST_CASE("load series: time per interval adds up to the total; the width doubles, aligned, as the trace grows") {
  LoadSeries load;
  load.add(10, 13);  // width 1: bins 10, 11, 12
  CHECK(load.width() == 1);
  CHECK(load.first() == 10);
  CHECK(load.bins() == std::vector<std::uint64_t>{1, 1, 1});
  load.add(3000, 3010);  // 10..3009 does not fit 1024 bins of 1: width 4 (bins 2..752)
  CHECK(load.width() == 4);
  CHECK(load.first() == 2);
  CHECK(load.bins().size() <= LoadSeries::max_bins);
  CHECK(load.bins().front() == 2);  // 10, 11 of [8, 12)
  CHECK(load.bins()[1] == 1);       // 12 of [12, 16)
  CHECK(load.total() == 13);
  const LoadSeries wide = load.widened_to(16);
  CHECK(wide.width() == 16);
  CHECK(wide.first() == 0);
  CHECK(wide.bins().front() == 3);
  CHECK(wide.total() == 13);
  load.add(0, 4);  // before the first bin: bins are added in front
  CHECK(load.first() == 0);
  CHECK(load.total() == 17);
  LoadSeries other;
  other.add(5000, 5002);
  load.add(other);
  CHECK(load.total() == 19);
  LoadSeries end;  // a trace from 0 to the end of the clock: the last interval's end does not fit
  end.add(0, 10);
  end.add(~0ULL - 10, ~0ULL);
  CHECK(end.total() == 20);
  CHECK(end.bins().size() <= LoadSeries::max_bins);
}

TEST_CASE("load series: a handler open while a million others come and go keeps bounded memory") {
  LiveStats stats(false, false, true);
  stats.add(at(0, ObservationKind::isr_enter, 1));  // its exit is lost
  for (std::uint64_t i = 0; i < 100000; ++i) {
    stats.add(at(10 * i + 5, ObservationKind::isr_enter, 2));
    stats.add(at(10 * i + 8, ObservationKind::isr_exit, 2));
  }
  stats.add(at(1000000, ObservationKind::isr_exit, 1));
  REQUIRE(stats.isrs().load(1) != nullptr);
  CHECK(stats.isrs().load(1)->total() == stats.isrs().handlers().at(1).durations.total);
  CHECK(stats.isrs().load(1)->bins().size() <= LoadSeries::max_bins);
  CHECK(stats.isrs().load(1)->total() == 1000000 - 3 * 100000);
}

TEST_CASE("load series: tasks, idle and handlers per interval add up to trace-top's figures") {
  LiveStats stats(false, false, true);
  auto task = [](std::uint64_t t, std::uint32_t to) { return at(t, ObservationKind::task_switch, to); };
  stats.add(task(0, 1));
  stats.add(at(100, ObservationKind::isr_enter, 5));
  stats.add(at(120, ObservationKind::isr_enter, 6));  // preempts 5: 5 runs 100..120 and 140..160
  stats.add(at(140, ObservationKind::isr_exit, 6));
  stats.add(at(160, ObservationKind::isr_exit, 5));
  stats.add(at(5000, ObservationKind::idle_enter));
  stats.add(at(9000, ObservationKind::idle_exit));
  stats.add(task(9000, 2));
  stats.add(at(9500, ObservationKind::isr_enter, 5));  // open at the end: not counted
  stats.add(at(9600, ObservationKind::text));
  const auto& isrs = stats.isrs().handlers();
  CHECK(stats.isrs().load(5)->total() == isrs.at(5).durations.total);
  CHECK(stats.isrs().load(5)->total() == 40);
  CHECK(stats.isrs().load(6)->total() == 20);
  const auto tasks = stats.tasks().tasks_until(stats.last_time());
  CHECK(stats.tasks().load_until(1, stats.last_time())->total() == tasks.at(1).time);
  CHECK(stats.tasks().load_until(2, stats.last_time())->total() == 600);
  CHECK(stats.tasks().idle_load_until(stats.last_time()).total() == stats.tasks().idle_until(stats.last_time()));
  tp::OutBuffer out;
  write_snapshot(out, stats, ReportOptions{.load = true}, true);
  const std::string text(out.view());
  // One grid for all, the widest: task 1's 0..5000 in at most 1024 bins is a width of 8. ISR 5
  // ran 100..120 and 140..160: bins 12..14 and 17..19.
  CHECK(text.find(R"("load_width":8,"load_first":12,"load":[4,8,8,0,0,4,8,8],"hist_first":)") != std::string::npos);
  CHECK(text.find(R"("name":"idle","time":4000,"share")") != std::string::npos);
  tp::OutBuffer plain;
  write_snapshot(plain, stats, ReportOptions{}, true);
  CHECK(std::string(plain.view()).find("load") == std::string::npos);  // trace-top's records are as they were
  LiveStats without;                                                   // trace-top's: no series kept
  without.add(at(0, ObservationKind::isr_enter, 5));
  without.add(at(10, ObservationKind::isr_exit, 5));
  CHECK(without.isrs().load(5) == nullptr);
}

TEST_CASE("load series: kept for at most max_series handlers, whatever the trace names") {
  LiveStats stats(false, false, true);
  for (std::uint32_t id = 0; id < LoadSeries::max_series + 100; ++id) {
    stats.add(at(10ULL * id, ObservationKind::isr_enter, id));
    stats.add(at(10ULL * id + 5, ObservationKind::isr_exit, id));
  }
  CHECK(stats.isrs().handlers().size() == LoadSeries::max_series + 100);
  CHECK(stats.isrs().load(LoadSeries::max_series - 1) != nullptr);
  CHECK(stats.isrs().load(LoadSeries::max_series) == nullptr);
}

TEST_CASE("duration histogram: 8 buckets a doubling, quantiles by nearest rank; the worst interval's place") {
  CHECK(DurationHistogram::bucket_of(15) == 15);
  CHECK(DurationHistogram::bucket_of(16) == 16);
  CHECK(DurationHistogram::bucket_of(17) == 16);
  CHECK(DurationHistogram::bucket_of(18) == 17);
  CHECK(DurationHistogram::bucket_of(31) == 23);
  CHECK(DurationHistogram::bucket_of(32) == 24);
  CHECK(DurationHistogram::bucket_of(~0ULL) == DurationHistogram::bucket_count - 1);
  for (std::size_t bucket = 0; bucket < DurationHistogram::bucket_count; ++bucket) {
    CHECK(DurationHistogram::bucket_of(DurationHistogram::bucket_low(bucket)) == bucket);
  }
  DurationHistogram histogram;
  for (std::uint64_t d = 1; d <= 100; ++d) histogram.add(d);
  CHECK(histogram.count() == 100);
  CHECK(histogram.first() == 1);
  CHECK(histogram.quantile_high(0.5) == 51);    // 50 is in [48, 51]
  CHECK(histogram.quantile_high(0.99) == 103);  // 99 is in [96, 103]
  CHECK(histogram.quantile_high(0.0) == 1);

  LiveStats stats(false, false, true);
  stats.add(at(100, ObservationKind::isr_enter, 5));
  stats.add(at(110, ObservationKind::isr_exit, 5));
  stats.add(at(200, ObservationKind::isr_enter, 5));
  stats.add(at(230, ObservationKind::isr_enter, 6));  // 5 is preempted: its own time is 40 of 50
  stats.add(at(240, ObservationKind::isr_exit, 6));
  stats.add(at(250, ObservationKind::isr_exit, 5));
  stats.add(at(300, ObservationKind::isr_enter, 5));
  stats.add(at(335, ObservationKind::isr_exit, 5));
  const HandlerTracker::Chart* chart = stats.isrs().chart(5);
  REQUIRE(chart != nullptr);
  CHECK(chart->worst == 40);
  CHECK(chart->worst_start == 200);
  CHECK(chart->worst_end == 250);
  CHECK(chart->durations.count() == 3);
  tp::OutBuffer out;
  write_snapshot(out, stats, ReportOptions{.load = true}, true);
  // 10 is bucket 10; 35 and 40 are 24 ([32, 35]) and 26 ([40, 43]).
  CHECK(std::string(out.view())
            .find(R"("hist_first":10,"hist":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0,1],"p50":35,"p99":40,)"
                  R"("worst_start":200,"worst_end":250})") != std::string::npos);
}
