// The fan-out of records to many clients. Each input record is framed once, as a whole
// WebSocket message (server frames are unmasked, so the same bytes suit every client), into
// a shared, immutable batch. A client's send queue refers to whole batches it takes entirely
// and copies the records it takes from a batch it filters; it is bounded, and what does not
// fit is dropped and counted (a record larger than the queue always is), so a client costs
// at most its queue size in copies and never slows the input or the other clients.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "serve/record_classifier.hpp"

namespace tp::serve {

struct BatchItem {
  std::uint32_t offset = 0;  // of the frame (header + message) in Batch::bytes
  std::uint32_t size = 0;
  std::uint32_t line_offset = 0;  // of the record line itself, inside the frame
  std::uint32_t line_size = 0;
  RecordRoute route;
};

// The subprotocol of the batched form, which trace-serve's own viewer asks for: records go
// many to a message, {"type":"Events","data":[RECORD or FRAMES LINE, ...]}, one message per
// batch a client takes from. A Callisto client never asks for it, so never sees it.
inline constexpr std::string_view batch_subprotocol = "tracepipe.batch";

struct Batch {
  std::string bytes;
  std::vector<BatchItem> items;
  std::uint64_t kinds = 0;      // union of the items' kind bits
  std::uint32_t port_bits = 0;  // union of the items' ports 0-31
  bool high_port = false;
  std::uint64_t created_us = 0;  // when its first record was read (for latency)
};

class BatchBuilder {
 public:
  // Appends the record line framed as an Event (or, for frames lines, Itm) message.
  void add(std::string_view line, const RecordRoute& route, std::uint64_t now_us);
  [[nodiscard]] bool empty() const noexcept { return !batch_ || batch_->items.empty(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return batch_ ? batch_->bytes.size() : 0; }
  std::shared_ptr<const Batch> take();

 private:
  std::shared_ptr<Batch> batch_;
};

struct ClientFilter {
  std::uint32_t port_mask = 0xFFFFFFFFU;            // Start.allow_mask & SetFilter.port_mask
  std::uint64_t kinds = KindTable::callisto_kinds;  // SetFilter.event_types

  [[nodiscard]] bool all_ports() const noexcept { return port_mask == 0xFFFFFFFFU; }
  [[nodiscard]] bool accepts(const RecordRoute& route) const noexcept {
    if ((kinds & (1ULL << route.kind)) == 0) return false;
    return (route.port_bits & port_mask) != 0 || (route.high_port && all_ports());
  }
  [[nodiscard]] bool accepts_all(const Batch& batch) const noexcept {
    return (batch.kinds & ~kinds) == 0 && (all_ports() || ((batch.port_bits & ~port_mask) == 0 && !batch.high_port));
  }
};

// What one batch meant for one client: the records its filter accepted, and how many of
// those did not fit its queue.
struct Offered {
  std::uint64_t accepted = 0;
  std::uint64_t dropped = 0;
};

struct Delivered {
  std::uint64_t events = 0;
  std::uint64_t bytes = 0;
};

class SendQueue {
 public:
  SendQueue(std::size_t data_limit, std::size_t control_limit)
      : data_limit_(data_limit), control_limit_(control_limit) {}
  // The queue of a client that takes the batched form is this many times larger: its unit
  // is a whole input batch (up to 256 KiB), so the default 1 MiB would hold only a few
  // messages, about 30 ms at 200,000 records/s, and a browser's garbage collection or a
  // redraw takes longer than that.
  static constexpr std::size_t batched_queue_factor = 4;

  // From now on, records are queued in the batched form (in a larger queue).
  void use_batches() noexcept {
    batched_ = true;
    data_limit_ *= batched_queue_factor;
  }

  // Queues what the filter accepts; says how many it accepted and how many of those did
  // not fit.
  Offered push(const std::shared_ptr<const Batch>& batch, const ClientFilter& filter);
  // Whether the batch's records all fit now, in either form: the batched one spends at most
  // 13 bytes a record where the frames spend at least 25, and its message's own framing
  // (batched_overhead) once.
  static constexpr std::size_t batched_overhead = 64;
  [[nodiscard]] bool has_room(const Batch& batch) const noexcept {
    return data_bytes_ + batch.bytes.size() + batched_overhead <= data_limit_;
  }
  // Queues a framed control message (Hello, Status, Error, pong, close...). Advisory ones
  // (Stats, rate-limited Errors) are refused when the control budget is used up.
  bool push_control(std::string frame, bool advisory);

  // The front of the queue for one gathered write.
  void gather(std::vector<std::string_view>& out, std::size_t max_chunks, std::size_t max_bytes) const;
  Delivered pop(std::size_t chunks);

  [[nodiscard]] bool empty() const noexcept { return chunks_.empty(); }
  [[nodiscard]] std::size_t data_bytes() const noexcept { return data_bytes_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return data_bytes_ + control_bytes_; }

 private:
  struct Chunk {
    std::shared_ptr<const Batch> batch;  // set when the chunk is a whole batch
    std::string own;                     // else the bytes are here
    std::uint64_t events = 0;
    bool data = false;
    [[nodiscard]] std::string_view view() const noexcept { return batch ? std::string_view(batch->bytes) : own; }
  };
  Offered push_selected(const Batch& batch, const ClientFilter& filter);
  Offered push_batched(const Batch& batch, const ClientFilter& filter);

  std::deque<Chunk> chunks_;
  std::size_t data_limit_;
  std::size_t control_limit_;
  std::size_t data_bytes_ = 0;
  std::size_t control_bytes_ = 0;
  bool batched_ = false;
};

}  // namespace tp::serve
