#include "fleet/pull_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "core/batched_writer.hpp"
#include "core/clock.hpp"
#include "core/number.hpp"
#include "core/signals.hpp"
#include "core/wall_clock.hpp"
#include "records/fleet_fields.hpp"

namespace tp {
namespace {

bool is_glob(std::string_view board) {
  return board.find_first_of("*?") != std::string_view::npos;
}

// Whether the consumer has delivered everything the stream holds for it (and the client
// has nothing queued): the end of a pull without follow.
bool caught_up(natsSubscription* subscription, jsCtx* jetstream, const PullOptions& o, RepeatedRequest& asking) {
  int queued = 0;
  int queued_bytes = 0;
  if (natsSubscription_GetPending(subscription, &queued, &queued_bytes) == NATS_OK && queued > 0) return false;
  std::string error;
  const auto backlog = consumer_backlog(subscription, jetstream, o.stream, o.durable, error);
  if (!backlog) {
    asking.failed(error);
    return false;
  }
  asking.succeeded();
  return backlog->undelivered == 0;
}

// The consumer: ordered and ephemeral, or durable with explicit acks; from where the options
// say. The link owns it (NatsLink::adopt).
natsSubscription* subscribe(NatsLink& link, jsCtx* jetstream, const PullOptions& o, const std::string& subject,
                            const Logger& log) {
  const auto warn = [&](std::string_view text) { log.warn(text); };
  jsSubOptions options;
  jsSubOptions_Init(&options);
  options.Stream = o.stream.c_str();
  if (o.new_only) {
    options.Config.DeliverPolicy = js_DeliverNew;
  } else if (o.start_seq) {
    options.Config.DeliverPolicy = js_DeliverByStartSequence;
    options.Config.OptStartSeq = *o.start_seq;
  } else if (o.since_us && *o.since_us > 0) {  // 1970-01-01T00:00:00Z is the start: cnats refuses a time of 0
    options.Config.DeliverPolicy = js_DeliverByStartTime;
    options.Config.OptStartTime = *o.since_us * 1000;
  } else {
    options.Config.DeliverPolicy = js_DeliverAll;
  }
  if (o.durable.empty()) {
    options.Ordered = true;  // the library re-creates it at the right place after a hiccup
  } else {
    options.Config.Durable = o.durable.c_str();
    options.Config.AckPolicy = js_AckExplicit;
    options.Config.MaxAckPending = 4096;
    options.Config.AckWait = std::int64_t{60} * 1'000'000'000;
    options.ManualAck = true;
  }
  natsSubscription* raw_subscription = nullptr;
  auto code = static_cast<jsErrCode>(0);
  const natsStatus status = ask_jetstream(
      "subscribing to " + subject,
      [&] {
        code = static_cast<jsErrCode>(0);
        return js_SubscribeSync(&raw_subscription, jetstream, subject.c_str(), nullptr, &options, &code);
      },
      warn);
  if (status == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
    throw Error(ExitCode::not_found, fmt::format("no JetStream stream {} (--stream)", o.stream));
  }
  check_nats(status, fmt::format("subscribing to {} in stream {}", subject, o.stream));
  return link.adopt(raw_subscription);
}

}  // namespace

ExitCode pull(const PullOptions& o, const Logger& log) {
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
  const bool one_board = o.boards.size() == 1 && !is_glob(o.boards.front());
  const std::string subject = one_board ? board_subject(o.prefix, o.boards.front()) : all_boards_subject(o.prefix);
  // By the records' own board (a message on one board's subject may hold another's).
  const auto wanted = [&](std::string_view board) {
    return o.boards.empty() ||
           std::ranges::any_of(o.boards, [board](const std::string& glob) { return board_matches(glob, board); });
  };

  NatsLink link(o.nats, report_nats_events(log));
  jsCtx* jetstream = link.jetstream();
  natsSubscription* raw_subscription = subscribe(link, jetstream, o, subject, log);
  natsSubscription_SetPendingLimits(raw_subscription, -1, 256 * 1024 * 1024);  // bytes: chunks are large

  BatchedWriter writer = BatchedWriter::open(o.output, o.append);
  std::uint64_t gaps = 0;
  ChunkOrder order(
      o.order, [&](std::string_view lines) { writer.write(lines); },
      [&](std::string_view board, std::string_view run, SeqRange missing) {
        ++gaps;
        log.warn(fmt::format("board {} run {}: seq {}-{} missing ({} records)", board, run, missing.first, missing.last,
                             missing.last - missing.first + 1));
      });
  std::vector<NatsMessage> unacknowledged;  // written, to acknowledge once flushed (durable)
  const auto flush_and_ack = [&] {
    writer.flush();
    if (order.held() > 0) return;  // a held chunk's message waits until its records are out
    for (NatsMessage& message : unacknowledged) natsMsg_Ack(message.get(), nullptr);
    unacknowledged.clear();
  };
  std::uint64_t messages = 0;
  std::uint64_t foreign = 0;  // messages without one record
  std::string_view subject_of_message;
  ChunkRecords records([&](std::string_view problem) {
    if (records.bad_lines() <= 10) {
      log.warn(fmt::format("a line on {} is not a stamped record ({}): not written", subject_of_message, problem));
    }
  });
  bool done = false;
  RepeatedRequest asking_state("reading the consumer's state", log);
  auto quiet_since = static_cast<std::int64_t>(monotonic_us());
  while (!done && stop_requested() == 0) {
    natsMsg* raw = nullptr;
    const natsStatus next = natsSubscription_NextMsg(&raw, raw_subscription, 100);
    const auto now = static_cast<std::int64_t>(monotonic_us());
    if (next == NATS_TIMEOUT) {
      order.tick(now);
      flush_and_ack();
      if (!o.follow && caught_up(raw_subscription, jetstream, o, asking_state)) break;
      if (!o.follow && now - quiet_since > 30'000'000) {
        throw Error(ExitCode::timeout,
                    "nothing came for 30 s and the server did not say whether the consumer has "
                    "everything: use --follow to wait for new records");
      }
      continue;
    }
    quiet_since = now;
    if (next == NATS_SLOW_CONSUMER) {
      log.warn("the client's queue overflowed (slow consumer): the consumer starts again where it was");
      continue;
    }
    check_nats(next, "reading from JetStream");
    NatsMessage message(raw);
    ++messages;
    subject_of_message = natsMsg_GetSubject(raw);
    const std::span<const ChunkRecords::Piece> pieces =
        records.read(std::string_view(natsMsg_GetData(raw), static_cast<std::size_t>(natsMsg_GetDataLength(raw))));
    if (pieces.empty()) ++foreign;
    for (const ChunkRecords::Piece& piece : pieces) {
      if (wanted(piece.board)) order.add(piece.board, piece.run, piece.range, piece.lines, now);
    }
    if (!o.follow) {
      jsMsgMetaData* meta = nullptr;
      if (natsMsg_GetMetaData(&meta, raw) == NATS_OK) {
        done = meta->NumPending == 0;
        jsMsgMetaData_Destroy(meta);
      }
    }
    if (!o.durable.empty()) unacknowledged.push_back(std::move(message));
    int queued = 0;
    int queued_bytes = 0;
    if (natsSubscription_GetPending(raw_subscription, &queued, &queued_bytes) == NATS_OK && queued == 0) {
      order.tick(now);
      flush_and_ack();  // nothing more is here yet: what we have goes out now (latency)
    }
  }
  order.flush();
  flush_and_ack();
  if (o.stats) {
    log.report(fmt::format(
        R"(stats {{"messages":{},"records":{},"duplicates":{},"missing":{},"gaps":{},"reordered":{},"foreign":{},"bad_lines":{}}})",
        messages, order.records(), order.duplicates(), order.missing(), gaps, order.reordered(), foreign,
        records.bad_lines()));
  }
  return ExitCode::ok;
}

}  // namespace tp
