#include "serve/broadcast.hpp"

#include <fmt/format.h>

#include <iterator>

#include "serve/protocol.hpp"
#include "serve/websocket_frame.hpp"

namespace tp::serve {

namespace {
constexpr std::size_t event_prefix = std::string_view(R"({"type":"Event","data":)").size();
constexpr std::size_t itm_prefix = std::string_view(R"({"type":"Itm","data":)").size();

// A line's length as JavaScript counts it, in UTF-16 code units: every byte that starts a
// UTF-8 sequence is one unit, and a 4-byte sequence is two (a surrogate pair). The viewer
// cuts each record's exact text out of the message with these lengths instead of scanning it.
std::size_t utf16_length(std::string_view line) noexcept {
  std::size_t units = 0;
  for (const char c : line) {
    const auto byte = static_cast<unsigned char>(c);
    units += static_cast<std::size_t>((byte & 0xC0U) != 0x80U) + static_cast<std::size_t>(byte >= 0xF0U);
  }
  return units;
}
}  // namespace

void BatchBuilder::add(std::string_view line, const RecordRoute& route, std::uint64_t now_us) {
  if (!batch_) {
    batch_ = std::make_shared<Batch>();
    batch_->created_us = now_us;
  }
  Batch& batch = *batch_;
  const std::size_t offset = batch.bytes.size();
  const std::size_t prefix = route.itm ? itm_prefix : event_prefix;
  append_frame_header(batch.bytes, Opcode::text, prefix + line.size() + 1);
  const std::size_t line_offset = batch.bytes.size() + prefix;
  if (route.itm) {
    append_itm_message(batch.bytes, line);
  } else {
    append_event_message(batch.bytes, line);
  }
  batch.items.push_back(
      BatchItem{static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(batch.bytes.size() - offset),
                static_cast<std::uint32_t>(line_offset), static_cast<std::uint32_t>(line.size()), route});
  batch.kinds |= 1ULL << route.kind;
  batch.port_bits |= route.port_bits;
  batch.high_port = batch.high_port || route.high_port;
}

std::shared_ptr<const Batch> BatchBuilder::take() {
  std::shared_ptr<const Batch> done = std::move(batch_);
  batch_.reset();
  return done;
}

Offered SendQueue::push(const std::shared_ptr<const Batch>& batch, const ClientFilter& filter) {
  if (batched_) return push_batched(*batch, filter);
  if (filter.accepts_all(*batch) && (data_bytes_ + batch->bytes.size() <= data_limit_)) {
    chunks_.push_back(Chunk{batch, {}, batch->items.size(), true});
    data_bytes_ += batch->bytes.size();
    return Offered{batch->items.size(), 0};
  }
  return push_selected(*batch, filter);
}

Offered SendQueue::push_selected(const Batch& batch, const ClientFilter& filter) {
  Chunk chunk;
  chunk.data = true;
  Offered offered;
  for (const BatchItem& item : batch.items) {
    if (!filter.accepts(item.route)) continue;
    ++offered.accepted;
    // What does not fit is dropped; a record larger than the whole queue never fits, so it
    // is never copied for a client (its bytes stay in the shared batch alone).
    if (data_bytes_ + chunk.own.size() + item.size > data_limit_) {
      ++offered.dropped;
      continue;
    }
    chunk.own.append(batch.bytes, item.offset, item.size);
    ++chunk.events;
  }
  if (chunk.events > 0) {
    data_bytes_ += chunk.own.size();
    chunks_.push_back(std::move(chunk));
  }
  return offered;
}

Offered SendQueue::push_batched(const Batch& batch, const ClientFilter& filter) {
  constexpr std::string_view opening = R"({"type":"Events","lengths":[)";
  constexpr std::string_view middle = R"(],"data":[)";
  constexpr std::string_view closing = "]}";
  constexpr std::size_t largest_header = 10;  // RFC 6455 5.2: 64-bit payload length
  constexpr std::size_t largest_length = 11;  // digits of a u32 and its comma
  std::string lengths(opening);
  std::string records;
  Offered offered;
  std::uint64_t events = 0;
  for (const BatchItem& item : batch.items) {
    if (!filter.accepts(item.route)) continue;
    ++offered.accepted;
    const std::size_t size_after = data_bytes_ + largest_header + lengths.size() + records.size() + item.line_size +
                                   largest_length + 1 + middle.size() + closing.size();
    if (size_after > data_limit_) {
      ++offered.dropped;
      continue;
    }
    if (events > 0) {
      lengths += ',';
      records += ',';
    }
    const std::string_view line(batch.bytes.data() + item.line_offset, item.line_size);
    fmt::format_to(std::back_inserter(lengths), "{}", utf16_length(line));
    records += line;
    ++events;
  }
  if (events == 0) return offered;
  lengths += middle;
  lengths += records;
  lengths += closing;
  Chunk chunk;
  chunk.data = true;
  chunk.events = events;
  chunk.own = make_frame(Opcode::text, lengths);
  data_bytes_ += chunk.own.size();
  chunks_.push_back(std::move(chunk));
  return offered;
}

bool SendQueue::push_control(std::string frame, bool advisory) {
  if (advisory && control_bytes_ + frame.size() > control_limit_) return false;
  control_bytes_ += frame.size();
  chunks_.push_back(Chunk{nullptr, std::move(frame), 0, false});
  return true;
}

void SendQueue::gather(std::vector<std::string_view>& out, std::size_t max_chunks, std::size_t max_bytes) const {
  out.clear();
  std::size_t total = 0;
  for (const Chunk& chunk : chunks_) {
    if (out.size() == max_chunks || (total >= max_bytes && !out.empty())) break;
    out.push_back(chunk.view());
    total += out.back().size();
  }
}

Delivered SendQueue::pop(std::size_t chunks) {
  Delivered delivered;
  for (std::size_t i = 0; i < chunks && !chunks_.empty(); ++i) {
    const Chunk& chunk = chunks_.front();
    const std::size_t size = chunk.view().size();
    if (chunk.data) {
      data_bytes_ -= size;
      delivered.events += chunk.events;
      delivered.bytes += size;
    } else {
      control_bytes_ -= size;
    }
    chunks_.pop_front();
  }
  return delivered;
}

}  // namespace tp::serve
