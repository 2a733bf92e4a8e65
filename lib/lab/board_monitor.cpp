#include "lab/board_monitor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "core/number.hpp"
#include "core/wall_clock.hpp"
#include "fleet/fleet_subject.hpp"
#include "lab/lab_view.hpp"
#include "nats/nats_consumer.hpp"
#include "nats/stream_check.hpp"

namespace tp::lab {
namespace {

constexpr int poll_ms = 200;
constexpr std::uint64_t subjects_every_us = 5'000'000;
constexpr auto retry_after = std::chrono::seconds(2);

std::uint64_t now_wall_us() {
  return static_cast<std::uint64_t>(realtime_us());
}

}  // namespace

BoardMonitor::BoardMonitor(MonitorSettings settings, const Logger& log)
    : settings_(std::move(settings)), log_(log), thread_([this] { run(); }) {}

BoardMonitor::~BoardMonitor() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void BoardMonitor::run() {
  while (!stop_.load()) {
    try {
      follow();
    } catch (const Error& e) {
      {
        const std::scoped_lock lock(mutex_);
        if (error_ != e.what()) log_.warn(fmt::format("NATS, for the boards' live figures: {}", e.what()));
        error_ = e.what();
      }
      for (auto waited = std::chrono::milliseconds(0); waited < retry_after && !stop_.load();
           waited += std::chrono::milliseconds(poll_ms)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
      }
    }
  }
}

// One connection's life: the headers-only consumer from live_seconds ago, the stream's
// subjects now and then.
// An async error on the link is its one subscription's: the ordered consumer missed the
// server's heartbeats, or cnats failed to re-create it after a gap (nats-server restarted
// without the consumer: it then stays silent for good). Either way the link is made anew.
void BoardMonitor::follow() {
  std::atomic<bool> consumer_failed{false};
  NatsSettings nats = settings_.nats;
  nats.name = "trace-lab boards";
  NatsLink link(nats, [this, &consumer_failed](NatsEvent event, std::string_view text) {
    if (event == NatsEvent::error) consumer_failed.store(true);
    if (event == NatsEvent::disconnected || event == NatsEvent::error) log_.verbose(fmt::format("NATS: {}", text));
  });
  NatsConsumer headers(link, ConsumerKind::pushed, headers_consumer(), log_);
  std::uint64_t subjects_at_us = 0;
  while (!stop_.load()) {
    if (consumer_failed.load()) {
      throw Error(ExitCode::io_error, "the boards' headers consumer failed (see -v); following anew");
    }
    const std::uint64_t now = now_wall_us();
    if (now - subjects_at_us >= subjects_every_us) {
      refresh_known(link);
      subjects_at_us = now;
    }
    NatsConsumer::Next next = headers.next(poll_ms);
    if (next.what != NatsConsumer::Next::What::message) continue;
    const auto board = next.message.header(board_header);
    const auto run = next.message.header(run_header);
    const auto first = next.message.header(first_seq_header);
    const auto last = next.message.header(last_seq_header);
    if (!board || !run || !first || !last || !is_board_name(*board)) continue;
    const auto first_seq = parse_whole_number<std::uint64_t>(*first);
    const auto last_seq = parse_whole_number<std::uint64_t>(*last);
    if (!first_seq || !last_seq || *last_seq < *first_seq) continue;
    saw_chunk(*board, *run, *last_seq - *first_seq + 1, now_wall_us());
  }
  link.close();
}

// Headers only, from live_seconds ago or, following anew, from the newest chunk seen (what
// came before it is counted already; a chunk stored just before an outage but not delivered
// then may be missed: records/s is a figure, not an account).
ConsumerSettings BoardMonitor::headers_consumer() const {
  ConsumerSettings consumer;
  consumer.stream = settings_.stream;
  consumer.subject = settings_.prefix + ".>";
  consumer.from = DeliverFrom::time;
  auto from_us = realtime_us() - static_cast<std::int64_t>(settings_.live_seconds * 1e6);
  {
    const std::scoped_lock lock(mutex_);
    for (const auto& [board, seen] : seen_) from_us = std::max(from_us, static_cast<std::int64_t>(seen.last_seen_us));
  }
  consumer.start_time_ns = from_us * std::int64_t{1000};
  consumer.headers_only = true;
  return consumer;
}

void BoardMonitor::refresh_known(NatsLink& link) {
  const std::vector<StreamSubject> subjects = stream_subjects(link, settings_.stream, settings_.prefix + ".>");
  std::set<std::string> known;
  const std::size_t prefix = settings_.prefix.size() + 1;
  for (const StreamSubject& s : subjects) {
    if (known.size() == max_monitored_boards) break;
    if (s.subject.size() > prefix && is_board_name(std::string_view(s.subject).substr(prefix))) {
      known.insert(s.subject.substr(prefix));
    }
  }
  const std::scoped_lock lock(mutex_);
  known_ = std::move(known);
  error_.reset();
}

void BoardMonitor::saw_chunk(std::string_view board, std::string_view run, std::uint64_t records,
                             std::uint64_t now_us) {
  const std::scoped_lock lock(mutex_);
  auto found = seen_.find(std::string(board));
  if (found == seen_.end()) {
    if (seen_.size() >= max_monitored_boards) return;
    found = seen_.emplace(std::string(board), Seen{}).first;
  }
  Seen& seen = found->second;
  seen.run = run;
  seen.last_seen_us = now_us;
  seen.recent.emplace_back(now_us, records);
  forget_old(seen, now_us);
}

void BoardMonitor::forget_old(Seen& seen, std::uint64_t now_us) const {
  const auto window_us = static_cast<std::uint64_t>(settings_.live_seconds * 1e6);
  while (!seen.recent.empty() && seen.recent.front().first + window_us < now_us) seen.recent.pop_front();
}

LiveSnapshot BoardMonitor::snapshot(std::uint64_t now_us) const {
  const auto window_us = static_cast<std::uint64_t>(settings_.live_seconds * 1e6);
  LiveSnapshot snapshot;
  const std::scoped_lock lock(mutex_);
  snapshot.error = error_;
  for (const std::string& board : known_) snapshot.boards.emplace(board, LiveBoard{});
  for (const auto& [board, seen] : seen_) {
    LiveBoard& live = snapshot.boards[board];
    live.run = seen.run;
    live.last_seen_us = seen.last_seen_us;
    live.live = seen.last_seen_us + window_us >= now_us;
    std::uint64_t records = 0;
    for (const auto& [when, count] : seen.recent) records += when + window_us >= now_us ? count : 0;
    live.records_per_s = static_cast<double>(records) / settings_.live_seconds;
  }
  return snapshot;
}

}  // namespace tp::lab
