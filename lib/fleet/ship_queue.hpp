// trace-ship's chunks between the reader that cuts them, the publisher and the server's
// acknowledgements (which cnats delivers on its own thread). Thread-safe.
//
//   offer ──> waiting ──next()──> in flight ──acked()──> gone (acked_through advances)
//                ^                    │
//                └──── failed() ──────┘   (a refusal, or no ack within the timeout)
//
// Bounded twice: a window of chunks in flight, and a buffer of bytes for every chunk not yet
// acknowledged; a chunk offered beyond the buffer is refused (the reader must never wait: a
// probe cannot). A failure resends oldest first after a back-off that doubles with each failure
// round in a row (min_backoff_us to max_backoff_us, with jitter; the failures of the chunks in
// flight together are one round), never in a busy loop: leader elections take seconds. A
// reconnection ends the back-off.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "fleet/chunk_builder.hpp"

namespace tp {

struct ShipLimits {
  std::size_t buffer_bytes = std::size_t{64} * 1024 * 1024;
  std::size_t window = 64;
  std::int64_t ack_timeout_us = 5'000'000;
  std::int64_t min_backoff_us = 100'000;
  std::int64_t max_backoff_us = 5'000'000;
};

struct ShipCounts {
  std::uint64_t chunks_offered = 0;
  std::uint64_t chunks_refused = 0;
  std::uint64_t chunks_acked = 0;
  std::uint64_t records_acked = 0;  // seqs in acknowledged chunks (Loss records included)
  std::uint64_t duplicates = 0;     // acks that said the server had the message already
  std::uint64_t retries = 0;        // chunks sent again after a failure or a timeout
  std::uint64_t failures = 0;
  std::size_t buffered_bytes = 0;
  std::size_t peak_buffered_bytes = 0;
};

class ShipQueue {
 public:
  explicit ShipQueue(ShipLimits limits);

  // Reader side. With `wait`, a chunk that does not fit waits for room (until the publisher
  // abandons the work) instead of being refused.
  bool offer(Chunk&& chunk, bool wait = false);
  void close_input();

  // Publisher side: waits until a chunk may be sent, the work is over (input closed and every
  // chunk acknowledged) or `until_us` (host monotonic) passes. The chunk to send is handed to
  // `take` under the queue's lock (to copy it: an ack on another thread may drop the chunk the
  // moment the lock is released) and is in flight from now_us on; what was sent, or nothing.
  struct Send {
    std::uint64_t first_seq = 0;
    std::uint64_t last_seq = 0;
    bool resend = false;
    InputMark after;  // the input after last_seq's line
  };
  std::optional<Send> next(std::int64_t now_us, std::int64_t until_us, const std::function<void(const Chunk&)>& take);
  // Sends whose ack is overdue count as failed.
  void expire(std::int64_t now_us);

  // Acknowledgement side (any thread).
  void acked(std::uint64_t first_seq, bool duplicate);
  void failed(std::uint64_t first_seq, std::int64_t now_us);
  // A chunk next() gave that was not sent after all: it waits again as never sent.
  void not_sent(std::uint64_t first_seq);

  // Ends the back-off (the connection is back) and sends again what failed at once.
  void retry_now();
  // Wakes a publisher waiting in next() (a stop was asked).
  void wake();
  // The publisher gave up (its drain ran out): a reader waiting for room stops waiting.
  void abandon();
  // From now on only chunks sent before are sent (again): the others stay, unsent, taken
  // without waiting for room (the journal could not record them; the reader is stopping).
  void hold_unsent();

  // The input is closed and every chunk acknowledged (with hold_unsent: every chunk sent).
  [[nodiscard]] bool finished() const;
  // Every seq up to this one was acknowledged or refused (told by a Loss record), if any,
  // and where the input stood after its line.
  struct AckedPoint {
    std::uint64_t seq = 0;
    InputMark mark;
  };
  [[nodiscard]] std::optional<AckedPoint> acked_through() const;
  [[nodiscard]] ShipCounts counts() const;
  // The seq ranges not acknowledged (at a stop): what may be lost.
  [[nodiscard]] std::vector<SeqRange> unacknowledged() const;

 private:
  enum class State : std::uint8_t { waiting, in_flight };
  struct Entry {
    Chunk chunk;
    State state = State::waiting;
    std::int64_t deadline_us = 0;
    unsigned sends = 0;
  };
  void fail_locked(std::map<std::uint64_t, Entry>::iterator it, std::int64_t now_us);
  void mark_sent(Entry& entry, std::int64_t now_us);
  [[nodiscard]] bool done_locked() const;
  [[nodiscard]] std::optional<std::uint64_t> next_to_send_locked() const;

  ShipLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::uint64_t, Entry> entries_;  // by first_seq
  std::set<std::uint64_t> waiting_;
  std::size_t in_flight_ = 0;
  bool input_closed_ = false;
  bool woken_ = false;
  bool abandoned_ = false;
  bool hold_unsent_ = false;
  std::optional<AckedPoint> last_offered_;
  std::int64_t resume_at_us_ = 0;
  unsigned failures_in_a_row_ = 0;
  std::minstd_rand jitter_{12345};
  ShipCounts counts_;
};

}  // namespace tp
