// The fleet's state machines and parsers (lib/fleet): subjects and globs, the chunk builder's
// numbering and Loss records, the ship queue's window, back-off and accounting, the reorder
// window, the resume journal, ClickHouse rows both ways, --since.
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <simdjson.h>
#include <cstdio>
#include <filesystem>

#include <string>
#include <utility>
#include <vector>

#include "clickhouse/clickhouse_http.hpp"
#include "clickhouse/clickhouse_rows.hpp"
#include "core/error.hpp"
#include "core/wall_clock.hpp"
#include "fleet/chunk_builder.hpp"
#include "fleet/chunk_order.hpp"
#include "fleet/fleet_subject.hpp"
#include "fleet/query_command.hpp"
#include "fleet/ship_journal.hpp"
#include "fleet/ship_queue.hpp"
#include "nats/stream_check.hpp"
#include "records/fleet_fields.hpp"

using namespace tp;

namespace {

std::string record(std::uint64_t timestamp) {
  return R"({"timestamp":)" + std::to_string(timestamp) +
         R"(,"port":0,"event":{"kind":"Text","data":{"message":"m"}},"source":"itm","clock":"cycles"})";
}

// The seqs of a payload's lines, read back from the stamp.
std::vector<std::uint64_t> seqs_of(const std::string& payload) {
  std::vector<std::uint64_t> seqs;
  simdjson::dom::parser parser;
  std::size_t start = 0;
  while (start < payload.size()) {
    const std::size_t end = payload.find('\n', start);
    REQUIRE(end != std::string::npos);
    seqs.push_back(parser.parse(payload.substr(start, end - start))["seq"].get_uint64().value());
    start = end + 1;
  }
  return seqs;
}

std::vector<std::string> loss_lines(const std::string& payload) {
  std::vector<std::string> found;
  std::size_t start = 0;
  while (start < payload.size()) {
    const std::size_t end = payload.find('\n', start);
    const std::string line = payload.substr(start, end - start);
    if (line.find(R"("kind":"Loss")") != std::string::npos) found.push_back(line);
    start = end + 1;
  }
  return found;
}

}  // namespace

TEST_CASE("fleet subjects: prefixes, board globs, NATS wildcards, header ranges") {
  CHECK(is_subject_prefix("trace"));
  CHECK(is_subject_prefix("lab.rack3"));
  for (const char* bad : {"", ".", "a.", ".a", "a..b", "a.*", "a.>", "a b"}) {
    CAPTURE(bad);
    CHECK_FALSE(is_subject_prefix(bad));
  }
  CHECK(board_subject("trace", "b07") == "trace.b07");
  CHECK(message_id("b07", "r1", 42) == "b07.r1.42");
  CHECK(board_matches("rack3-*", "rack3-b07"));
  CHECK(board_matches("*", "x"));
  CHECK(board_matches("b?7", "b07"));
  CHECK(board_matches("*-b*7", "rack3-b07"));
  CHECK_FALSE(board_matches("rack3-*", "rack4-b07"));
  CHECK_FALSE(board_matches("b?", "b07"));
  CHECK(subject_matches("trace.>", "trace.b07"));
  CHECK(subject_matches("trace.*", "trace.b07"));
  CHECK(subject_matches("trace.b07", "trace.b07"));
  CHECK_FALSE(subject_matches("trace.*", "trace.a.b"));
  CHECK_FALSE(subject_matches("trace.>", "trace"));
  CHECK_FALSE(subject_matches("other.>", "trace.b07"));
  CHECK(seq_range_of("3", "9")->last == 9);
  CHECK_FALSE(seq_range_of("9", "3"));
  CHECK_FALSE(seq_range_of("x", "3"));
  CHECK_FALSE(seq_range_of("", "3"));
  CHECK(is_fleet_name(new_run_id()));
}

TEST_CASE("chunk builder: seqs from 0, sealed by size and by age, every record whole") {
  std::vector<Chunk> chunks;
  ChunkLimits limits;
  limits.max_bytes = 1024;
  limits.max_age_us = 50'000;
  ChunkBuilder builder("b", "r", limits, [&](Chunk&& chunk, bool) {
    chunks.push_back(std::move(chunk));
    return true;
  });
  for (int i = 0; i < 40; ++i) builder.add(record(static_cast<std::uint64_t>(i)), 1000);
  CHECK(chunks.size() >= 4);  // each stamped record is about 170 bytes
  for (const Chunk& chunk : chunks) CHECK(chunk.payload.size() <= limits.max_bytes);
  REQUIRE(builder.due_us());
  CHECK(*builder.due_us() == chunks.back().opened_us + 50'000);
  builder.seal_if_due(1000 + 49'999);
  const std::size_t before = chunks.size();
  CHECK(chunks.size() == before);
  builder.seal_if_due(1000 + 50'000);
  CHECK(chunks.size() == before + 1);
  CHECK_FALSE(builder.due_us());
  std::vector<std::uint64_t> all;
  for (const Chunk& chunk : chunks) {
    const auto seqs = seqs_of(chunk.payload);
    CHECK(seqs.front() == chunk.first_seq);
    CHECK(seqs.back() == chunk.last_seq);
    all.insert(all.end(), seqs.begin(), seqs.end());
  }
  REQUIRE(all.size() == 40);
  for (std::uint64_t i = 0; i < 40; ++i) CHECK(all[i] == i);
  CHECK(builder.next_seq() == 40);
}

TEST_CASE("chunk builder: refused chunks are told by one Loss record with the exact range") {
  std::vector<Chunk> taken;
  bool refuse = false;
  ChunkLimits limits;
  limits.max_bytes = 400;  // two records per chunk
  ChunkBuilder builder("b", "r", limits, [&](Chunk&& chunk, bool) {
    if (refuse) return false;
    taken.push_back(std::move(chunk));
    return true;
  });
  for (int i = 0; i < 4; ++i) builder.add(record(1), 1);  // seqs 0-1 taken, 2-3 open
  refuse = true;
  for (int i = 0; i < 6; ++i) builder.add(record(1), 2);  // 2-3 and every later chunk refused
  builder.seal();
  // Each chunk opened after a refusal began with a Loss record (a seq too), refused with it:
  // the untold range runs from the first lost seq to the last one numbered.
  // From the input: 10 records and a Loss record at the head of each of the 6 chunks opened
  // after a refusal (one per record added while refusing: a Loss record and a record fill one)
  // are numbered; all but the first chunk's seqs 0-1 are lost.
  const std::uint64_t numbered = 10 + 6;
  REQUIRE(builder.untold_loss());
  CHECK(builder.next_seq() == numbered);
  CHECK(builder.untold_loss()->first == 2);
  CHECK(builder.untold_loss()->last == numbered - 1);
  CHECK(builder.lost_buffer_full() == numbered - 2);
  const std::uint64_t lost_through = builder.next_seq() - 1;
  refuse = false;
  builder.add(record(1), 4);  // the Loss record telling 2..lost_through, then the record
  builder.seal();
  REQUIRE(taken.size() == 2);
  const auto losses = loss_lines(taken.back().payload);
  REQUIRE(losses.size() == 1);
  CHECK(losses[0].find(R"("data":{"first_seq":2,"last_seq":)" + std::to_string(lost_through) + R"(,"records":)" +
                       std::to_string(lost_through - 1) + R"(,"reason":"buffer_full"})") != std::string::npos);
  CHECK(seqs_of(taken.back().payload) == std::vector<std::uint64_t>{lost_through + 1, lost_through + 2});
  CHECK_FALSE(builder.untold_loss());
}

TEST_CASE("chunk builder: a record over the largest message is numbered and told too_large") {
  std::vector<Chunk> taken;
  ChunkLimits limits;
  limits.max_message = 300;
  ChunkBuilder builder("b", "r", limits, [&](Chunk&& chunk, bool) {
    taken.push_back(std::move(chunk));
    return true;
  });
  builder.add(record(1), 1);
  builder.add(
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":")" + std::string(400, 'x') + R"("}}})", 1);
  builder.add(record(2), 1);
  builder.add_too_large(1);  // a line too long to hold at all
  builder.seal();
  REQUIRE(taken.size() == 1);
  CHECK(seqs_of(taken[0].payload) == std::vector<std::uint64_t>{0, 2, 3, 5});
  const auto losses = loss_lines(taken[0].payload);
  REQUIRE(losses.size() == 2);
  CHECK(losses[0].find(R"("first_seq":1,"last_seq":1,"records":1,"reason":"too_large")") != std::string::npos);
  CHECK(losses[1].find(R"("first_seq":4,"last_seq":4,"records":1,"reason":"too_large")") != std::string::npos);
  CHECK(builder.lost_too_large() == 2);
}

TEST_CASE("chunk builder: a resumed run skips what was acknowledged and cuts the planned chunks again") {
  std::vector<Chunk> taken;
  ChunkLimits limits;
  limits.max_bytes = 100'000;
  ChunkBuilder builder("b", "r", limits, [&](Chunk&& chunk, bool) {
    taken.push_back(std::move(chunk));
    return true;
  });
  builder.resume(
      4, InputMark{},
      {PlannedChunk{SeqRange{2, 4}, {}}, PlannedChunk{SeqRange{5, 7}, {}}, PlannedChunk{SeqRange{8, 8}, {}}});
  for (int i = 0; i < 12; ++i) builder.add(record(static_cast<std::uint64_t>(i)), 1);
  builder.seal();
  CHECK(builder.skipped() == 5);
  REQUIRE(taken.size() == 3);
  CHECK(taken[0].first_seq == 5);
  CHECK(taken[0].last_seq == 7);
  CHECK(taken[1].first_seq == 8);
  CHECK(taken[1].last_seq == 8);
  CHECK(taken[2].first_seq == 9);
  CHECK(taken[2].last_seq == 11);
}

TEST_CASE("chunk builder: at the end, an untold loss gets a chunk of its own, offered to wait") {
  std::vector<bool> waits;
  bool refuse = true;
  ChunkBuilder builder("b", "r", ChunkLimits{}, [&](Chunk&&, bool must_wait) {
    waits.push_back(must_wait);
    return !refuse;
  });
  builder.add(record(1), 1);
  builder.seal();
  refuse = false;
  builder.tell_loss(2);
  CHECK(waits == std::vector<bool>{false, true});
  CHECK_FALSE(builder.untold_loss());
}

namespace {

Chunk chunk_of(std::uint64_t first, std::uint64_t last, std::size_t bytes = 100) {
  Chunk chunk;
  chunk.first_seq = first;
  chunk.last_seq = last;
  chunk.payload.assign(bytes, 'x');
  return chunk;
}

}  // namespace

// The publisher's copy of a chunk it sends (here: nothing to copy).
void keep(const Chunk&) {}

TEST_CASE("ship queue: the window, the buffer, oldest first, back-off, retry on reconnection") {
  ShipLimits limits;
  limits.window = 2;
  limits.buffer_bytes = 350;
  limits.ack_timeout_us = 1000;
  limits.min_backoff_us = 100;
  limits.max_backoff_us = 800;
  ShipQueue queue(limits);
  CHECK(queue.offer(chunk_of(0, 9)));
  CHECK(queue.offer(chunk_of(10, 19)));
  CHECK(queue.offer(chunk_of(20, 29)));
  CHECK_FALSE(queue.offer(chunk_of(30, 39)));  // 400 bytes > 350: refused
  CHECK(queue.counts().chunks_refused == 1);

  auto send = queue.next(0, 0, keep);
  REQUIRE(send);
  CHECK(send->first_seq == 0);
  send = queue.next(0, 0, keep);
  REQUIRE(send);
  CHECK(send->first_seq == 10);
  CHECK_FALSE(queue.next(0, 0, keep));  // the window is full

  queue.failed(0, 10);  // seq 0-9 back in line, first; back-off 100 us (+-25%)
  CHECK_FALSE(queue.next(10, 10, keep));
  send = queue.next(10 + 200, 10 + 200, keep);
  REQUIRE(send);
  CHECK(send->first_seq == 0);
  CHECK(send->resend);
  CHECK(queue.counts().retries == 1);

  queue.acked(10, false);
  CHECK_FALSE(queue.acked_through().has_value());  // seq 0-9 still out
  queue.acked(0, true);
  CHECK(queue.acked_through()->seq == 19);
  CHECK(queue.counts().duplicates == 1);
  CHECK(queue.counts().records_acked == 20);

  send = queue.next(300, 300, keep);
  REQUIRE(send);
  CHECK(send->first_seq == 20);
  queue.expire(300 + 999);
  CHECK(queue.counts().failures == 1);
  queue.expire(300 + 1000);  // no ack within the timeout: failed, backing off
  CHECK(queue.counts().failures == 2);
  CHECK_FALSE(queue.next(1300, 1300, keep));
  queue.acked(20, false);  // a late ack of the send that timed out: the server has it
  CHECK(queue.unacknowledged().empty());
  CHECK_FALSE(queue.next(5000, 5000, keep));  // nothing is left to send

  REQUIRE(queue.offer(chunk_of(40, 49)));
  std::string copied;
  send = queue.next(6000, 6000, [&](const Chunk& chunk) { copied = chunk.payload; });
  REQUIRE(send);
  CHECK(copied == std::string(100, 'x'));  // handed over under the lock, to be copied
  queue.failed(40, 6000);
  CHECK_FALSE(queue.next(6000, 6000, keep));
  queue.retry_now();  // the connection is back: no back-off
  CHECK(queue.next(6000, 6000, keep));
  queue.acked(40, false);
  queue.close_input();
  CHECK(queue.finished());
  CHECK(queue.acked_through()->seq == 49);  // the refused chunk is behind (a Loss record tells it)
}

TEST_CASE("ship queue: once the journal failed, only chunks sent before go out; the rest stays, unsent") {
  ShipLimits limits;
  limits.window = 4;
  limits.buffer_bytes = 250;
  limits.min_backoff_us = 0;
  limits.max_backoff_us = 0;
  ShipQueue queue(limits);
  const auto keep = [](const Chunk&) {};
  REQUIRE(queue.offer(chunk_of(0, 9)));
  REQUIRE(queue.offer(chunk_of(10, 19)));
  const auto sent = queue.next(0, 0, keep);
  REQUIRE(sent);
  CHECK(sent->first_seq == 0);
  auto second = queue.next(0, 0, keep);
  REQUIRE(second);
  queue.not_sent(second->first_seq);  // its journal line could not be written: never sent
  queue.hold_unsent();
  CHECK(queue.offer(chunk_of(20, 29), true));  // over the buffer, taken without waiting
  queue.failed(0, 0);
  const auto resend = queue.next(1, 1, keep);
  REQUIRE(resend);
  CHECK(resend->first_seq == 0);
  CHECK(resend->resend);
  CHECK_FALSE(queue.next(2, 2, keep));  // 10-19 and 20-29 were never sent: held
  queue.acked(0, false);
  CHECK_FALSE(queue.finished());  // the input is still open
  queue.close_input();
  CHECK(queue.finished());  // what remains was never sent
  const auto left = queue.unacknowledged();
  REQUIRE(left.size() == 1);
  CHECK(left[0].first == 10);
  CHECK(left[0].last == 29);
}

TEST_CASE("ship queue: failures of one round double the back-off once") {
  ShipLimits limits;
  limits.window = 8;
  limits.min_backoff_us = 1000;
  limits.max_backoff_us = 1'000'000;
  ShipQueue queue(limits);
  for (std::uint64_t i = 0; i < 4; ++i) {
    REQUIRE(queue.offer(chunk_of(i * 10, i * 10 + 9)));
    REQUIRE(queue.next(0, 0, keep));
  }
  for (std::uint64_t i = 0; i < 4; ++i) queue.failed(i * 10, 0);  // one round
  CHECK(queue.next(1250, 1250, keep));                            // at most 1000 us + 25%, not 8000
  const auto unacknowledged = queue.unacknowledged();
  REQUIRE(unacknowledged.size() == 1);
  CHECK(unacknowledged[0].first == 0);
  CHECK(unacknowledged[0].last == 39);
}

namespace {

std::string lines(std::uint64_t first, std::uint64_t last) {
  std::string text;
  for (std::uint64_t seq = first; seq <= last; ++seq) text += std::to_string(seq) + "\n";
  return text;
}

struct OrderProbe {
  std::string out;
  std::vector<std::string> gaps;
  ChunkOrder order;
  explicit OrderProbe(ChunkOrder::Limits limits)
      : order(
            limits, [this](std::string_view text) { out += text; },
            [this](std::string_view board, std::string_view run, SeqRange missing) {
              gaps.push_back(std::string(board) + " " + std::string(run) + " " + std::to_string(missing.first) + "-" +
                             std::to_string(missing.last));
            }) {}
};

}  // namespace

TEST_CASE("chunk order: an early chunk waits for the ones before it; duplicates dropped") {
  OrderProbe probe(ChunkOrder::Limits{8, 1000});
  probe.order.add("b", "r", {5, 9}, lines(5, 9), 0);  // where this reader came in
  probe.order.add("b", "r", {15, 19}, lines(15, 19), 0);
  probe.order.add("b", "r", {10, 14}, lines(10, 14), 0);
  CHECK(probe.out == lines(5, 19));
  CHECK(probe.order.reordered() == 1);
  probe.order.add("b", "r", {10, 14}, lines(10, 14), 0);  // all of it again
  probe.order.add("b", "r", {18, 22}, lines(18, 22), 0);  // 18-19 again, 20-22 new
  CHECK(probe.out == lines(5, 22));
  CHECK(probe.order.duplicates() == 7);
  CHECK(probe.gaps.empty());
  probe.order.add("c", "r", {0, 1}, lines(0, 1), 0);  // another run: its own order
  CHECK(probe.order.records() == 20);
}

TEST_CASE("chunk order: what never comes is a gap, after max_wait, max_held, or at the end") {
  OrderProbe probe(ChunkOrder::Limits{2, 1000});
  probe.order.add("b", "r", {0, 4}, lines(0, 4), 0);
  probe.order.add("b", "r", {10, 14}, lines(10, 14), 100);
  probe.order.tick(1099);
  CHECK(probe.gaps.empty());
  probe.order.tick(1100);
  CHECK(probe.gaps == std::vector<std::string>{"b r 5-9"});
  CHECK(probe.out == lines(0, 4) + lines(10, 14));
  probe.order.add("b", "r", {20, 24}, lines(20, 24), 2000);
  probe.order.add("b", "r", {30, 34}, lines(30, 34), 2000);
  probe.order.add("b", "r", {40, 44}, lines(40, 44), 2000);  // three held: over max_held
  CHECK(probe.gaps.size() == 2);
  probe.order.add("b", "r", {50, 54}, lines(50, 54), 2000);
  probe.order.flush();
  CHECK(probe.gaps == std::vector<std::string>{"b r 5-9", "b r 15-19", "b r 25-29", "b r 35-39", "b r 45-49"});
  CHECK(probe.out == lines(0, 4) + lines(10, 14) + lines(20, 24) + lines(30, 34) + lines(40, 44) + lines(50, 54));
  CHECK(probe.order.missing() == 25);
  CHECK(probe.order.held() == 0);
}

TEST_CASE("chunk order: what comes after its gap was told, or before the first written, is written late") {
  OrderProbe probe(ChunkOrder::Limits{1, 1000});
  probe.order.add("b", "r", {10, 14}, lines(10, 14), 0);  // an earlier reader of a durable died holding 0-9
  probe.order.add("b", "r", {0, 4}, lines(0, 4), 0);      // handed back after its ack wait
  probe.order.add("b", "r", {5, 12}, lines(5, 12), 0);    // 5-9 written nowhere, 10-12 here
  probe.order.add("b", "r", {15, 16}, lines(15, 16), 0);
  probe.order.add("b", "r", {3, 4}, lines(3, 4), 0);  // written: a duplicate
  CHECK(probe.out == lines(10, 14) + lines(0, 4) + lines(5, 9) + lines(15, 16));
  CHECK(probe.order.late() == 10);
  CHECK(probe.order.duplicates() == 5);
  probe.order.add("b", "r", {20, 21}, lines(20, 21), 0);
  probe.order.add("b", "r", {30, 31}, lines(30, 31), 0);  // two held: 17-19 told missing
  probe.order.tick(1000);                                 // held max_wait: 22-29 told missing
  CHECK(probe.gaps == std::vector<std::string>{"b r 17-19", "b r 22-29"});
  probe.order.add("b", "r", {18, 24}, lines(18, 24), 0);  // 18-19 and 22-24 late, 20-21 written
  probe.order.add("b", "r", {17, 19}, lines(17, 19), 0);  // 17 late, 18-19 written by now
  CHECK(probe.out == lines(10, 14) + lines(0, 4) + lines(5, 9) + lines(15, 16) + lines(20, 21) + lines(30, 31) +
                         lines(18, 19) + lines(22, 24) + lines(17, 17));
  CHECK(probe.order.late() == 16);
  CHECK(probe.order.duplicates() == 9);
  CHECK(probe.order.records() == 27);
}

TEST_CASE("ship journal: the run, the acknowledged seq and mark, the chunks after it; a cut last line") {
  const std::string text =
      "tracepipe-ship-journal 2\nboard b07\nrun r-1\nchunk 0 9 90 00000000000000a1\nchunk 10 19 190 00000000000000a2\n"
      "acked 9 90 00000000000000a1\nchunk 20 29 290 00000000000000a3\nchunk 30 39 390 000000000";
  const JournalState state = parse_ship_journal(text, "j");
  CHECK(state.board == "b07");
  CHECK(state.run == "r-1");
  CHECK(state.acked_through == 9);
  CHECK(state.acked_mark == InputMark{90, 0xa1});
  REQUIRE(state.published_after_acked.size() == 2);  // the cut "chunk 30 ..." line never was
  CHECK(state.published_after_acked[0].range.first == 10);
  CHECK(state.published_after_acked[0].after == InputMark{190, 0xa2});
  CHECK(state.published_after_acked[1].range.last == 29);
}

TEST_CASE("ship journal: refused when malformed, cut in its header, of version 1, or too large") {
  const auto refused = [](const std::string& text, const char* why) {
    CHECK_THROWS_WITH_AS((void)parse_ship_journal(text, "j"), doctest::Contains(why), Error);
  };
  refused("hello\n", "not a trace-ship journal");
  refused("", "not a trace-ship journal");
  refused("tracepipe-ship-jour", "not a trace-ship journal");
  refused("tracepipe-ship-journal 3\nboard b\nrun r\n", "not a trace-ship journal");
  refused("tracepipe-ship-journal 1\nboard b\nrun r\nacked 999\n", "version-1 journal");
  refused("tracepipe-ship-journal 2\nboard b\nrun 20261127T1010", "without its board and run");  // cut in the run id
  refused("tracepipe-ship-journal 2\nboard b\n", "without its board and run");
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nchunk x 1 1 0000000000000001\n", "j:4: not a journal line");
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nchunk 5 1 1 0000000000000001\n", "j:4");  // backwards
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nchunk 0 9 1 0000000000000001\nchunk 5 7 1 0000000000000001\n",
          "j:5");                                                              // overlapping the chunk before
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nacked 1\n", "j:4");       // no mark
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nacked 1 2 12\n", "j:4");  // short hash
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nrun s\n", "j:4");         // a second run
  refused("tracepipe-ship-journal 2\nboard a.b\nrun r\n", "j:2");
  refused("tracepipe-ship-journal 2\nboard b\nrun r\n\n", "j:4");
  // Seqs of 2^63 or more are none of trace-ship's (an acked 2^64-1 wrapped to "skip nothing").
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nacked 18446744073709551615 1 0000000000000001\n", "j:4");
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nacked 9223372036854775808 1 0000000000000001\n", "j:4");
  refused("tracepipe-ship-journal 2\nboard b\nrun r\nchunk 0 9223372036854775808 1 0000000000000001\n", "j:4");
  std::string huge = "tracepipe-ship-journal 2\nboard b\nrun r\n";
  huge.resize(max_journal_bytes + 1, '\n');
  refused(huge, "larger than any trace-ship journal");
}

TEST_CASE("ship journal: written, cut by a full disk's short write, read back; not a regular file: refused") {
  char directory_template[] = "/tmp/tp-journal-XXXXXX";
  const std::string directory = ::mkdtemp(directory_template);
  const std::string path = directory + "/j";
  {
    ShipJournal journal(path, "b", "r");
    journal.chunk_published(PlannedChunk{SeqRange{0, 4}, InputMark{50, 7}});
    journal.chunk_published(PlannedChunk{SeqRange{5, 9}, InputMark{100, 8}});
    journal.acked_through(4, InputMark{50, 7});
  }
  {
    ShipJournal resumed(path, "b", "r");  // a resume sends the chunk it re-cut: not told twice
    resumed.chunk_published(PlannedChunk{SeqRange{5, 9}, InputMark{100, 8}});
  }
  {
    std::FILE* file = std::fopen(path.c_str(), "a");
    std::fputs("chunk 10 14 150 00000000", file);  // what a full disk leaves of a line
    std::fclose(file);
  }
  const auto state = read_ship_journal(path);
  REQUIRE(state);
  CHECK(state->acked_through == 4);
  CHECK(state->acked_mark == InputMark{50, 7});
  REQUIRE(state->published_after_acked.size() == 1);
  CHECK(state->published_after_acked[0].after == InputMark{100, 8});
  CHECK_FALSE(read_ship_journal(directory + "/none"));
  CHECK_THROWS_WITH_AS((void)read_ship_journal(directory), doctest::Contains("a directory"), Error);
  CHECK_THROWS_WITH_AS((void)read_ship_journal("/dev/zero"), doctest::Contains("not a regular file"), Error);
  const std::string fifo = directory + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS((void)read_ship_journal(fifo), doctest::Contains("not a regular file"), Error);
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(max_journal_bytes) + 1) == 0);
  CHECK_THROWS_WITH_AS((void)read_ship_journal(path), doctest::Contains("larger than any"), Error);
  std::filesystem::remove_all(directory);
}

TEST_CASE("chunk builder: a resume refuses an input that is not the one recorded, before shipping any of it") {
  std::vector<Chunk> taken;
  const auto builder_of = [&] {
    return ChunkBuilder("b", "r", ChunkLimits{}, [&](Chunk&& chunk, bool) {
      taken.push_back(std::move(chunk));
      return true;
    });
  };
  const auto marks = [](const std::vector<std::string>& lines) {
    std::vector<InputMark> out;
    InputMark mark;
    for (const std::string& line : lines) {
      mark.add(line + "\n");
      out.push_back(mark);
    }
    return out;
  };
  const std::vector<std::string> recorded{record(1), record(2), record(3), record(4)};
  const std::vector<std::string> other{record(1), record(9), record(3), record(4)};
  const auto recorded_marks = marks(recorded);
  const auto other_marks = marks(other);
  ChunkBuilder same = builder_of();
  same.resume(1, recorded_marks[1], {PlannedChunk{SeqRange{2, 3}, recorded_marks[3]}});
  for (std::size_t i = 0; i < 4; ++i) same.add(recorded[i], 1, recorded_marks[i]);
  same.check_resumed_input_complete();
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].first_seq == 2);

  taken.clear();
  ChunkBuilder stale = builder_of();
  stale.resume(1, recorded_marks[1], {});
  stale.add(other[0], 1, other_marks[0]);
  CHECK_THROWS_WITH_AS(stale.add(other[1], 1, other_marks[1]), doctest::Contains("not the one the journal recorded"),
                       Error);
  CHECK(taken.empty());

  ChunkBuilder shorter = builder_of();
  shorter.resume(9, recorded_marks[3], {});
  for (std::size_t i = 0; i < 4; ++i) shorter.add(recorded[i], 1, recorded_marks[i]);
  CHECK_THROWS_WITH_AS(shorter.check_resumed_input_complete(), doctest::Contains("ended before seq 9"), Error);

  // A planned chunk larger than any message (a journal that lies about its ranges): refused
  // when it passes the largest message, not held in memory until the input ends.
  ChunkLimits small;
  small.max_message = 2000;
  ChunkBuilder overgrown("b", "r", small, [&](Chunk&& chunk, bool) {
    taken.push_back(std::move(chunk));
    return true;
  });
  overgrown.resume(std::nullopt, InputMark{}, {PlannedChunk{SeqRange{0, 1'000'000'000}, recorded_marks[3]}});
  CHECK_THROWS_WITH_AS(
      [&] {
        for (std::uint64_t i = 0; i < 100; ++i) overgrown.add(record(i), 1, InputMark{i, i});
      }(),
      doctest::Contains("larger than any message"), Error);
  CHECK(taken.empty());

  ChunkBuilder replanned = builder_of();  // nothing acknowledged, a chunk published: its bytes checked
  replanned.resume(std::nullopt, InputMark{}, {PlannedChunk{SeqRange{0, 1}, recorded_marks[1]}});
  replanned.add(other[0], 1, other_marks[0]);
  CHECK_THROWS_WITH_AS(replanned.add(other[1], 1, other_marks[1]), doctest::Contains("differ"), Error);
  CHECK(taken.empty());
}

TEST_CASE("chunk builder: a resume skips both seqs of a record too large (its own and its Loss record's)") {
  std::vector<Chunk> taken;
  ChunkBuilder builder("b", "r", ChunkLimits{}, [&](Chunk&& chunk, bool) {
    taken.push_back(std::move(chunk));
    return true;
  });
  builder.resume(3, InputMark{}, {});
  builder.add(record(1), 1);  // seq 0
  builder.add_too_large(1);   // seqs 1 (the record) and 2 (its Loss record)
  builder.add(record(2), 1);  // seq 3
  builder.add(record(3), 1);  // seq 4: the first shipped
  builder.seal();
  REQUIRE(taken.size() == 1);
  CHECK(seqs_of(taken[0].payload) == std::vector<std::uint64_t>{4});
}

namespace {

// What ClickHouse's TabSeparated output does to a string (\t \n \\ \' and control escapes).
std::string tsv_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The TSV row ClickHouse would give back for the JSONEachRow row.
std::string tsv_row_of(const std::string& json_row) {
  simdjson::dom::parser parser;
  simdjson::dom::object row = parser.parse(json_row).get_object().value();
  std::string tsv;
  for (const auto member : row) {
    if (!tsv.empty()) tsv += '\t';
    if (member.value.is_string()) {
      tsv += tsv_escape(member.value.get_string().value());
    } else {
      tsv += simdjson::minify(member.value);
    }
  }
  return tsv;
}

}  // namespace

TEST_CASE("ClickHouse rows: flat columns, and back to the very same record") {
  const std::vector<std::string> records = {
      R"({"timestamp":5,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":1,"to_task":2}},"source":"itm","clock":"cycles","board":"b07","run":"r1","seq":41,"host_us":1795000000123456})",
      R"({"timestamp":7,"port":0,"event":{"kind":"IdleEnter"},"source":"itm","clock":"cycles","time_exact":false,"board":"b","run":"r","seq":0,"host_us":0})",
      R"({"timestamp":9,"port":0,"event":{"kind":"Text","data":{"message":"tab\there, nl\n, quote \" and 'apos' \\ é"}},"source":"itm","clock":"cycles","board":"b","run":"r","seq":1,"host_us":86400000001})",
      R"({"timestamp":3,"port":0,"event":{"kind":"Text","data":{"message":"main"}},"source":"chibios","clock":"ticks","tick":3,"board":"b","run":"r","seq":2,"host_us":5})",
      R"({"timestamp":3,"port":0,"event":{"kind":"Text","data":{"message":"no source, no clock"}},"board":"b","run":"r","seq":3,"host_us":5})",
  };
  simdjson::dom::parser parser;
  for (const std::string& line : records) {
    CAPTURE(line);
    std::string rows;
    std::string problem;
    REQUIRE(append_clickhouse_row(parser, line, rows, problem));
    REQUIRE(rows.back() == '\n');
    rows.pop_back();
    std::string back;
    REQUIRE(append_record_from_tsv(parser, tsv_row_of(rows), back, problem));
    CHECK(back == line + "\n");
  }
  std::string rows;
  std::string problem;
  REQUIRE(append_clickhouse_row(parser, records[0], rows, problem));
  CHECK(
      rows ==
      R"({"board":"b07","run":"r1","seq":41,"host_us":1795000000123456,"day":"2026-11-18","timestamp":5,"clock":"cycles","port":1,"source":"itm","time_exact":1,"kind":"TaskSwitch","data":"{\"from_task\":1,\"to_task\":2}","extra":""})"
      "\n");
  rows.clear();
  CHECK_FALSE(append_clickhouse_row(parser, R"({"timestamp":1,"port":0,"event":{"kind":"IdleEnter"}})", rows, problem));
  CHECK(problem.find("fleet fields") != std::string::npos);
  CHECK_FALSE(append_clickhouse_row(parser, R"({"board":"b","run":"r","seq":1,"host_us":2})", rows, problem));
  CHECK_FALSE(append_clickhouse_row(parser, "not json", rows, problem));
  CHECK(rows.empty());
  // A repeated field of the record is refused (the validator's rule); another member's is kept.
  CHECK_FALSE(append_clickhouse_row(
      parser,
      R"({"timestamp":1,"port":2,"event":{"kind":"IdleEnter"},"board":"first","board":"second","run":"r","seq":3,"host_us":4})",
      rows, problem));
  CHECK(problem.find("appears twice") != std::string::npos);
  REQUIRE(append_clickhouse_row(
      parser,
      R"({"timestamp":1,"port":2,"event":{"kind":"IdleEnter"},"board":"b","run":"r","seq":3,"host_us":4,"x":[1, 2],"x":null})",
      rows, problem));
  CHECK(
      rows ==
      R"({"board":"b","run":"r","seq":3,"host_us":4,"day":"1970-01-01","timestamp":1,"clock":"","port":2,"source":"","time_exact":1,"kind":"IdleEnter","data":"","extra":"{\"x\":[1,2],\"x\":null}"})"
      "\n");
  rows.clear();
  CHECK_FALSE(append_clickhouse_row(
      parser, R"({"timestamp":1,"port":2,"event":{"kind":"IdleEnter"},"board":"b","run":"r","seq":"3","host_us":4})",
      rows, problem));
  CHECK(problem.find("seq") != std::string::npos);
  CHECK(rows.empty());
  std::string out;
  CHECK_FALSE(append_record_from_tsv(parser, "", out, problem));
  CHECK_FALSE(append_record_from_tsv(parser, "a\tb", out, problem));
  CHECK_FALSE(append_record_from_tsv(parser, "b\tr\tx\t1\t2026-01-01\t1\tcycles\t0\titm\t1\tText\t{}\t", out, problem));
  CHECK_FALSE(
      append_record_from_tsv(parser, "b\tr\t1\t1\t2026-01-01\t1\tcycles\t0\titm\t1\tText\t{}\t\textra", out, problem));
  CHECK(out.empty());
}

TEST_CASE("ClickHouse rows: a record not valid under the schema, or not held as it is, is refused and named") {
  const std::string fleet = R"(,"board":"b","run":"r","seq":7,"host_us":5})";
  const std::string text = R"("event":{"kind":"Text","data":{"message":"m"}})";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"({"timestamp":1,"port":70000,)" + text + fleet, "port"},
      {R"({"timestamp":1,"port":1,"clock":5,)" + text + fleet, "clock"},
      {R"({"timestamp":1,"port":1,"time_exact":"yes",)" + text + fleet, "time_exact"},
      {R"({"timestamp":1,"port":1,"time_exact":true,)" + text + fleet, "time_exact"},
      {R"({"timestamp":1,"port":1,"source":"",)" + text + fleet, "source"},
      {R"({"timestamp":1,"port":1,"event":{"kind":"Text","data":{}})" + fleet, "message"},
      {R"({"timestamp":1,"frames":[{"port":1,"data":[1],"timestamp":1}])" + fleet, "frames"},
      {R"({"timestamp":1,"port":1,)" + text + R"(,"board":"b","run":"r","seq":7,"host_us":18446744073709551615})",
       "2105-12-31"},
      {R"({"timestamp":1,"port":1,)" + text + R"(,"board":"b","run":"r","seq":7,"host_us":)" +
           std::to_string(max_stored_host_us + 1) + "}",
       "2105-12-31"},
      {R"({"timestamp":1,"port":1,)" + text + R"(,"board":"b","run":"r","seq":7})", "fleet fields"},
      {R"({"timestamp":-1,"port":1,)" + text + fleet, "timestamp"},
  };
  simdjson::dom::parser parser;
  for (const auto& refusal : refused) {
    const std::string& line = refusal.first;  // a named variable: clang 14 cannot capture a binding
    const std::string& why = refusal.second;
    CAPTURE(line);
    std::string rows;
    std::string problem;
    CHECK_FALSE(append_clickhouse_row(parser, line, rows, problem));
    CHECK(rows.empty());
    CHECK(problem.find("board b run r seq 7: ") == 0);
    CHECK(problem.find(why) != std::string::npos);
  }
  // The last day ClickHouse's Date holds is stored.
  std::string rows;
  std::string problem;
  REQUIRE(append_clickhouse_row(parser,
                                R"({"timestamp":1,"port":255,)" + text +
                                    R"(,"board":"b","run":"r","seq":7,"host_us":)" +
                                    std::to_string(max_stored_host_us) + "}",
                                rows, problem));
  CHECK(rows.find(R"("day":"2105-12-31")") != std::string::npos);
  // A hostile board is named as a JSON string, cut.
  CHECK_FALSE(append_clickhouse_row(
      parser, R"({"timestamp":1,"port":1,"board":"a\tb\n)" + std::string(300, 'x') + "\"}", rows, problem));
  CHECK(problem.find(R"(board "a\tb\n)") == 0);
  CHECK(problem.size() < 300);
}

TEST_CASE("ClickHouse rows: members of event beside kind and data, and any other member, come back") {
  const std::vector<std::string> records = {
      R"({"timestamp":5,"port":1,"event":{"kind":"Text","data":{"message":"m"},"note":"kept","n":[1,{"a":null}]},"source":"itm","board":"b","run":"r","seq":1,"host_us":2})",
      R"({"timestamp":5,"port":1,"event":{"kind":"IdleEnter","why":1},"tick":9,"peer":"x","board":"b","run":"r","seq":2,"host_us":2})",
      R"({"timestamp":5,"port":3,"event":{"kind":"Vendor\u0001Kind","data":{"any":"thing"}},"clock":"us","time_exact":false,"board":"b","run":"r","seq":3,"host_us":2})",
  };
  simdjson::dom::parser parser;
  for (const std::string& line : records) {
    CAPTURE(line);
    std::string rows;
    std::string problem;
    REQUIRE(append_clickhouse_row(parser, line, rows, problem));
    rows.pop_back();
    std::string back;
    REQUIRE(append_record_from_tsv(parser, tsv_row_of(rows), back, problem));
    simdjson::dom::parser other;
    CHECK(simdjson::to_string(other.parse(back).value()) == simdjson::to_string(parser.parse(line).value()));
  }
}

TEST_CASE("trace-query: a row that is not the store's is refused, naming its board, run and seq") {
  const auto row = [](std::string_view data, std::string_view extra, std::string_view kind = "Text") {
    return "b\tr\t9\t5\t1970-01-01\t1\tcycles\t0\titm\t1\t" + std::string(kind) + "\t" + std::string(data) + "\t" +
           std::string(extra);
  };
  const std::vector<std::string> hostile = {
      row("not json", ""),
      row(R"({"message":"x"} trailing)", ""),
      row(R"({"message":"x"})", R"({"a":1}{"b":2})"),
      row(R"({"message":"x"})", R"({"board":"x"})"),
      row(R"({"message":"x"})", R"({"seq":1})"),
      row(R"({"message":"x"})", R"({"timestamp":1})"),
      row(R"({"message":"x"})", R"({"frames":[]})"),
      row(R"({"message":"x"})", R"({"event":{"kind":"Marker"}})"),
      row(R"({"message":"x"})", R"({"event":1})"),
      row(R"({"message":"x"})", R"({"event":{"a":1},"event":{"b":2}})"),
      row(R"({"message":"x"})", "[1]"),
      row("", ""),                                  // a Text without its data
      row("[1]", ""),                               // data not an object
      row(R"({"message":"x"})", "", ""),            // no kind
      row(R"({"message":"x"})", "", "Itm"),         // a frames line's kind
      row(R"({"message":"a\\\\nb"})", "not json"),  // escapes undone, still not JSON
  };
  simdjson::dom::parser parser;
  for (const std::string& text : hostile) {
    CAPTURE(text);
    std::string out;
    std::string problem;
    CHECK_FALSE(append_record_from_tsv(parser, text, out, problem));
    CHECK(out.empty());
    CHECK(problem.find("board b run r seq 9: ") == 0);
  }
  std::string out = "kept\n";
  std::string problem;
  CHECK_FALSE(
      append_record_from_tsv(parser, "b\tr\t9\t5\t1970-01-01\t1\tcycles\t300\titm\t1\tText\t{}\t", out, problem));
  CHECK_FALSE(append_record_from_tsv(parser, "b c\tr\t9\t5\t1970-01-01\t1\t\t1\t\t1\tText\t{\"message\":\"x\"}\t", out,
                                     problem));
  CHECK(problem.find(R"(board "b c")") == 0);
  CHECK(out == "kept\n");  // what was there stays; nothing half-written
  // A newline inside data's JSON (whitespace to JSON) does not reach the line.
  REQUIRE(append_record_from_tsv(parser, row("{\\n\"message\" : \"x\"}", ""), out, problem));
  CHECK(
      out ==
      "kept\n"
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles","board":"b","run":"r","seq":9,"host_us":5})"
      "\n");
}

TEST_CASE("ClickHouse identifiers: quoted in every statement, backquote and backslash escaped") {
  CHECK(quote_identifier("a-b") == "`a-b`");
  CHECK(quote_identifier("a`b") == "`a\\`b`");
  CHECK(quote_identifier("a\\`; DROP TABLE t; --") == "`a\\\\\\`; DROP TABLE t; --`");
  CHECK(quote_identifier("") == "``");
  CHECK(create_table_sql("db", "a-b").find("CREATE TABLE IF NOT EXISTS `db`.`a-b` (") == 0);
  CHECK(create_distributed_sql("db", "a-b", "c'l").find("`db`.`a-b_all`") != std::string::npos);
  CHECK(create_distributed_sql("db", "a-b", "c'l").find("Distributed('c\\'l', 'db', 'a-b', cityHash64(board))") !=
        std::string::npos);
  CHECK(insert_sql("d`b", "a-b").find("INSERT INTO `d\\`b`.`a-b` (board, run") == 0);
  CHECK(create_counts_view_sql("db", "a-b").find("CREATE MATERIALIZED VIEW IF NOT EXISTS `db`.`a-b_counts` ") == 0);
  CHECK(create_counts_view_sql("db", "a-b").find(" FROM `db`.`a-b` GROUP BY") != std::string::npos);
  CHECK(create_distributed_counts_sql("db", "a-b", "c'l").find("`db`.`a-b_counts_all`") != std::string::npos);
  CHECK(create_distributed_counts_sql("db", "a-b", "c'l").find("Distributed('c\\'l', 'db', 'a-b_counts', ") !=
        std::string::npos);
}

TEST_CASE("A table trace-store did not create: refused when it cannot hold the records as they are") {
  const std::string created =
      "board\tString\nrun\tString\nseq\tUInt64\nhost_us\tUInt64\nday\tDate\ntimestamp\tUInt64\nclock\tString\n"
      "port\tUInt16\nsource\tString\ntime_exact\tUInt8\nkind\tString\ndata\tString\nextra\tString\n";
  CHECK(unfit_columns(created).empty());
  // An Enum refuses a value it does not list (the row is reported); a column more is fine.
  std::string narrow = created;
  narrow.replace(narrow.find("kind\tString"), 11, "kind\tEnum8('Text' = 1)");
  CHECK(unfit_columns(narrow + "note\tString\n").empty());
  // ClickHouse 18.16 wraps a number too large for its column: seq 2^33 in a UInt32 is seq 0.
  std::string narrower = created;
  narrower.replace(narrower.find("seq\tUInt64"), 10, "seq\tUInt32");
  CHECK(unfit_columns(narrower) == "column seq is UInt32");
  std::string fixed = created;
  fixed.replace(fixed.find("data\tString"), 11, "data\tFixedString(8)");
  CHECK(unfit_columns(fixed) == "column data is FixedString(8)");
  std::string without_extra = created.substr(0, created.find("extra\t"));
  CHECK(unfit_columns(without_extra) == "no column extra");
  CHECK(unfit_columns("xseq\tUInt64\n").find("no column seq;") != std::string::npos);
  CHECK(table_columns_sql("d'b", "a-b") ==
        "SELECT name, type FROM system.columns WHERE database = 'd\\'b' AND table = 'a-b' FORMAT TabSeparated");
}

TEST_CASE("ClickHouse errors: the first line, cut; a refusal for the data told from one of the server") {
  CHECK(clickhouse_error_code("Code: 27, e.displayText() = DB::Exception: Cannot parse input") == 27);
  CHECK(clickhouse_error_code("Code: x") == 0);
  CHECK(clickhouse_error_code("") == 0);
  CHECK(clickhouse_error_line(std::string(100'000, 'x')).size() < 3000);
  CHECK(clickhouse_error_line("Code: 1, e.displayText() = a, Stack trace:\nmore") == "Code: 1, e.displayText() = a");
  CHECK(refused_for_data({500, "Code: 27, e.displayText() = DB::Exception: Cannot parse input: (at row 1)"}));
  CHECK(refused_for_data({500,
                          "Code: 49, e.displayText() = DB::Exception: Unknown element 'X' for type Enum8('Text' "
                          "= 1): (while read the value of key k), e.what() = DB::Exception"}));
  CHECK_FALSE(refused_for_data({500, "Code: 252, e.displayText() = DB::Exception: Too many parts"}));
  CHECK_FALSE(refused_for_data({404, "Code: 60, e.displayText() = DB::Exception: Table default.t doesn't exist."}));
  CHECK_FALSE(refused_for_data({500,
                                "Code: 117, e.displayText() = DB::Exception: Unknown field found while parsing "
                                "JSONEachRow format: extra"}));
  CHECK_FALSE(refused_for_data({200, ""}));
}

TEST_CASE("trace-query: SQL from the options, quoted; --since") {
  QueryOptions options;
  options.boards = {"rack3-*", "o'brien_?"};
  options.kinds = {"Exception"};
  options.since_us = 100;
  options.where = "port = 1";
  options.limit = 5;
  CHECK(query_sql(options) ==
        "SELECT board, run, seq, host_us, day, timestamp, clock, port, source, time_exact, kind, data, extra FROM "
        "`default`.`trace` FINAL WHERE (board LIKE 'rack3-%' OR board LIKE 'o\\'brien\\\\__') AND kind IN "
        "('Exception') AND host_us >= 100 AND (port = 1) ORDER BY board, run, seq LIMIT 5 FORMAT TabSeparated");
}

TEST_CASE("times: --since/--until as RFC 3339 UTC or a duration ago, every field checked") {
  const auto since = [](std::string_view text, std::int64_t now_us) {
    return parse_time_or_age("--since", text, now_us);
  };
  CHECK(since("2h", 10'000'000'000) == 10'000'000'000 - 7'200'000'000);
  CHECK(since("1d", 100'000'000'000) == 100'000'000'000 - 86'400'000'000);
  CHECK(since("2026-11-27T10:00:00Z", 0) == 1'795'773'600'000'000);
  CHECK(since("2026-11-27T10:00:00.25+00:00", 0) == 1'795'773'600'250'000);
  CHECK(since("2026-11-27T10:00:00.123456789Z", 0) == 1'795'773'600'123'456);
  CHECK(since("1970-01-01T00:00:00Z", 0) == 0);
  CHECK(since("2024-02-29T23:59:59Z", 0) == 1'709'251'199'000'000);  // a leap day
  CHECK(since("2000-02-29T00:00:00Z", 0) == 951'782'400'000'000);    // 2000 is a leap year
  CHECK(since("9999-12-31T23:59:59Z", 0) == 253'402'300'799'000'000);
  for (const char* bad : {"yesterday",
                          "2026-11-27T10:00:00+02:00",
                          "2026-13-01T00:00:00Z",
                          "2026-00-10T00:00:00Z",
                          "2026-02-29T00:00:00Z",
                          "2026-02-30T00:00:00Z",
                          "2026-04-31T00:00:00Z",
                          "1900-02-29T00:00:00Z",
                          "2026-01-00T00:00:00Z",
                          "2026-01-01T25:61:61Z",
                          "2026-01-01T24:00:00Z",
                          "2026-01-01T23:60:00Z",
                          "2026-01-01T23:59:60Z",
                          "1969-12-31T23:59:59Z",
                          "2026-01-01T00:00:00",
                          "2026-01-01T00:00:00.Z",
                          "2026-01-01T00:00:00.1234567890Z",
                          "2026-01-01T00:00:00Zjunk",
                          "+026-01-01T00:00:00Z",
                          "2026-1-01T00:00:00Z",
                          "2026-01-01 00:00:00Z",
                          "18446744073709551615s",
                          "1e300d",
                          "0s",
                          "-1s",
                          "nan",
                          "inf",
                          "",
                          "2h ago",
                          "60000000000000d"}) {
    CAPTURE(bad);
    try {
      (void)since(bad, 1'795'773'600'000'000);
      FAIL("accepted");
    } catch (const Error& error) {
      CHECK(error.code() == ExitCode::usage);
      CHECK(std::string_view(error.what()).starts_with("--since "));
    }
  }
  // A duration that reaches back before 1970.
  CHECK_THROWS_AS((void)since("2d", 86'400'000'000), Error);
  CHECK(since("1d", 86'400'000'000) == 0);
}

TEST_CASE("chunk records: the records' own board, run and seq, in seq order; what is not a record is refused") {
  std::vector<std::string> problems;
  ChunkRecords records([&](std::string_view problem) { problems.emplace_back(problem); });
  const auto record = [](std::string_view board, std::uint64_t seq) {
    std::string out;
    append_stamped(out, R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"x"}}})",
                   FleetStamp{board, "r1", seq, 5});
    return out;
  };
  const auto pieces = records.read(record("b", 9) + record("b", 7) + record("b", 8) + record("c", 0));
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[0].board == "b");
  CHECK(pieces[0].range.first == 7);
  CHECK(pieces[0].range.last == 8);
  CHECK(pieces[0].lines == record("b", 7) + record("b", 8));
  CHECK(pieces[1].range.first == 9);
  CHECK(pieces[1].lines == record("b", 9));
  CHECK(pieces[2].board == "c");
  CHECK(problems.empty());

  const std::string junk = std::string(R"({"a":1})") + std::string("\n\xff\xfe\x00\n", 5) +
                           R"({"board":"b","run":"r1","seq":18446744073709551615,"host_us":1})" + "\n" +
                           R"({"board":"b c","run":"r1","seq":1,"host_us":1})" + "\n" +
                           R"({"board":"b","run":"r1","seq":"1","host_us":1})" + "\n[1]\n{\"board\":\n" +
                           R"(x,"board":"b","run":"r1","seq":3,"host_us":1})" + "\n";
  CHECK(records.read(junk).empty());
  CHECK(records.bad_lines() == 8);
  CHECK(problems.size() == 8);
  // A last line without its newline is still a record.
  std::string last = record("b", 4);
  last.pop_back();
  const auto one = records.read(last);
  REQUIRE(one.size() == 1);
  CHECK(one[0].lines == record("b", 4));
}

TEST_CASE("chunk order: pieces of one chunk out of order are written in seq order, a gap between them told") {
  OrderProbe probe(ChunkOrder::Limits{8, 1000});
  ChunkRecords records(nullptr);
  std::string chunk;
  for (const std::uint64_t seq : {9U, 7U}) {
    append_stamped(chunk, R"({"timestamp":1})", FleetStamp{"b", "r", seq, 1});
  }
  for (const ChunkRecords::Piece& piece : records.read(chunk)) {
    probe.order.add(piece.board, piece.run, piece.range, piece.lines, 0);
  }
  probe.order.flush();
  CHECK(probe.gaps == std::vector<std::string>{"b r 8-8"});
  std::string seven;
  append_stamped(seven, R"({"timestamp":1})", FleetStamp{"b", "r", 7, 1});
  CHECK(probe.out.starts_with(seven));
  CHECK(probe.order.records() == 2);
}
