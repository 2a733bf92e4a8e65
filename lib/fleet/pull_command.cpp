#include "fleet/pull_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include "core/batched_writer.hpp"
#include "core/clock.hpp"
#include "core/number.hpp"
#include "core/signals.hpp"
#include "core/wall_clock.hpp"
#include "nats/nats_consumer.hpp"
#include "records/fleet_fields.hpp"

namespace tp {
namespace {

// A durable consumer's ack wait: a message delivered and not acknowledged in this time is
// delivered again (a reader that died holding it).
constexpr std::int64_t durable_ack_wait_s = 60;
// How long a pull without --follow waits when nothing comes and the consumer's state does not
// say it is done: a durable's messages held by a reader that died come back after its ack wait.
constexpr std::int64_t quiet_limit_s = 30;

bool is_glob(std::string_view board) {
  return board.find_first_of("*?") != std::string_view::npos;
}

// The consumer: ordered and ephemeral, or durable with explicit acks; from where the options
// say.
ConsumerSettings consumer_settings(const PullOptions& o, const std::string& subject) {
  ConsumerSettings s{.stream = o.stream, .subject = subject, .durable = o.durable};
  if (o.new_only) {
    s.from = DeliverFrom::new_only;
  } else if (o.start_seq) {
    s.from = DeliverFrom::sequence;
    s.start_seq = *o.start_seq;
  } else if (o.since_us && *o.since_us > 0) {  // 1970-01-01T00:00:00Z is the start: cnats refuses a time of 0
    s.from = DeliverFrom::time;
    s.start_time_ns = *o.since_us * 1000;
  }
  s.max_ack_pending = 4096;
  s.ack_wait_s = durable_ack_wait_s;
  return s;
}

void check_pull_options(const PullOptions& o) {
  // JetStream takes a start time in nanoseconds since 1970 in 64 bits: up to 2262-04-11.
  if (o.since_us && *o.since_us > std::numeric_limits<std::int64_t>::max() / 1000) {
    throw Error(ExitCode::usage,
                fmt::format("--since {}: JetStream takes start times up to {}", format_rfc3339_utc(*o.since_us),
                            format_rfc3339_utc(std::numeric_limits<std::int64_t>::max() / 1000)));
  }
  for (const std::string& board : o.boards) {
    std::string letters = board;
    std::erase_if(letters, [](char c) { return c == '*' || c == '?'; });
    if (!letters.empty() && !is_fleet_name(letters)) {
      throw Error(ExitCode::usage, fmt::format("--board \"{}\": a board name (or a glob of one with * and ?)", board));
    }
  }
}

// A durable's messages this reader took and did not acknowledge, handed back to the server
// (nak) when the pull ends, however it ends (`| head` gone, a full disk, a stop), and those the
// client holds not yet taken: the next reader gets them at once. Left alone they stay the
// consumer's "ack pending" for its whole ack wait, and a few readers that went away fill its
// max_ack_pending: the next trace-pull then gets nothing and times out. The delay keeps the
// server from handing them back to this subscription before its connection closes; only what
// the client held when the pull ended is handed back (what the server sends meanwhile is its
// own ack pending again).
class HandBack {
 public:
  HandBack(NatsConsumer& consumer, std::vector<NatsMessage>& taken) : consumer_(consumer), taken_(taken) {}
  HandBack(const HandBack&) = delete;
  HandBack& operator=(const HandBack&) = delete;
  HandBack(HandBack&&) = delete;
  HandBack& operator=(HandBack&&) = delete;
  ~HandBack() {
    constexpr std::int64_t redeliver_after_ms = 1000;
    for (NatsMessage& message : taken_) message.nak_with_delay(redeliver_after_ms);
    taken_.clear();
    consumer_.hand_back_queued(redeliver_after_ms);
  }

 private:
  NatsConsumer& consumer_;
  std::vector<NatsMessage>& taken_;
};

// One pull: messages in, their records through the reorder window to the output; a durable's
// messages acknowledged once what they held is written.
class Puller {
 public:
  Puller(const PullOptions& o, NatsConsumer& consumer, const Logger& log)
      : o_(o),
        consumer_(consumer),
        log_(log),
        writer_(BatchedWriter::open(o.output, o.append)),
        order_(
            o.order, [this](std::string_view lines) { writer_.write(lines); },
            [this](std::string_view board, std::string_view run, SeqRange missing) { tell_gap(board, run, missing); }),
        records_([this](std::string_view problem) { tell_bad_line(problem); }) {
    if (!o.durable.empty()) hand_back_.emplace(consumer_, unacknowledged_);
  }

  void run() {
    RepeatedRequest asking_state("reading the consumer's state", log_);
    auto quiet_since = static_cast<std::int64_t>(monotonic_us());
    while (!done_ && stop_requested() == 0) {
      NatsConsumer::Next next = consumer_.next(100);
      const auto now = static_cast<std::int64_t>(monotonic_us());
      if (next.what == NatsConsumer::Next::What::timeout) {
        order_.tick(now);
        flush_and_ack();
        // A durable's pull also waits for what readers that went away hand back.
        if (!o_.follow && consumer_.caught_up(asking_state, !o_.durable.empty())) break;
        if (!o_.follow) check_quiet(now - quiet_since);
        continue;
      }
      quiet_since = now;
      if (next.what == NatsConsumer::Next::What::slow_consumer) {
        log_.warn("the client's queue overflowed (slow consumer): the consumer starts again where it was");
        continue;
      }
      take(std::move(next.message), now);
    }
    order_.flush();
    flush_and_ack();
  }

  void report_stats() const {
    log_.report(fmt::format(
        R"(stats {{"messages":{},"records":{},"duplicates":{},"missing":{},"gaps":{},"reordered":{},"late":{},"foreign":{},"bad_lines":{}}})",
        messages_, order_.records(), order_.duplicates(), order_.missing(), gaps_, order_.reordered(), order_.late(),
        foreign_, records_.bad_lines()));
  }

 private:
  void take(NatsMessage message, std::int64_t now) {
    ++messages_;
    subject_of_message_ = message.subject();
    const std::span<const ChunkRecords::Piece> pieces = records_.read(message.data());
    if (pieces.empty()) ++foreign_;
    for (const ChunkRecords::Piece& piece : pieces) {
      if (wanted(piece.board)) order_.add(piece.board, piece.run, piece.range, piece.lines, now);
    }
    // Nothing pending ends a pull; a durable's ends in caught_up, which also waits for the
    // messages handed back by readers that went away.
    if (!o_.follow && o_.durable.empty()) {
      if (const auto pending = message.pending_after()) done_ = *pending == 0;
    }
    if (!o_.durable.empty()) unacknowledged_.push_back(std::move(message));
    if (const auto queued = consumer_.queued(); queued && *queued == 0) {
      order_.tick(now);
      flush_and_ack();  // nothing more is here yet: what we have goes out now (latency)
    }
  }

  // Without --follow: nothing came for `quiet_us` and the pull is not known to be done.
  void check_quiet(std::int64_t quiet_us) const {
    const std::int64_t limit_s = quiet_limit_s + (o_.durable.empty() ? 0 : durable_ack_wait_s);
    if (quiet_us > limit_s * 1'000'000) {
      throw Error(ExitCode::timeout, fmt::format("nothing came for {} s and the server did not say whether the "
                                                 "consumer has everything: use --follow to wait for new records",
                                                 limit_s));
    }
  }

  // By the records' own board (a message on one board's subject may hold another's).
  [[nodiscard]] bool wanted(std::string_view board) const {
    return o_.boards.empty() ||
           std::ranges::any_of(o_.boards, [board](const std::string& glob) { return board_matches(glob, board); });
  }

  void flush_and_ack() {
    writer_.flush();
    if (order_.held() > 0) return;  // a held chunk's message waits until its records are out
    for (NatsMessage& message : unacknowledged_) message.ack();
    unacknowledged_.clear();
  }

  void tell_gap(std::string_view board, std::string_view run, SeqRange missing) {
    ++gaps_;
    log_.warn(fmt::format("board {} run {}: seq {}-{} missing ({} records)", board, run, missing.first, missing.last,
                          missing.last - missing.first + 1));
  }

  void tell_bad_line(std::string_view problem) const {
    if (records_.bad_lines() <= 10) {
      log_.warn(fmt::format("a line on {} is not a stamped record ({}): not written", subject_of_message_, problem));
    }
  }

  const PullOptions& o_;
  NatsConsumer& consumer_;
  const Logger& log_;
  BatchedWriter writer_;
  ChunkOrder order_;
  ChunkRecords records_;
  std::vector<NatsMessage> unacknowledged_;  // written, to acknowledge once flushed (durable)
  std::optional<HandBack> hand_back_;        // after unacknowledged_: gone before it
  std::uint64_t messages_ = 0;
  std::uint64_t foreign_ = 0;  // messages without one record
  std::uint64_t gaps_ = 0;
  std::string_view subject_of_message_;  // of the message being read
  bool done_ = false;
};

}  // namespace

ExitCode pull(const PullOptions& o, const Logger& log) {
  check_pull_options(o);
  stop_on_hangup_and_quit();  // what was written is acknowledged on those too (a closed terminal)
  const bool one_board = o.boards.size() == 1 && !is_glob(o.boards.front());
  const std::string subject = one_board ? board_subject(o.prefix, o.boards.front()) : all_boards_subject(o.prefix);
  NatsLink link(o.nats, report_nats_events(log));
  NatsConsumer consumer(link, ConsumerKind::pushed, consumer_settings(o, subject), log);
  Puller puller(o, consumer, log);
  puller.run();
  if (o.stats) puller.report_stats();
  return ExitCode::ok;
}

}  // namespace tp
