#include "fleet/ship_queue.hpp"

#include <algorithm>
#include <chrono>

#include "core/clock.hpp"

namespace tp {

ShipQueue::ShipQueue(ShipLimits limits) : limits_(limits) {}

bool ShipQueue::offer(Chunk&& chunk, bool wait) {
  std::unique_lock lock(mutex_);
  ++counts_.chunks_offered;
  last_offered_ = AckedPoint{chunk.last_seq, chunk.after};
  const auto fits = [&] {
    return hold_unsent_ || counts_.buffered_bytes + chunk.payload.size() <= limits_.buffer_bytes;
  };
  while (wait && !fits() && !entries_.empty() && !abandoned_) {
    changed_.wait_for(lock, std::chrono::milliseconds(50));
  }
  if (!fits()) {
    ++counts_.chunks_refused;
    return false;
  }
  counts_.buffered_bytes += chunk.payload.size();
  counts_.peak_buffered_bytes = std::max(counts_.peak_buffered_bytes, counts_.buffered_bytes);
  const std::uint64_t first = chunk.first_seq;
  entries_.emplace(first, Entry{std::move(chunk)});
  waiting_.insert(first);
  changed_.notify_all();
  return true;
}

void ShipQueue::close_input() {
  const std::lock_guard lock(mutex_);
  input_closed_ = true;
  changed_.notify_all();
}

void ShipQueue::retry_now() {
  const std::lock_guard lock(mutex_);
  resume_at_us_ = 0;
  failures_in_a_row_ = 0;
  changed_.notify_all();
}

void ShipQueue::abandon() {
  const std::lock_guard lock(mutex_);
  abandoned_ = true;
  changed_.notify_all();
}

void ShipQueue::hold_unsent() {
  const std::lock_guard lock(mutex_);
  hold_unsent_ = true;
  changed_.notify_all();
}

bool ShipQueue::done_locked() const {
  if (!input_closed_) return false;
  return std::all_of(entries_.begin(), entries_.end(),
                     [&](const auto& entry) { return hold_unsent_ && entry.second.sends == 0; });
}

std::optional<std::uint64_t> ShipQueue::next_to_send_locked() const {
  if (in_flight_ >= limits_.window) return std::nullopt;
  const auto it = std::find_if(waiting_.begin(), waiting_.end(),
                               [&](std::uint64_t first) { return !hold_unsent_ || entries_.at(first).sends > 0; });
  if (it == waiting_.end()) return std::nullopt;
  return *it;
}

void ShipQueue::wake() {
  const std::lock_guard lock(mutex_);
  woken_ = true;
  changed_.notify_all();
}

std::optional<ShipQueue::Send> ShipQueue::next(std::int64_t now_us, std::int64_t until_us,
                                               const std::function<void(const Chunk&)>& take) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (woken_) {
      woken_ = false;
      return std::nullopt;
    }
    if (done_locked()) return std::nullopt;
    const std::optional<std::uint64_t> sendable = next_to_send_locked();
    if (sendable && now_us >= resume_at_us_) {
      const std::uint64_t first = *sendable;
      Entry& entry = entries_.at(first);
      take(entry.chunk);
      const Send send{first, entry.chunk.last_seq, entry.sends > 0, entry.chunk.after};
      mark_sent(entry, now_us);
      return send;
    }
    if (now_us >= until_us) return std::nullopt;
    // Wait for a change, the end of a back-off or the caller's deadline.
    std::int64_t wake_at = until_us;
    if (sendable) wake_at = std::min(wake_at, resume_at_us_);
    changed_.wait_for(lock, std::chrono::microseconds(std::max<std::int64_t>(wake_at - now_us, 0)));
    now_us = static_cast<std::int64_t>(monotonic_us());
  }
}

void ShipQueue::mark_sent(Entry& entry, std::int64_t now_us) {
  waiting_.erase(entry.chunk.first_seq);
  entry.state = State::in_flight;
  entry.deadline_us = now_us + limits_.ack_timeout_us;
  if (entry.sends++ > 0) ++counts_.retries;
  ++in_flight_;
}

void ShipQueue::fail_locked(std::map<std::uint64_t, Entry>::iterator it, std::int64_t now_us) {
  if (it->second.state != State::in_flight) return;
  it->second.state = State::waiting;
  --in_flight_;
  waiting_.insert(it->first);
  ++counts_.failures;
  // Doubling back-off from the first failure in a row, +-25% so many shippers do not return at
  // the same instant. Failures during a back-off are of the same round: no doubling.
  if (now_us < resume_at_us_) {
    changed_.notify_all();
    return;
  }
  const unsigned doublings = std::min(failures_in_a_row_++, 16U);
  const std::int64_t backoff = std::min(limits_.max_backoff_us, limits_.min_backoff_us << doublings);
  const auto spread = static_cast<std::uint64_t>(backoff / 2);
  const std::int64_t jitter = spread == 0 ? 0 : static_cast<std::int64_t>(jitter_() % spread) - backoff / 4;
  resume_at_us_ = std::max(resume_at_us_, now_us + backoff + jitter);
  changed_.notify_all();
}

void ShipQueue::expire(std::int64_t now_us) {
  const std::lock_guard lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->second.state == State::in_flight && now_us >= it->second.deadline_us) fail_locked(it, now_us);
  }
}

void ShipQueue::acked(std::uint64_t first_seq, bool duplicate) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(first_seq);
  if (it == entries_.end()) return;  // a late ack of a chunk acknowledged already
  if (it->second.state == State::in_flight) {
    --in_flight_;
  } else {
    waiting_.erase(first_seq);  // an ack that came after its timeout: the server has it
  }
  ++counts_.chunks_acked;
  counts_.records_acked += it->second.chunk.last_seq - it->second.chunk.first_seq + 1;
  if (duplicate) ++counts_.duplicates;
  counts_.buffered_bytes -= it->second.chunk.payload.size();
  entries_.erase(it);
  failures_in_a_row_ = 0;
  changed_.notify_all();
}

void ShipQueue::failed(std::uint64_t first_seq, std::int64_t now_us) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(first_seq);
  if (it != entries_.end()) fail_locked(it, now_us);
}

void ShipQueue::not_sent(std::uint64_t first_seq) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(first_seq);
  if (it == entries_.end() || it->second.state != State::in_flight) return;
  it->second.state = State::waiting;
  it->second.sends = 0;
  --in_flight_;
  waiting_.insert(first_seq);
  changed_.notify_all();
}

bool ShipQueue::finished() const {
  const std::lock_guard lock(mutex_);
  return done_locked();
}

std::optional<ShipQueue::AckedPoint> ShipQueue::acked_through() const {
  const std::lock_guard lock(mutex_);
  if (!entries_.empty()) {
    const auto& [first, entry] = *entries_.begin();
    if (first == 0) return std::nullopt;
    return AckedPoint{first - 1, entry.chunk.before};
  }
  return last_offered_;
}

ShipCounts ShipQueue::counts() const {
  const std::lock_guard lock(mutex_);
  return counts_;
}

std::vector<SeqRange> ShipQueue::unacknowledged() const {
  const std::lock_guard lock(mutex_);
  std::vector<SeqRange> ranges;
  for (const auto& [first, entry] : entries_) {
    if (!ranges.empty() && ranges.back().last + 1 == first) {
      ranges.back().last = entry.chunk.last_seq;
    } else {
      ranges.push_back(SeqRange{first, entry.chunk.last_seq});
    }
  }
  return ranges;
}

}  // namespace tp
