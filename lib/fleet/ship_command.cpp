#include "fleet/ship_command.hpp"

#include <fmt/format.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/byte_source.hpp"
#include "core/clock.hpp"
#include "core/number.hpp"
#include "core/signals.hpp"
#include "core/wall_clock.hpp"
#include "fleet/ship_journal.hpp"
#include "json/ndjson_reader.hpp"
#include "nats/nats_publisher.hpp"
#include "records/fleet_fields.hpp"
#include "records/record_check.hpp"
#include "records/record_shapes.hpp"

namespace tp {
namespace {

constexpr std::size_t warned_bad_lines = 10;
// Room for a message's headers (id, board, run, seqs) beside its payload.
constexpr std::size_t header_room = 512;

struct ReaderCounts {
  std::atomic<std::uint64_t> lines{0};
  std::atomic<std::uint64_t> records{0};
  std::atomic<std::uint64_t> bad_lines{0};
};

// The reader thread: lines (json/ndjson_reader) -> checked records -> the builder.
class Reader {
 public:
  // `halt`: stop reading (the journal failed); `marks`: keep where the input stands (a journal).
  Reader(const ShipOptions& options, ChunkBuilder& builder, ShipQueue& queue, const Logger& log, ReaderCounts& counts,
         const std::atomic<bool>& halt, bool marks)
      : options_(options),
        builder_(builder),
        queue_(queue),
        log_(log),
        counts_(counts),
        halt_(halt),
        marks_(marks),
        lines_([this](NdjsonLine& line) { return take_record(line); },
               [this](std::uint64_t number, std::string_view problem) { count_bad_line(number, problem); }, false,
               options.chunk.max_message) {
    lines_.set_quick_handler([this](std::string_view text, std::uint64_t /*number*/) {
      if (shapes_.match(text) == nullptr) return false;
      add(text);
      return true;
    });
    lines_.set_line_check([](std::string_view text) {
      return !text.empty() && text.back() != '}' ? std::string_view("it does not end with '}'") : std::string_view();
    });
    lines_.set_over_long_handler([this](std::string_view start, bool whole) { return over_long(start, whole); });
  }

  void run() {
    ByteSource source = ByteSource::open(options_.input);
    std::vector<std::uint8_t> buffer(std::size_t{256} * 1024);
    while (stop_requested() == 0 && !halt_) {
      const auto due = builder_.due_us();
      const std::int64_t now = realtime_us();
      const int timeout_ms = due ? static_cast<int>(std::clamp<std::int64_t>((*due - now) / 1000 + 1, 1, 50)) : 50;
      const ReadResult result = source.read(buffer, timeout_ms);
      const std::int64_t host_us = realtime_us();
      if (result.status == ReadStatus::end_of_input) break;
      if (result.status == ReadStatus::data) {
        take(std::string_view(reinterpret_cast<const char*>(buffer.data()), result.size), host_us);
      }
      builder_.seal_if_due(host_us);
    }
    const bool whole_input = stop_requested() == 0 && !halt_;
    if (whole_input) {
      host_us_ = realtime_us();
      lines_.finish();
    }
    counts_.lines = lines_.lines();
    builder_.tell_loss(realtime_us());
    queue_.close_input();
    if (whole_input) builder_.check_resumed_input_complete();
  }

 private:
  void take(std::string_view data, std::int64_t host_us) {
    host_us_ = host_us;
    piece_ = data;
    lines_.feed(data);
    counts_.lines = lines_.lines();
    mark_through(piece_start_ + data.size());
    piece_start_ += data.size();
  }

  // The journal's mark of the input up to `end` (within the piece being taken).
  void mark_through(std::uint64_t end) {
    if (!marks_) return;
    mark_.add(piece_.substr(mark_.bytes - piece_start_, end - mark_.bytes));
  }

  void add(std::string_view record) {
    counts_.lines = lines_.lines();
    ++counts_.records;
    mark_through(lines_.line_end());
    builder_.add(record, host_us_, mark_);
  }

  simdjson::error_code take_record(NdjsonLine& line) {
    const auto checked = check_record_line(line.root, line.problem);
    if (!checked) return simdjson::INCORRECT_TYPE;
    if (checked->frames) {
      line.problem = "a frames line, not a record";
      return simdjson::INCORRECT_TYPE;
    }
    if (checked->has_fleet_fields) {
      line.problem = "it carries fleet fields already (trace-ship is the one that stamps them)";
      return simdjson::INCORRECT_TYPE;
    }
    if (!shapes_.full()) shapes_.learn(line.text);
    add(line.text);
    return simdjson::SUCCESS;
  }

  // A line over the largest message: one that came whole is checked as any other (a record
  // is then too large); of one too long to hold, only its start tells whether it is a record.
  bool over_long(std::string_view start, bool whole) {
    if (whole) return true;
    const std::size_t first = start.find_first_not_of(" \t\r");
    counts_.lines = lines_.lines();
    if (first != std::string_view::npos && start[first] == '{') {
      ++counts_.records;
      mark_through(lines_.line_end());
      builder_.add_too_large(host_us_, mark_);
    } else {
      count_bad_line(lines_.lines(), "a line too long to hold that does not start with '{'");
    }
    return false;
  }

  void count_bad_line(std::uint64_t number, std::string_view problem) {
    counts_.lines = number;
    const std::uint64_t bad = ++counts_.bad_lines;
    if (bad <= warned_bad_lines) {
      log_.warn(fmt::format("line {}: not a record ({}): not shipped{}", number, problem,
                            bad == warned_bad_lines ? " (further ones are only counted)" : ""));
    }
  }

  const ShipOptions& options_;
  ChunkBuilder& builder_;
  ShipQueue& queue_;
  const Logger& log_;
  ReaderCounts& counts_;
  RecordShapes shapes_;
  const std::atomic<bool>& halt_;
  bool marks_;
  InputMark mark_;                 // the input up to the end of the last line taken
  std::string_view piece_;         // the piece of input being taken
  std::uint64_t piece_start_ = 0;  // where it starts in the input
  NdjsonReader lines_;
  std::int64_t host_us_ = 0;  // when the bytes being taken were read
};

// The server's answer to a publish (on cnats's thread), to the queue: the chunk is the one
// whose first seq the message's header names.
void on_publish_answer(ShipQueue& queue, const Logger& log, const NatsMessage& message, const PublishOutcome& outcome) {
  const auto first_text = message.header(first_seq_header);
  if (!first_text) return;
  const auto first = parse_whole_number<std::uint64_t>(*first_text);
  if (!first) return;
  if (outcome.stored) {
    queue.acked(*first, outcome.duplicate);
    return;
  }
  log.verbose(fmt::format("chunk from seq {} not stored: {}", *first, outcome.error));
  queue.failed(*first, static_cast<std::int64_t>(monotonic_us()));
}

std::string ranges_text(const std::vector<SeqRange>& ranges) {
  std::string text;
  for (const SeqRange& range : ranges) {
    if (!text.empty()) text += ", ";
    text += range.first == range.last ? fmt::format("{}", range.first) : fmt::format("{}-{}", range.first, range.last);
  }
  return text;
}

bool is_regular_file(const std::string& path) {
  struct stat status {};
  return (path == "-" ? ::fstat(STDIN_FILENO, &status) : ::stat(path.c_str(), &status)) == 0 && S_ISREG(status.st_mode);
}

// The journal's state when --state names one, its board and run checked against the options;
// the run to use is set in `o`.
std::optional<JournalState> journal_to_resume(ShipOptions& o) {
  if (o.state.empty()) return std::nullopt;
  std::optional<JournalState> resumed = read_ship_journal(o.state);
  if (!resumed) return std::nullopt;
  if (resumed->board != o.board) {
    throw Error(ExitCode::usage,
                fmt::format("{} is the journal of board {}, not {}", o.state, resumed->board, o.board));
  }
  if (!o.run.empty() && o.run != resumed->run) {
    throw Error(ExitCode::usage,
                fmt::format("{} resumes run {}; leave out --run or give another --state", o.state, resumed->run));
  }
  o.run = resumed->run;
  return resumed;
}

// The journal as the publisher keeps it: when a write fails, the reader is halted, nothing
// more is sent for the first time (the journal could not tell it), and why is kept.
struct JournalKeeper {
  ShipJournal* journal;  // nullptr without --state, or once it failed
  std::atomic<bool>& halt_reader;
  ShipQueue& queue;
  std::string failure;  // why it failed, if it did
  std::optional<std::uint64_t> acked_in_journal;

  template <typename Write>
  void write(Write&& what) {
    if (journal == nullptr) return;
    try {
      what(*journal);
    } catch (const Error& e) {
      failure = e.what();
      journal = nullptr;
      halt_reader = true;
      queue.hold_unsent();
    }
  }
  void acked(ShipQueue::AckedPoint point) {
    write([&](ShipJournal& j) {
      j.acked_through(point.seq, point.mark);
      acked_in_journal = point.seq;
    });
  }
};

// The stream checked again every stream_recheck_s (recheck_stream) on a thread of its own: the
// publisher must not wait on a request (up to 2 s while the server is away or recovering; with
// --wait never a publisher held up is records lost to a full buffer). A refusal is kept for the
// publisher to throw.
class StreamWatch {
 public:
  StreamWatch(const ShipOptions& o, NatsLink& link, const std::string& subject)
      : thread_([this, &o, &link, &subject] { watch(o, link, subject); }) {}
  StreamWatch(const StreamWatch&) = delete;
  StreamWatch& operator=(const StreamWatch&) = delete;
  StreamWatch(StreamWatch&&) = delete;
  StreamWatch& operator=(StreamWatch&&) = delete;
  ~StreamWatch() {
    {
      const std::scoped_lock lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  // Throws the refusal the watch found, if it found one.
  void check() {
    if (!refused_seen_.load()) return;
    const std::scoped_lock lock(mutex_);
    std::rethrow_exception(refused_);
  }

 private:
  void watch(const ShipOptions& o, NatsLink& link, const std::string& subject) {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::seconds(stream_recheck_s), [this] { return stopping_; })) {
      lock.unlock();
      try {
        recheck_stream(link, o.stream.name, subject, o.chunk.max_bytes, o.ship.window);
      } catch (...) {
        lock.lock();
        refused_ = std::current_exception();
        refused_seen_ = true;
        return;
      }
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::exception_ptr refused_;
  std::atomic<bool> refused_seen_{false};
  std::thread thread_;  // last: it starts with the others made
};

struct PublishContext {
  const ShipOptions& o;
  const std::string& subject;
  NatsPublisher& publisher;
  ShipQueue& queue;
  JournalKeeper& journal;
  const std::atomic<bool>& reader_done;
  StreamWatch& stream_watch;
  const Logger& log;
};

// A second SIGINT/SIGTERM during the drain ends it at once (as in most tools).
bool drain_cut_short(const Logger& log) {
  if (stop_requests() < 2) return false;
  log.warn("a second stop signal: the drain is cut short");
  return true;
}

// Sends one chunk the queue gave, with its headers, unless the journal could not tell it
// first (then it is held, reported at the end).
void send_chunk(const PublishContext& c, const ShipQueue::Send& send, OutgoingMessage message) {
  const ShipOptions& o = c.o;
  message.check_made();
  if (!send.resend) {
    const PlannedChunk planned{SeqRange{send.first_seq, send.last_seq}, send.after};
    c.journal.write([&](ShipJournal& j) { j.chunk_published(planned); });
    if (!c.journal.failure.empty()) {  // not told in the journal: not sent (held, reported at the end)
      c.queue.not_sent(send.first_seq);
      return;
    }
  }
  message.set_header(msg_id_header, message_id(o.board, o.run, send.first_seq));
  message.set_header(board_header, o.board);
  message.set_header(run_header, o.run);
  message.set_header(first_seq_header, std::to_string(send.first_seq));
  message.set_header(last_seq_header, std::to_string(send.last_seq));
  if (const auto refused = c.publisher.publish(std::move(message))) {
    c.log.verbose(fmt::format("publish of seq {}: {}", send.first_seq, *refused));
    c.queue.failed(send.first_seq, static_cast<std::int64_t>(monotonic_us()));
  }
}

// Whether the publisher is done while the queue gives nothing: every chunk answered, or the
// drain (from the reader's end or a stop) timed out or was cut short.
bool publishing_done(const PublishContext& c, std::optional<std::int64_t>& drain_deadline) {
  if (c.queue.finished()) return true;
  // The drain starts when the reader is done (the end of input or an error) or a stop is asked.
  if (!drain_deadline && (c.reader_done.load() || stop_requested() != 0)) {
    drain_deadline = static_cast<std::int64_t>(monotonic_us()) + c.o.drain_timeout_ms * 1000;
  }
  if (drain_deadline && static_cast<std::int64_t>(monotonic_us()) >= *drain_deadline) return true;
  return drain_deadline && drain_cut_short(c.log);
}

// The publisher: sends what the queue gives, with its headers, until every chunk is
// acknowledged or, once the reader is done or a stop was asked, the drain timeout passes.
void publish_until_done(const PublishContext& c) {
  ShipQueue& queue = c.queue;
  std::optional<std::int64_t> drain_deadline;
  std::int64_t journal_due = 0;
  std::int64_t expire_due = 0;
  for (;;) {
    const auto now = static_cast<std::int64_t>(monotonic_us());
    // Our own expiry backs up the library's (MaxWait), which reports a timeout itself; it
    // walks every chunk, so it runs ten times a second, not once per send.
    if (now >= expire_due) {
      queue.expire(now - c.o.ship.ack_timeout_us);
      expire_due = now + 100'000;
    }
    if (now >= journal_due) {
      if (const auto through = queue.acked_through()) c.journal.acked(*through);
      journal_due = now + 100'000;
    }
    c.stream_watch.check();  // the stream may have been recreated or changed since ensure_stream
    std::optional<OutgoingMessage> message;
    const auto send =
        queue.next(now, now + 100'000, [&](const Chunk& chunk) { message.emplace(c.subject, chunk.payload); });
    if (!send) {
      if (publishing_done(c, drain_deadline)) break;
      continue;
    }
    send_chunk(c, *send, std::move(*message));
  }
}

// What a journal that could not be written cost: the shipping stopped there; what was read
// and not acknowledged (never sent, or sent and not acknowledged in the drain) is in no
// store for sure, and a resume with the journal on the same input ships it again.
Error journal_failed(const JournalKeeper& keeper, std::uint64_t next_seq, const std::vector<SeqRange>& unacknowledged) {
  return Error(ExitCode::io_error,
               fmt::format("{}: stopped reading the input after seq {}; not acknowledged (not sent or not answered): "
                           "{}; the journal says acknowledged through {}: trace-ship resumed with it on the same "
                           "input ships the rest again (what the server has is dropped by its id)",
                           keeper.failure, next_seq == 0 ? std::string("none") : std::to_string(next_seq - 1),
                           unacknowledged.empty() ? std::string("none") : ranges_text(unacknowledged),
                           keeper.acked_in_journal ? std::to_string(*keeper.acked_in_journal) : std::string("no seq")));
}

}  // namespace

void check_ship_options(const ShipOptions& o) {
  if (!is_fleet_name(o.board)) {
    throw Error(ExitCode::usage, fmt::format("--board \"{}\": a board name is 1-{} of A-Z a-z 0-9 _ - (one NATS "
                                             "subject token)",
                                             o.board, fleet_name_max));
  }
  if (!o.run.empty() && !is_fleet_name(o.run)) {
    throw Error(ExitCode::usage,
                fmt::format("--run \"{}\": a run id is 1-{} of A-Z a-z 0-9 _ -", o.run, fleet_name_max));
  }
  if (!is_subject_prefix(o.prefix)) {
    throw Error(ExitCode::usage,
                fmt::format("--subject-prefix \"{}\": dot-separated names without wildcards", o.prefix));
  }
  if (o.chunk.max_bytes < 1024) throw Error(ExitCode::usage, "--chunk-bytes must be at least 1024");
  if (o.ship.buffer_bytes < o.chunk.max_bytes) {
    throw Error(ExitCode::usage, "--buffer must hold at least one chunk (--chunk-bytes)");
  }
  if (o.stream.duplicate_window_s < min_duplicate_window_s) {
    throw Error(ExitCode::usage, fmt::format("--duplicate-window must be at least {} s", min_duplicate_window_s));
  }
  // What ensure_stream would refuse once the stream exists, said before creating it.
  if (o.stream.max_age_s > 0 && o.stream.max_age_s < min_stream_max_age_s) {
    throw Error(ExitCode::usage, fmt::format("--max-age must be 0 (no limit) or at least {} s", min_stream_max_age_s));
  }
  const auto window_bytes = static_cast<std::int64_t>(o.ship.window * o.chunk.max_bytes);
  if (o.stream.max_bytes > 0 && o.stream.max_bytes < window_bytes) {
    throw Error(ExitCode::usage, fmt::format("--max-bytes must be -1 (no limit) or at least --window times "
                                             "--chunk-bytes ({})",
                                             window_bytes));
  }
}

namespace {

// The stream checked (created first with --create-stream), and the chunks fitted to the
// server's largest message.
void prepare_stream(ShipOptions& o, NatsLink& link, const std::string& subject, const Logger& log) {
  if (o.stream.subjects.empty()) o.stream.subjects = o.prefix + ".>";
  ensure_stream(link, o.stream, o.create_stream, subject, o.chunk.max_bytes, o.ship.window,
                [&](std::string_view w) { log.warn(w); });
  const auto server_max = static_cast<std::size_t>(link.max_payload());
  if (server_max <= header_room + 1024) throw Error(ExitCode::unsupported, "the server's max_payload is too small");
  o.chunk.max_message = server_max - header_room;
  o.chunk.max_bytes = std::min(o.chunk.max_bytes, o.chunk.max_message);
}

void resume_builder(ChunkBuilder& builder, const std::optional<JournalState>& resumed, const ShipOptions& o,
                    const Logger& log) {
  if (resumed && (resumed->acked_through || !resumed->published_after_acked.empty())) {
    builder.resume(resumed->acked_through, resumed->acked_mark, resumed->published_after_acked);
    log.info(fmt::format("resuming run {} of {} after seq {} ({} chunks to send again with their ids)", o.run, o.board,
                         resumed->acked_through ? std::to_string(*resumed->acked_through) : "none",
                         resumed->published_after_acked.size()));
  }
}

// What a run is made of, once set up.
struct ShipParts {
  const ShipOptions& o;
  const std::string& subject;
  ChunkBuilder& builder;
  ShipQueue& queue;
  NatsPublisher& publisher;
  JournalKeeper& keeper;
  bool marks;  // the reader keeps where the input stands (a journal)
  const Logger& log;
};

struct ReadAndPublish {
  std::exception_ptr reader_error;  // said after the accounting
  bool stopped = false;             // a stop was asked by the time the publisher was done
};

// The reader on a thread of its own, the publisher on this one, until the publisher is done;
// then the reader is stopped and joined. A publisher's error goes on after.
ReadAndPublish read_and_publish(const ShipParts& p, ReaderCounts& reader_counts) {
  ReadAndPublish result;
  std::atomic<bool> reader_done{false};
  std::thread reader_thread([&] {
    try {
      Reader(p.o, p.builder, p.queue, p.log, reader_counts, p.keeper.halt_reader, p.marks).run();
    } catch (...) {
      result.reader_error = std::current_exception();
      p.queue.close_input();
    }
    reader_done = true;
    p.queue.wake();
  });
  std::exception_ptr publisher_error;
  try {
    StreamWatch stream_watch(p.o, p.publisher.link(), p.subject);
    publish_until_done(
        PublishContext{p.o, p.subject, p.publisher, p.queue, p.keeper, reader_done, stream_watch, p.log});
  } catch (...) {  // the reader is stopped and joined before the error goes on
    publisher_error = std::current_exception();
    p.keeper.halt_reader = true;
  }
  result.stopped = stop_requested() != 0;
  p.queue.abandon();
  reader_thread.join();
  if (publisher_error) std::rethrow_exception(publisher_error);
  return result;
}

// What a run ended with.
struct ShipEnd {
  const ShipOptions& o;
  const ChunkBuilder& builder;
  ShipCounts counts;
  std::vector<SeqRange> unacknowledged;
  std::uint64_t unacked_records = 0;
  bool stopped = false;
};

std::string summary_json(const ShipEnd& end, const ReaderCounts& reader_counts, std::uint64_t events) {
  const ShipCounts& counts = end.counts;
  const ChunkBuilder& builder = end.builder;
  return fmt::format(
      R"({{"board":"{}","run":"{}","lines":{},"records":{},"bad_lines":{},"seqs":{},"acknowledged":{},"chunks":{},)"
      R"("retries":{},"duplicates":{},"lost_buffer_full":{},"lost_too_large":{},"unacknowledged":{},"skipped":{},)"
      R"("peak_buffer_bytes":{},"connection_events":{}}})",
      end.o.board, end.o.run, reader_counts.lines.load(), reader_counts.records.load(), reader_counts.bad_lines.load(),
      builder.next_seq(), counts.records_acked, counts.chunks_acked, counts.retries, counts.duplicates,
      builder.lost_buffer_full(), builder.lost_too_large(), end.unacked_records, builder.skipped(),
      counts.peak_buffered_bytes, events);
}

// How the run ends: a journal that failed, the reader's error, records not acknowledged (an
// error, or a warning when stopped: run_tool turns a stop into 130/143), losses told.
ExitCode ship_outcome(const ShipEnd& end, const JournalKeeper& keeper, const std::exception_ptr& reader_error,
                      const Logger& log) {
  const ChunkBuilder& builder = end.builder;
  if (!keeper.failure.empty()) {
    const Error failed = journal_failed(keeper, builder.next_seq(), end.unacknowledged);
    if (!end.stopped) throw failed;
    log.warn(failed.what());  // a stop ends as stopped (130/143), with why the journal failed
    return ExitCode::ok;
  }
  if (reader_error) std::rethrow_exception(reader_error);
  if (builder.untold_loss()) {
    const SeqRange lost = *builder.untold_loss();
    log.warn(fmt::format("seqs {}-{} were lost to a full buffer at the end, with no Loss record shipped", lost.first,
                         lost.last));
  }
  if (end.unacked_records > 0) {
    const std::string message = fmt::format("{} records not acknowledged by the server (seq {}): they may be lost",
                                            end.unacked_records, ranges_text(end.unacknowledged));
    if (end.stopped) {
      log.warn(message);
      return ExitCode::ok;  // run_tool turns a stop into 130/143
    }
    throw Error(ExitCode::io_error, message);
  }
  if (builder.lost_buffer_full() + builder.lost_too_large() > 0) {
    log.warn(fmt::format("{} records lost (told by Loss records): {} to a full buffer, {} too large",
                         builder.lost_buffer_full() + builder.lost_too_large(), builder.lost_buffer_full(),
                         builder.lost_too_large()));
  }
  log.verbose(fmt::format("{} records acknowledged in {} chunks", end.counts.records_acked, end.counts.chunks_acked));
  return ExitCode::ok;
}

}  // namespace

ExitCode ship(const ShipOptions& options_in, const Logger& log) {
  ShipOptions o = options_in;
  check_ship_options(o);
  const FileDescriptor journal_lock = o.state.empty() ? FileDescriptor() : lock_ship_journal(o.state);
  const std::optional<JournalState> resumed = journal_to_resume(o);
  if (o.run.empty()) o.run = new_run_id();
  const std::string subject = board_subject(o.prefix, o.board);

  ShipQueue queue(o.ship);
  std::atomic<std::uint64_t> events{0};
  NatsLink link(o.nats, [&](NatsEvent event, std::string_view text) {
    if (event == NatsEvent::warning) {
      log.warn(text);
      return;
    }
    ++events;
    log.verbose(text);
    if (event == NatsEvent::reconnected) queue.retry_now();  // the server is back: no back-off
  });
  NatsPublisher publisher(
      link,
      [&](const NatsMessage& message, const PublishOutcome& outcome) {
        on_publish_answer(queue, log, message, outcome);
      },
      static_cast<std::int64_t>(o.ship.window) * 4 + 64, o.ship.ack_timeout_us / 1000);
  prepare_stream(o, link, subject, log);

  std::optional<ShipJournal> journal;
  if (!o.state.empty()) journal.emplace(o.state, o.board, o.run);
  // A file can wait for the server; a pipe may be a live capture, which cannot.
  const bool input_waits = o.wait == WaitPolicy::always || (o.wait == WaitPolicy::files && is_regular_file(o.input));
  ChunkBuilder builder(o.board, o.run, o.chunk, [&](Chunk&& chunk, bool must_wait) {
    return queue.offer(std::move(chunk), input_waits || must_wait);
  });
  resume_builder(builder, resumed, o, log);
  log.verbose(fmt::format("shipping board {} run {} to {} (stream {})", o.board, o.run, subject, o.stream.name));

  ReaderCounts reader_counts;
  std::atomic<bool> halt_reader{false};
  JournalKeeper keeper{journal ? &*journal : nullptr, halt_reader, queue, {}, std::nullopt};
  const ReadAndPublish ran = read_and_publish(
      ShipParts{o, subject, builder, queue, publisher, keeper, journal.has_value(), log}, reader_counts);
  ShipEnd end{o, builder, {}, {}, 0, ran.stopped};
  if (const auto through = queue.acked_through()) keeper.acked(*through);
  end.counts = queue.counts();
  end.unacknowledged = queue.unacknowledged();
  for (const SeqRange& range : end.unacknowledged) end.unacked_records += range.last - range.first + 1;
  link.close();
  if (o.stats) log.report("stats " + summary_json(end, reader_counts, events.load()));
  return ship_outcome(end, keeper, ran.reader_error, log);
}

}  // namespace tp
