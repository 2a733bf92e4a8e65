#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "chibios/records.hpp"
#include "chibios/save_file.hpp"
#include "chibios/shell_output.hpp"
#include "chibios/shell_session.hpp"
#include "chibios/timeline.hpp"
#include "chibios/timeline_svg.hpp"
#include "chibios/watch_stitcher.hpp"
#include "core/error.hpp"

using namespace tp::chibios;
using Lines = std::vector<std::string>;

namespace {

const Lines seed_list = {
    "Thread number  1 : Prio =  64, Log = Yes, Name = main",
    "Thread number  2 : Prio =   1, Log = Yes, Name = idle",
    "Thread number  3 : Prio =  74, Log = Yes, Name = usb_lld_pump",
    "Thread number  4 : Prio =  64, Log = Yes, Name = NONAME",
    "Thread number  5 : Prio =  64, Log = Yes, Name = shell",
    "Deleted threads: ",
    "Thread number  9 : Prio =  64, Log = Yes, Name = Thd19",
    "Thread number  8 : Prio =  64, Log = Yes, Name = Thd18",
    "Thread number  9 : Prio =  64, Log = Yes, Name = Thd20",
    "Thread number  5 : Prio =  64, Log = Yes, Name = Exited dynamic thread",
    "Thread number  5 : Prio =  64, Log = Yes, Name = Thd16",
    "Thread number  5 : Prio =  64, Log = Yes, Name = Thd17",
    "Thread number  6 : Prio =  64, Log = Yes, Name = Thd21",
    "Thread number  6 : Prio =  64, Log = Yes, Name = Exited dynamic thread",
    "Thread number  6 : Prio =  64, Log = Yes, Name = Thd16",
};
const Lines seed_stamps = {"From  8 to  9 at    1581", "From  9 to  9 at    1581", "From  0 to  2 at    1581",
                           "From  2 to 10 at    1591", "From 10 to  2 at    1601", "From  2 to  5 at    1630"};

ShellError::Kind kind_of(const auto& parse, const Lines& lines) {
  try {
    parse(lines);
  } catch (const ShellError& e) {
    return e.kind();
  }
  FAIL("no ShellError");
  return ShellError::Kind::malformed;
}

}  // namespace

TEST_CASE("chibios: threads_list, and the seed document's creation order") {
  const ThreadList list = parse_threads_list(seed_list);
  CHECK(list.alive.size() == 5);
  CHECK(list.deleted.size() == 9);
  CHECK(list.timestamps_enabled);
  CHECK(list.deleted[0].number == 9);
  CHECK(list.deleted[3].name == "Exited dynamic thread");
  std::vector<std::string> names;
  for (const auto& thread : creation_order(list)) names.push_back(thread.name);
  CHECK(names == std::vector<std::string>{"main", "idle", "usb_lld_pump", "NONAME", "Exited dynamic thread", "Thd16",
                                          "Thd17", "Thd18", "Thd19", "shell", "Thd20", "Thd21", "Exited dynamic thread",
                                          "Thd16"});
  const ThreadList registry = parse_threads_list({"Thread number  1 : Prio =  64, Log =  No, Name = main"});
  CHECK_FALSE(registry.timestamps_enabled);
  CHECK_FALSE(registry.alive[0].logged);
  CHECK(kind_of(parse_threads_list, {"Thread number  2 : Prio =  64, Log = Yes, Name = x"}) ==
        ShellError::Kind::malformed);
  CHECK(kind_of(parse_threads_list, {"Thread number  1 : Prio = 64, Log = Maybe, Name = x"}) ==
        ShellError::Kind::malformed);
  CHECK(kind_of(parse_threads_list, {"garbage"}) == ShellError::Kind::malformed);
}

TEST_CASE("chibios: the shell's own answers") {
  CHECK(kind_of(parse_threads_stat, {"threads_stat ?"}) == ShellError::Kind::unknown_command);
  CHECK(kind_of(parse_threads_timestamps, {"The thread timestamps functionality is disabled",
                                           "Please define USE_THREADS_TIMESTAMPS = true in your makefile "}) ==
        ShellError::Kind::disabled);
  CHECK(kind_of(parse_threads_list, {"Usage: threads_list"}) == ShellError::Kind::usage);
}

TEST_CASE("chibios: threads_stat, threads_uc (unpadded percentages), timestamps, trigger, run") {
  const auto stats =
      parse_threads_stat({"", "     begin        end   size   used    % prio     state         name",
                          std::string(68, '-'), "0x20000400 0x20000800    ???    ???  ???%   64   CURRENT         main",
                          "0x20000c00 0x20000e40    576    113  19%    1  SLEEPING    idle thread", ""});
  REQUIRE(stats.size() == 2);
  CHECK_FALSE(stats[0].size);
  CHECK(stats[1].size == 576U);
  CHECK(stats[1].percent == 19U);
  CHECK(stats[1].name == "idle thread");
  CHECK(stats[1].stack_begin == 0x20000c00U);
  const UsageReport uc =
      parse_threads_uc({"                     main          5.5%", "                     idle          12.0%", "",
                        "            critical thd:1.5%   critical isr:0.42%", ""});
  CHECK(uc.threads[0].hundredths == 505);  // "5.5%" is 5.05%
  CHECK(uc.threads[1].hundredths == 1200);
  CHECK(uc.critical_thread_hundredths == 105);
  CHECK(uc.critical_isr_hundredths == 42);
  CHECK(kind_of(parse_threads_uc, {"main 5%"}) == ShellError::Kind::malformed);
  CHECK(kind_of(parse_threads_uc, {"main 5.100%"}) == ShellError::Kind::malformed);
  const TimestampLog log = parse_threads_timestamps({"Triggered at 4200000", "From  1 to  2 at      17"});
  CHECK(log.trigger == 4200000U);
  CHECK(log.records.size() == 1);
  CHECK(log.records[0].in == 2);
  CHECK(kind_of(parse_threads_timestamps, {"From 1 to 64 at 3"}) == ShellError::Kind::malformed);
  CHECK(kind_of(parse_threads_timestamps, {"From x to 1 at 3"}) == ShellError::Kind::malformed);
  const TriggerReply trigger = parse_trigger_reply({"Trigger set by Shell command at    1234"});
  CHECK(trigger.name == "Shell command");
  CHECK(trigger.time == 1234U);
  CHECK_NOTHROW(parse_run_reply({"Run mode"}));
  CHECK(kind_of(parse_run_reply, {"nope"}) == ShellError::Kind::malformed);
}

TEST_CASE("chibios: replies between the echo and the prompt; noise, partial lines") {
  CHECK_FALSE(split_reply("threads_list", "threads_list\r\nThread number  1"));
  CHECK_FALSE(split_reply("threads_list", "\r\nChibiOS/RT Shell\r\nch> "));  // a prompt, but not after our command
  const auto lines = split_reply("threads_list", "junk\x07\r\nch> threads_list\r\nA\r\nB\r\nch> ");
  REQUIRE(lines);
  CHECK(*lines == Lines{"A", "B"});
  const auto empty = split_reply("threads_timestamps_run", "threads_timestamps_run\r\nRun mode\r\nch> ");
  REQUIRE(empty);
  CHECK(*empty == Lines{"Run mode"});
}

TEST_CASE("chibios: reconstruction - exits shift numbers, number 0, several switches in a tick") {
  const Timeline timeline = reconstruct(parse_threads_list(seed_list), parse_threads_timestamps(seed_stamps));
  REQUIRE(timeline.switches.size() == 6);
  CHECK(timeline.switches[0].from == 8);  // Thd18
  CHECK(timeline.switches[0].to == 9);    // Thd19
  CHECK(timeline.switches[1].exit);
  // Absolute system ticks since boot: the seed's first record is at tick 1581.
  CHECK(timeline.start == 1581);
  CHECK(timeline.switches[1].time == doctest::Approx(1581 + 1.0 / 3));
  CHECK(timeline.switches[2].from == 0);
  CHECK(timeline.switches[2].to == 2);
  CHECK(timeline.switches[3].to == 11);  // number 10 after the exit: Thd20
  CHECK(timeline.threads[10].name == "Thd20");
  CHECK(timeline.threads[8].exit_time == doctest::Approx(1581 + 1.0 / 3));
  CHECK_FALSE(timeline.threads[8].alive);
  // Thd19 ran from its IN to its exit; idle from 1581 2/3 to 1591 and 1601 to 1630 (the end).
  REQUIRE(timeline.threads[8].runs.size() == 1);
  CHECK(timeline.threads[8].runs[0].end == doctest::Approx(1581 + 1.0 / 3));
  REQUIRE(timeline.threads[1].runs.size() == 2);
  CHECK(timeline.threads[1].runs[1].start == doctest::Approx(1601));
  CHECK(timeline.threads[1].runs[1].end == doctest::Approx(1630));
  // Thd18 was running when the log began and was switched out at its first instant: no
  // zero-length run, the flag says it.
  CHECK(timeline.threads[7].runs.empty());
  CHECK(timeline.threads[7].running_at_log_start);
  // The thread switched in by the last record (shell, at 1630, the log's end): running when
  // read, its run of no length not written either.
  CHECK(timeline.threads[4].running_when_read);
  CHECK(timeline.threads[4].runs.empty());
  // The seed's log is an excerpt: one exit record against nine listed deletions.
  REQUIRE(timeline.warnings.size() == 1);
  CHECK(timeline.warnings[0].find("1 exit record(s) (Thd19) but threads_list lists 9 deleted") != std::string::npos);
}

TEST_CASE("chibios: edge runs carry flags, zero-length ones are not written") {
  ThreadList list;
  list.alive = {{1, 64, true, "a"}, {2, 64, true, "b"}, {3, 64, true, "c"}};
  TimestampLog log;
  log.records = {{2, 3, 100}, {1, 2, 105}, {3, 1, 120}, {1, 3, 125}};
  const Timeline timeline = reconstruct(list, log);
  CHECK(timeline.warnings.empty());
  const TimelineThread& a = timeline.threads[0];
  const TimelineThread& b = timeline.threads[1];
  const TimelineThread& c = timeline.threads[2];
  // a ran from before the log to 105: a run from the log's start, flagged.
  REQUIRE(a.runs.size() == 2);
  CHECK(a.runs[0].start == 100);
  CHECK(a.runs[0].end == 105);
  CHECK(a.runs[0].from_log_start);
  CHECK(a.running_at_log_start);
  // b was switched out at the log's first instant (no run for that), and still runs when read.
  CHECK(b.running_at_log_start);
  REQUIRE(b.runs.size() == 1);
  CHECK(b.runs[0].start == 105);
  CHECK(b.runs[0].end == 125);
  CHECK(b.runs[0].to_read_time);
  CHECK(b.running_when_read);
  // c was switched in at the last instant: flagged, no run of no length.
  REQUIRE(c.runs.size() == 1);
  CHECK(c.runs[0].end == 120);
  CHECK(c.running_when_read);
}

TEST_CASE("chibios: the deleted list against the exit records") {
  ThreadList list;
  list.alive = {{1, 64, true, "a"}, {2, 64, true, "b"}};
  list.deleted = {{3, 64, true, "c"}};
  TimestampLog log;
  log.records = {{1, 3, 100}, {3, 3, 110}, {0, 2, 110}};
  CHECK(reconstruct(list, log).warnings.empty());  // one exit, one deletion
  list.deleted.push_back({3, 64, true, "d"});      // a stale entry (the firmware's expiry bugs)
  const Timeline stale = reconstruct(list, log);
  REQUIRE(stale.warnings.size() == 1);
  CHECK(stale.warnings[0].find("1 exit record(s) (c) but threads_list lists 2 deleted thread(s) (c, d)") !=
        std::string::npos);
}

TEST_CASE("chibios: a 16-bit system time wraps at 65536") {
  ThreadList list;
  list.alive = {{1, 64, true, "a"}, {2, 64, true, "b"}};
  TimestampLog log;
  log.records = {{1, 2, 65530}, {2, 1, 65535}, {1, 2, 4}, {2, 1, 9}};
  const Timeline as16 = reconstruct(list, log, 16);
  CHECK(as16.switches[2].tick == 65536 + 4);
  CHECK(as16.end == doctest::Approx(65536 + 9));
  CHECK(as16.warnings.empty());
  // Read as 20 bits, the same log has a phantom gap of ~983,000 ticks: a hint says so.
  const Timeline as20 = reconstruct(list, log);
  CHECK(as20.switches[2].tick == 1048576 + 4);
  REQUIRE(as20.warnings.size() == 1);
  CHECK(as20.warnings[0].find("--time-bits 16") != std::string::npos);
  // A record that does not fit 16 bits is named, once.
  log.records.push_back({1, 2, 70000});
  const Timeline too_wide = reconstruct(list, log, 16);
  CHECK(too_wide.warnings.size() == 1);
  CHECK(too_wide.warnings[0].find("70000") != std::string::npos);
}

TEST_CASE("chibios: signed trigger times, thread numbers past 63") {
  const TimestampLog log = parse_threads_timestamps({"Triggered at -1294967296", "From  1 to  2 at      17"});
  CHECK(log.trigger == 3000000000U);  // 2^32 - 1294967296
  CHECK(parse_threads_timestamps({"Triggered at -2147483648"}).trigger == 2147483648U);
  CHECK(kind_of(parse_threads_timestamps, {"Triggered at -2147483649"}) == ShellError::Kind::malformed);
  CHECK(kind_of(parse_threads_timestamps, {"Triggered at 4294967296"}) == ShellError::Kind::malformed);
  CHECK(parse_trigger_reply({"Trigger set by Shell command at -1"}).time == 4294967295U);
  const TriggerReply old_form = parse_trigger_reply({"Trigger set at -5"});  // the ChibiOS_3.1 branch
  CHECK(old_form.time == 4294967291U);
  CHECK(old_form.name.empty());
  Lines many;
  for (int n = 1; n <= 66; ++n)
    many.push_back(fmt::format("Thread number {:2d} : Prio =  64, Log =  No, Name = t{}", n, n));
  many.emplace_back("Deleted threads: ");
  const ThreadList list = parse_threads_list(many);
  CHECK(list.alive.size() == 66);
  CHECK(list.alive.back().number == 66);
  const Timeline timeline = reconstruct(list, parse_threads_timestamps({"From  1 to  2 at 5"}));
  REQUIRE(timeline.warnings.size() == 1);
  CHECK(timeline.warnings[0].find("up to 66") != std::string::npos);
}

TEST_CASE("chibios: 20-bit wrap-around, the trigger across it, and records that do not fit") {
  ThreadList list;
  list.alive = {{1, 64, true, "a"}, {2, 64, false, "b"}};
  TimestampLog log;
  log.records = {{1, 2, 1048570}, {2, 1, 1048575}, {1, 2, 3}, {2, 5, 4}};
  log.trigger = (7U << 20U) + 1;  // tick 1 of the next wrap period
  const Timeline timeline = reconstruct(list, log);
  CHECK(timeline.switches[2].tick == 1048579);  // 1048576 + 3: the first record's wrap period is the first
  CHECK(timeline.end == doctest::Approx(1048580));
  REQUIRE(timeline.trigger);
  CHECK(*timeline.trigger == doctest::Approx(1048577));
  CHECK(timeline.warnings.size() == 1);        // number 5 with two threads listed
  CHECK(timeline.threads[1].ins.size() == 2);  // b (not logged): marks only
  CHECK(timeline.threads[1].runs.empty());
  const auto order = display_order(timeline);
  CHECK(order.size() == 2);
}

TEST_CASE("chibios: save files, as the reference tool writes and reads them") {
  SavedData data;
  data.xmin = 1.5;
  data.xmax = 99;
  data.list_lines = seed_list;
  data.timestamp_lines = seed_stamps;
  const std::string text = format_save(data);
  CHECK(text.starts_with("Saved position\n1.5\n99\n0\n1\nthreads_list\nThread number  1"));
  CHECK(text.ends_with("From  2 to  5 at    1630\nch> "));
  const SavedData back = parse_save(text);
  CHECK(back.list_lines == seed_list);
  CHECK(back.timestamp_lines == seed_stamps);
  CHECK(back.xmax == 99);
  std::string crlf;
  for (const char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  CHECK(parse_save(crlf).timestamp_lines == seed_stamps);
  CHECK_THROWS_AS(parse_save("hello"), tp::Error);
  CHECK_THROWS_AS(parse_save(text.substr(0, text.size() - 4)), tp::Error);  // no final prompt
}

TEST_CASE("chibios: SVG and records") {
  const Timeline timeline = reconstruct(parse_threads_list(seed_list), parse_threads_timestamps(seed_stamps));
  const std::string svg = render_svg(timeline);
  std::size_t rows = 0;
  for (std::size_t at = svg.find("class=\"row\""); at != std::string::npos; at = svg.find("class=\"row\"", at + 1))
    ++rows;
  CHECK(rows == 14);
  CHECK(svg.find("class=\"exit\"") != std::string::npos);
  CHECK(svg.find("Thd20") != std::string::npos);
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  const std::string records = format_timeline(timeline, Format::ndjson, RecordContext{0, 1000, 0});
  CHECK(records.find(R"("kind":"ThreadExit","data":{"thread":9,"name":"Thd19"})") != std::string::npos);
  CHECK(records.find(R"("from_task":0,"to_task":2,"to_name":"idle")") != std::string::npos);
  const std::string csv = format_timeline(timeline, Format::csv, RecordContext{0, 1000, 0});
  CHECK(csv.starts_with("thread,name,prio,logged,start_tick,end_tick,start_us,end_us,from_log_start,to_read_time\n"));
  // Ticks since boot: the seed's Thd20 entered at tick 1591, 1.591 s at 1 kHz.
  CHECK(records.find(R"({"timestamp":1591000,)") != std::string::npos);
  CHECK(records.find(R"("to_name":"Thd20"}},"source":"chibios","clock":"us","tick":1591})") != std::string::npos);
}

namespace {

// A pull: its log, and a timeline with one switch per record at the record's tick (what
// reconstruct() gives when nothing wraps: absolute ticks).
struct Pull {
  std::vector<SwitchRecord> records;
  Timeline timeline;
};

Pull pull_of(const std::vector<SwitchRecord>& records) {
  Pull pull{records, {}};
  for (const auto& record : records) {
    pull.timeline.switches.push_back(Switch{0, record.time, record.out, record.in, false});
  }
  return pull;
}

}  // namespace

TEST_CASE("chibios: watch - each pull's new records, on one tick axis") {
  // The log is a ring read whole by every pull; record i is at time 100 + 10 i.
  const auto records = [](std::uint32_t first, std::uint32_t end) {
    std::vector<SwitchRecord> out;
    for (std::uint32_t i = first; i < end; ++i)
      out.push_back({static_cast<int>(i % 5), static_cast<int>(i % 7), 100 + 10 * i});
    return out;
  };
  WatchStitcher stitcher;
  const Pull first = pull_of(records(0, 20));
  const auto step1 = stitcher.next(first.records, first.timeline);
  CHECK(step1.first == 0);
  CHECK(step1.tick_offset == 0);
  CHECK_FALSE(step1.gap);

  // The ring moved on: records 0-2 scrolled out, 20-22 are new (the last eight of the
  // previous pull are still there to be found). Ticks are absolute in both pulls: nothing to
  // shift, and record 20 lands at 300.
  const Pull second = pull_of(records(3, 23));
  const auto step2 = stitcher.next(second.records, second.timeline);
  CHECK(step2.first == 17);
  CHECK(step2.tick_offset == 0);
  CHECK_FALSE(step2.gap);
  CHECK(step2.tick_offset + static_cast<double>(second.timeline.switches[17].tick) == 300);

  // Nothing new: nothing to emit, the axis does not move.
  const auto step3 = stitcher.next(second.records, second.timeline);
  CHECK(step3.first == 20);
  CHECK(step3.tick_offset == 0);

  // Cleared, or overflowed past every record seen: a gap. The new records (at 7 and 9) go
  // after the last one emitted (record 22 at 320), never before it: the time wrapped since,
  // so a whole wrap period later.
  const Pull cleared = pull_of({{4, 5, 7}, {5, 4, 9}});
  const auto step4 = stitcher.next(cleared.records, cleared.timeline);
  CHECK(step4.gap);
  CHECK(step4.first == 0);
  CHECK(step4.tick_offset == 1048576);

  // The log emptied (cleared again): a gap; then records after an empty pull are all new,
  // with no gap to report, and still forward in time.
  const auto step5 = stitcher.next({}, Timeline{});
  CHECK(step5.gap);
  const Pull after_empty = pull_of({{1, 2, 3}});
  const auto step6 = stitcher.next(after_empty.records, after_empty.timeline);
  CHECK_FALSE(step6.gap);
  CHECK(step6.first == 0);
  CHECK(step6.tick_offset == 2 * 1048576);  // after 1048576 + 9, the cleared pull's last tick

  // Records that came after the clear without a wrap keep their own ticks.
  WatchStitcher fresh;
  const Pull before_clear = pull_of(records(0, 5));
  CHECK(fresh.next(before_clear.records, before_clear.timeline).tick_offset == 0);
  const Pull later = pull_of({{1, 2, 500}});
  const auto step7 = fresh.next(later.records, later.timeline);
  CHECK(step7.gap);
  CHECK(step7.tick_offset == 0);
}

TEST_CASE("chibios: watch - the resume point matches the last records as a sequence") {
  const SwitchRecord a{1, 2, 100};
  const SwitchRecord b{2, 1, 100};
  CHECK(resume_point({}, {a, b}) == 0U);
  CHECK(resume_point({a, b}, {a, b}) == 2U);
  // A repeating pattern: the latest place it matches (the fewest records taken as new).
  CHECK(resume_point({a, b}, {a, b, a, b}) == 4U);
  CHECK(resume_point({b, a, b}, {a, b, a, b, a}) == 4U);
  CHECK_FALSE(resume_point({a, b}, {b, a}));
  CHECK_FALSE(resume_point({a}, {}));
  // Only the last eight records of the previous pull are looked for.
  std::vector<SwitchRecord> previous;
  for (std::uint32_t t = 0; t < 20; ++t) previous.push_back({1, 2, t});
  const std::vector<SwitchRecord> now(previous.begin() + 12, previous.end());
  CHECK(resume_point(previous, now) == now.size());
}
