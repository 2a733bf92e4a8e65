#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "chibios/records.hpp"
#include "chibios/save_file.hpp"
#include "chibios/shell_output.hpp"
#include "chibios/shell_session.hpp"
#include "chibios/timeline.hpp"
#include "chibios/timeline_svg.hpp"
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
