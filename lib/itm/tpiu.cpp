#include "itm/tpiu.hpp"

#include <algorithm>

namespace tp::itm {
namespace {
constexpr std::uint32_t full_sync = 0xFFFFFF7FU;  // FF FF FF 7F, in arrival order
}

void TpiuDeformatter::emit(std::uint8_t byte, std::uint8_t*& out) {
  if (current_id_ == stream_) {
    *out++ = byte;
    ++stats_.selected_bytes;
  } else if (current_id_ == trigger_id) {
    ++stats_.trigger_bytes;
  } else if (current_id_ != null_id) {
    ++stats_.other_bytes;
  }
}

void TpiuDeformatter::feed(std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& out) {
  // Each byte out is one byte in: of this input, or of a frame begun in the previous one.
  const std::size_t start = out.size();
  out.resize(start + frame_size_ + bytes.size());
  std::uint8_t* cursor = out.data() + start;
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (frame_size_ == 0 && bytes.size() - i >= frame_.size() && take_whole_frame(bytes.data() + i, cursor)) {
      i += frame_.size();
      continue;
    }
    take_byte(bytes[i++], cursor);
  }
  out.resize(static_cast<std::size_t>(cursor - out.data()));
}

void TpiuDeformatter::take_byte(std::uint8_t b, std::uint8_t*& out) {
  last_four_ = (last_four_ << 8U) | b;
  if (last_four_ == full_sync) {
    // The sync's first three bytes went into the frame buffer; anything before them
    // was an incomplete frame.
    stats_.discarded_bytes += frame_size_ >= 3 ? frame_size_ - 3 : 0;
    ++stats_.full_syncs;
    frame_size_ = 0;
    return;
  }
  frame_[frame_size_++] = b;
  if ((frame_size_ & 1U) == 0 && frame_[frame_size_ - 2] == 0xFF && b == 0x7F) {
    frame_size_ -= 2;  // half sync on a 16-bit boundary: padding
    ++stats_.half_syncs;
    return;
  }
  if (frame_size_ == frame_.size()) {
    decode_frame(out);
    frame_size_ = 0;
  }
}

bool TpiuDeformatter::take_whole_frame(const std::uint8_t* frame, std::uint8_t*& out) {
  // Every sync, full or half, ends with FF 7F: without that pair the frame is plain data.
  auto before = static_cast<std::uint8_t>(last_four_ & 0xFFU);
  bool has_id = false;
  for (std::size_t k = 0; k < frame_.size(); ++k) {
    if (frame[k] == 0x7F && before == 0xFF) return false;
    before = frame[k];
    if (k % 2 == 0 && k < 15) has_id = has_id || (frame[k] & 1U) != 0;
  }
  last_four_ = static_cast<std::uint32_t>(frame[12]) << 24U | static_cast<std::uint32_t>(frame[13]) << 16U |
               static_cast<std::uint32_t>(frame[14]) << 8U | frame[15];
  if (has_id || delayed_id_ || current_id_ != stream_) {
    std::copy(frame, frame + frame_.size(), frame_.begin());
    decode_frame(out);
    return true;
  }
  // Only data of the selected stream: 15 bytes, the even ones with their LSB from byte 15.
  ++stats_.frames;
  stats_.selected_bytes += 15;
  const std::uint8_t aux = frame[15];
  for (std::size_t k = 0; k < 8; ++k) {
    out[2 * k] = static_cast<std::uint8_t>(frame[2 * k] | ((aux >> k) & 1U));
    if (k < 7) out[2 * k + 1] = frame[2 * k + 1];
  }
  out += 15;
  return true;
}

void TpiuDeformatter::decode_frame(std::uint8_t*& out) {
  ++stats_.frames;
  const std::uint8_t aux = frame_[15];
  const auto data = [&](std::uint8_t byte) {
    emit(byte, out);
    if (delayed_id_) {
      current_id_ = *delayed_id_;
      delayed_id_.reset();
    }
  };
  for (std::size_t k = 0; k < 8; ++k) {
    const std::uint8_t even = frame_[2 * k];
    const bool aux_bit = ((aux >> k) & 1U) != 0;
    if ((even & 1U) != 0) {
      const auto id = static_cast<std::uint8_t>(even >> 1U);
      if (aux_bit) {
        delayed_id_ = id;  // the next data byte still belongs to the old stream
      } else {
        current_id_ = id;
        delayed_id_.reset();
      }
    } else {
      data(static_cast<std::uint8_t>(even | (aux_bit ? 1U : 0U)));
    }
    if (k < 7) data(frame_[2 * k + 1]);
  }
}

void TpiuFramer::sync(std::vector<std::uint8_t>& out) {
  flush(out);
  out.insert(out.end(), {0xFF, 0xFF, 0xFF, 0x7F});
}

void TpiuFramer::write(std::uint8_t stream, std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& out) {
  for (const std::uint8_t b : bytes) queue_.push_back({stream, b});
  while (queue_.size() - head_ >= 16) build_frame(out);
  if (head_ > 4096) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

void TpiuFramer::flush(std::vector<std::uint8_t>& out) {
  while (head_ < queue_.size()) build_frame(out);
  queue_.clear();
  head_ = 0;
}

void TpiuFramer::build_frame(std::vector<std::uint8_t>& out) {
  std::array<std::uint8_t, 16> frame{};
  const auto set_even = [&](std::size_t slot, std::uint8_t value, bool aux) {
    frame[slot] = value;
    if (aux) frame[15] = static_cast<std::uint8_t>(frame[15] | (1U << (slot / 2)));
  };
  const auto take = [&] { return queue_[head_++].byte; };
  const auto pending = [&] { return head_ < queue_.size(); };
  const auto next_stream = [&] { return pending() ? queue_[head_].stream : TpiuDeformatter::null_id; };
  bool previous_was_id = false;
  for (std::size_t slot = 0; slot < 15; ++slot) {
    const std::uint8_t want = next_stream();
    if (slot % 2 == 0) {
      if (want != current_) {
        current_ = want;
        set_even(slot, static_cast<std::uint8_t>((static_cast<unsigned>(current_) << 1U) | 1U), false);
        previous_was_id = true;
      } else {
        const std::uint8_t b = want == current_ && pending() ? take() : 0;
        set_even(slot, static_cast<std::uint8_t>(b & 0xFEU), (b & 1U) != 0);
        previous_was_id = false;
      }
      continue;
    }
    if (want == current_ || current_ == TpiuDeformatter::null_id) {
      frame[slot] = want == current_ && pending() ? take() : 0;
    } else if (previous_was_id) {
      // Replace the unused ID change before this slot by the one we need now.
      current_ = want;
      set_even(slot - 1, static_cast<std::uint8_t>((static_cast<unsigned>(want) << 1U) | 1U), false);
      frame[slot] = pending() ? take() : 0;
    } else {
      // Delayed ID change: the even slot before becomes the change, its data byte
      // moves here and still belongs to the old stream.
      const auto even = static_cast<std::uint8_t>(frame[slot - 1] | ((frame[15] >> ((slot - 1) / 2)) & 1U));
      frame[slot - 1] = static_cast<std::uint8_t>((static_cast<unsigned>(want) << 1U) | 1U);
      frame[15] = static_cast<std::uint8_t>(frame[15] | (1U << ((slot - 1) / 2)));
      frame[slot] = even;
      current_ = want;
    }
    previous_was_id = false;
  }
  out.insert(out.end(), frame.begin(), frame.end());
}

}  // namespace tp::itm
