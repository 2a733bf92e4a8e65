// The boards' live figures for /api/boards, from JetStream alone: an ordered consumer on
// PREFIX.> that delivers the chunks' headers only (Tp-Board, Tp-Run, Tp-First-Seq,
// Tp-Last-Seq; never their records), from live_seconds ago, read on a thread of its own; and
// the boards the stream holds, from its subjects (stream info with a subjects filter), asked
// for again every few seconds. A NATS server away is said (snapshot().error) and retried.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "core/log.hpp"
#include "nats/nats_consumer.hpp"
#include "nats/nats_link.hpp"

namespace tp::lab {

struct LiveBoard {
  std::string run;
  std::uint64_t last_seen_us = 0;  // when its last chunk came (wall clock)
  double records_per_s = 0;        // over the last live_seconds
  bool live = false;               // a chunk within the last live_seconds
};

struct LiveSnapshot {
  std::map<std::string, LiveBoard> boards;  // every board seen live or held by the stream
  std::optional<std::string> error;         // NATS away (or the stream missing): why
};

struct MonitorSettings {
  NatsSettings nats;
  std::string stream;
  std::string prefix;
  double live_seconds = 5;
};

// The most boards remembered (a stream with more is cut, said in the log).
inline constexpr std::size_t max_monitored_boards = 10'000;

class BoardMonitor {
 public:
  BoardMonitor(MonitorSettings settings, const Logger& log);
  BoardMonitor(const BoardMonitor&) = delete;
  BoardMonitor& operator=(const BoardMonitor&) = delete;
  BoardMonitor(BoardMonitor&&) = delete;
  BoardMonitor& operator=(BoardMonitor&&) = delete;
  ~BoardMonitor();

  [[nodiscard]] LiveSnapshot snapshot(std::uint64_t now_us) const;
  // A chunk's headers seen (the monitor's thread; public for the tests).
  void saw_chunk(std::string_view board, std::string_view run, std::uint64_t records, std::uint64_t now_us);

 private:
  struct Seen {
    std::string run;
    std::uint64_t last_seen_us = 0;
    std::deque<std::pair<std::uint64_t, std::uint64_t>> recent;  // (when, records) within live_seconds
  };
  void run();
  void follow();
  [[nodiscard]] ConsumerSettings headers_consumer() const;
  void refresh_known(NatsLink& link);
  void forget_old(Seen& seen, std::uint64_t now_us) const;

  MonitorSettings settings_;
  const Logger& log_;
  mutable std::mutex mutex_;  // guards the members below
  std::map<std::string, Seen> seen_;
  std::set<std::string> known_;
  std::optional<std::string> error_ = "not connected yet";
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts after everything it uses
};

}  // namespace tp::lab
