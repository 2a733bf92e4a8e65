// A source of records and the WebSocket clients it feeds: an InputPump (reading on a thread of
// its own) whose batches reach the clients on the io_context thread. Two ways to deliver:
// - broadcast (trace-serve's input, a live view shared by its viewers): every batch goes to
//   every client at once; a slow client's queue drops what does not fit (broadcast.hpp), so
//   no client slows the input or the others;
// - paced (a stored view, one viewer's): a batch waits until every client's queue has room
//   for it, and the reader waits (the rest held back in the pipe) while a few batches wait,
//   so nothing is dropped and memory stays bounded on both sides.
// In both the reader waits while the server thread itself is behind (max in flight).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/byte_source.hpp"
#include "net/asio.hpp"
#include "serve/broadcast.hpp"
#include "serve/input_pump.hpp"
#include "serve/record_classifier.hpp"

namespace tp::serve {

class WsClient;

struct ChannelSettings {
  bool paced = false;
  PumpOptions pump;
  // Batches posted to the server thread and not yet taken into the clients' queues.
  int max_in_flight = 32;
};

struct ChannelEvents {
  std::function<void(std::uint64_t line, std::string_view problem)> bad_line;  // on the reader's thread
  std::function<void(const std::string& error)> ended;                         // io thread; error empty at end
  std::function<bool()> muted;  // io thread: true drops a batch for everyone (a command told to stop)
};

class Channel : public std::enable_shared_from_this<Channel> {
 public:
  Channel(boost::asio::io_context& io, KindTable& kinds, ChannelSettings settings, ChannelEvents events);
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  Channel(Channel&&) = delete;
  Channel& operator=(Channel&&) = delete;
  ~Channel();

  // Reads records from `source` (after the previous source ended: a stored view going on live),
  // with the pump's options given at construction or these.
  void start(ByteSource source);
  void start(ByteSource source, PumpOptions pump);
  void add(const std::shared_ptr<WsClient>& client);
  void remove(const WsClient& client);
  [[nodiscard]] std::size_t clients() const noexcept { return clients_.size(); }
  // A client's queue has room again (paced: the waiting batches may go).
  void drained();
  // Stops reading (within 20 ms) and releases a reader waiting for room.
  void stop();
  [[nodiscard]] bool reading() const noexcept { return pump_ != nullptr; }
  [[nodiscard]] int in_flight();
  // Counts of the current and past sources.
  [[nodiscard]] std::uint64_t records() const noexcept;
  [[nodiscard]] std::uint64_t bad_lines() const noexcept;
  [[nodiscard]] bool saw_cycles_clock() const noexcept;
  // The statistics of the source that ended last (with PumpOptions::top_interval_s), once:
  // for the next source to count on (PumpOptions::statistics).
  [[nodiscard]] std::optional<RunStatistics> take_statistics() { return std::exchange(past_statistics_, std::nullopt); }

 private:
  void publish(std::shared_ptr<const Batch> batch);  // on the reader's thread
  void arrived(std::shared_ptr<const Batch> batch);  // on the io thread
  void flush_waiting();
  void release_one();
  void pump_ended(const std::string& error);

  boost::asio::io_context& io_;
  KindTable& kinds_;
  ChannelSettings settings_;
  ChannelEvents events_;
  std::vector<std::shared_ptr<WsClient>> clients_;
  std::deque<std::shared_ptr<const Batch>> waiting_;  // paced: taken by no client yet
  std::optional<std::string> end_pending_;            // paced: the reader ended with these waiting
  std::unique_ptr<InputPump> pump_;
  std::mutex flow_mutex_;  // guards in_flight_
  std::condition_variable flow_;
  int in_flight_ = 0;
  bool stopping_ = false;  // guarded by flow_mutex_
  std::uint64_t past_records_ = 0;
  std::uint64_t past_bad_lines_ = 0;
  bool past_cycles_clock_ = false;
  std::optional<RunStatistics> past_statistics_;
};

}  // namespace tp::serve
