#include <doctest/doctest.h>

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
  CHECK(timeline.switches[1].time == doctest::Approx(1.0 / 3));
  CHECK(timeline.switches[2].from == 0);
  CHECK(timeline.switches[2].to == 2);
  CHECK(timeline.switches[3].to == 11);  // number 10 after the exit: Thd20
  CHECK(timeline.threads[10].name == "Thd20");
  CHECK(timeline.threads[8].exit_time == doctest::Approx(1.0 / 3));
  CHECK_FALSE(timeline.threads[8].alive);
  // Thd19 ran from its IN to its exit; idle from 2/3 to 10 and 20 to 49 (the end).
  REQUIRE(timeline.threads[8].runs.size() == 1);
  CHECK(timeline.threads[8].runs[0].end == doctest::Approx(1.0 / 3));
  REQUIRE(timeline.threads[1].runs.size() == 2);
  CHECK(timeline.threads[1].runs[1].start == doctest::Approx(20));
  CHECK(timeline.threads[1].runs[1].end == doctest::Approx(49));
  // Thd18 was running when the log began: a run from the start, not dropped.
  REQUIRE(timeline.threads[7].runs.size() == 1);
  CHECK(timeline.threads[7].runs[0].start == doctest::Approx(0));
  CHECK(timeline.warnings.empty());
}

TEST_CASE("chibios: 20-bit wrap-around, the trigger across it, and records that do not fit") {
  ThreadList list;
  list.alive = {{1, 64, true, "a"}, {2, 64, false, "b"}};
  TimestampLog log;
  log.records = {{1, 2, 1048570}, {2, 1, 1048575}, {1, 2, 3}, {2, 5, 4}};
  log.trigger = (7U << 20U) + 1;  // tick 1 of the next wrap period
  const Timeline timeline = reconstruct(list, log);
  CHECK(timeline.switches[2].tick == 9);  // 1048576 + 3 - 1048570
  CHECK(timeline.end == doctest::Approx(10));
  REQUIRE(timeline.trigger);
  CHECK(*timeline.trigger == doctest::Approx(7));
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
  CHECK(csv.starts_with("thread,name,prio,logged,start_tick,end_tick,start_us,end_us\n"));
}

namespace {

// A pull: its log, and a timeline with one switch per record at the record's tick counted
// from the pull's first record (what reconstruct() gives when nothing wraps).
struct Pull {
  std::vector<SwitchRecord> records;
  Timeline timeline;
};

Pull pull_of(const std::vector<SwitchRecord>& records) {
  Pull pull{records, {}};
  for (const auto& record : records) {
    pull.timeline.switches.push_back(Switch{0, record.time - records.front().time, record.out, record.in, false});
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
  // previous pull are still there to be found). Record 19 was at absolute tick 190, so this
  // pull's tick 0 (record 3) is absolute 30, and record 20 lands at 200: where it is
  // relative to record 0.
  const Pull second = pull_of(records(3, 23));
  const auto step2 = stitcher.next(second.records, second.timeline);
  CHECK(step2.first == 17);
  CHECK(step2.tick_offset == 30);
  CHECK_FALSE(step2.gap);
  CHECK(step2.tick_offset + static_cast<double>(second.timeline.switches[17].tick) == 200);

  // Nothing new: nothing to emit, the axis does not move.
  const auto step3 = stitcher.next(second.records, second.timeline);
  CHECK(step3.first == 20);
  CHECK(step3.tick_offset == 30);

  // Cleared, or overflowed past every record seen: a gap, and the new records go after the
  // last one emitted (record 22 at absolute 220), never before it.
  const Pull cleared = pull_of({{4, 5, 7}, {5, 4, 9}});
  const auto step4 = stitcher.next(cleared.records, cleared.timeline);
  CHECK(step4.gap);
  CHECK(step4.first == 0);
  CHECK(step4.tick_offset == 221);

  // The log emptied (cleared again): a gap; then records after an empty pull are all new,
  // with no gap to report, and still forward in time.
  const auto step5 = stitcher.next({}, Timeline{});
  CHECK(step5.gap);
  const Pull after_empty = pull_of({{1, 2, 3}});
  const auto step6 = stitcher.next(after_empty.records, after_empty.timeline);
  CHECK_FALSE(step6.gap);
  CHECK(step6.first == 0);
  CHECK(step6.tick_offset == 224);  // after 221 + 2 (the cleared pull's last tick)
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
