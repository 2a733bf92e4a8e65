#include "serve/channel.hpp"

#include <algorithm>
#include <chrono>

#include "serve/ws_client.hpp"

namespace tp::serve {

Channel::Channel(boost::asio::io_context& io, KindTable& kinds, ChannelSettings settings, ChannelEvents events)
    : io_(io), kinds_(kinds), settings_(std::move(settings)), events_(std::move(events)) {}

Channel::~Channel() {
  stop();
  pump_.reset();  // joins the reader
}

void Channel::start(ByteSource source) {
  start(std::move(source), settings_.pump);
}

void Channel::start(ByteSource source, PumpOptions pump) {
  {
    const std::scoped_lock lock(flow_mutex_);
    stopping_ = false;
  }
  PumpCallbacks callbacks;
  callbacks.publish = [this](std::shared_ptr<const Batch> batch) { publish(std::move(batch)); };
  callbacks.bad_line = [this](std::uint64_t line, std::string_view problem) {
    if (events_.bad_line) events_.bad_line(line, problem);
  };
  // The pump outlives no channel (joined in the destructor), but its last post may.
  callbacks.ended = [weak = weak_from_this(), &io = io_](std::string_view error) {
    boost::asio::post(io, [weak, error = std::string(error)] {
      if (const auto self = weak.lock()) self->pump_ended(error);
    });
  };
  pump_ = std::make_unique<InputPump>(std::move(source), kinds_, std::move(callbacks), std::move(pump));
}

void Channel::add(const std::shared_ptr<WsClient>& client) {
  clients_.push_back(client);
}

void Channel::remove(const WsClient& client) {
  std::erase_if(clients_, [&](const auto& c) { return c.get() == &client; });
  flush_waiting();  // a paced batch waits for the clients still there
}

// On the reader's thread: the reader waits while the server has max_in_flight batches to
// place, so the input is held back in the pipe rather than lost or piled up.
void Channel::publish(std::shared_ptr<const Batch> batch) {
  {
    std::unique_lock lock(flow_mutex_);
    while (in_flight_ >= settings_.max_in_flight && !stopping_) flow_.wait_for(lock, std::chrono::milliseconds(20));
    ++in_flight_;  // past a stop too: what was read is still delivered
  }
  boost::asio::post(io_, [weak = weak_from_this(), batch = std::move(batch)]() mutable {
    if (const auto self = weak.lock()) self->arrived(std::move(batch));
  });
}

void Channel::arrived(std::shared_ptr<const Batch> batch) {
  if (events_.muted && events_.muted()) return release_one();
  if (!settings_.paced) {
    release_one();
    for (const auto& client : clients_) client->deliver(batch);
    return;
  }
  waiting_.push_back(std::move(batch));
  flush_waiting();
}

void Channel::flush_waiting() {
  while (!waiting_.empty()) {
    const auto& batch = waiting_.front();
    const bool room = std::all_of(clients_.begin(), clients_.end(), [&](const auto& c) { return c->has_room(*batch); });
    if (!room) return;
    for (const auto& client : clients_) client->deliver(batch);
    waiting_.pop_front();
    release_one();
  }
  if (end_pending_) {
    const std::string error = std::move(*end_pending_);
    end_pending_.reset();
    if (events_.ended) events_.ended(error);
  }
}

void Channel::drained() {
  if (settings_.paced) flush_waiting();
}

void Channel::release_one() {
  {
    const std::scoped_lock lock(flow_mutex_);
    --in_flight_;
  }
  flow_.notify_one();
}

void Channel::stop() {
  {
    const std::scoped_lock lock(flow_mutex_);
    stopping_ = true;
  }
  flow_.notify_all();
  if (pump_) pump_->stop();
}

int Channel::in_flight() {
  const std::scoped_lock lock(flow_mutex_);
  return in_flight_;
}

void Channel::pump_ended(const std::string& error) {
  if (pump_) {
    past_records_ += pump_->records();
    past_bad_lines_ += pump_->bad_lines();
    past_cycles_clock_ = past_cycles_clock_ || pump_->saw_cycles_clock();
    past_statistics_ = pump_->statistics_at_end();
  }
  pump_.reset();
  // Paced: the end is told after the batches still waiting for room are queued.
  if (!waiting_.empty()) {
    end_pending_ = error;
    return;
  }
  if (events_.ended) events_.ended(error);
}

std::uint64_t Channel::records() const noexcept {
  return past_records_ + (pump_ ? pump_->records() : 0);
}
std::uint64_t Channel::bad_lines() const noexcept {
  return past_bad_lines_ + (pump_ ? pump_->bad_lines() : 0);
}
bool Channel::saw_cycles_clock() const noexcept {
  return past_cycles_clock_ || (pump_ && pump_->saw_cycles_clock());
}

}  // namespace tp::serve
