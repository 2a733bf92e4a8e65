#include "itm/tpiu.hpp"

#include <algorithm>

#include "itm/le64.hpp"

namespace tp::itm {
namespace {
constexpr std::uint32_t full_sync = 0xFFFFFF7FU;  // FF FF FF 7F, in arrival order

constexpr std::uint64_t bytes_of(std::uint8_t byte) noexcept {
  return 0x0101010101010101ULL * byte;
}

// 0x80 in each byte of `word` that is zero, exactly (no borrow from a lower byte).
constexpr std::uint64_t zero_bytes(std::uint64_t word) noexcept {
  const std::uint64_t low7 = bytes_of(0x7F);
  return ~(((word & low7) + low7) | word | low7);
}
static_assert(zero_bytes(0x0100FF0000000001ULL) == 0x0080008080808000ULL);

// Four aux bits as the LSBs of bytes 0, 2, 4 and 6 of a word: the data bytes they complete.
constexpr std::array<std::uint64_t, 16> aux_lsbs = [] {
  std::array<std::uint64_t, 16> table{};
  for (unsigned bits = 0; bits < 16; ++bits) {
    for (unsigned k = 0; k < 4; ++k) table[bits] |= std::uint64_t{(bits >> k) & 1U} << (16U * k);
  }
  return table;
}();
}  // namespace

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
  const std::uint64_t low = load_le64_unaligned(frame);
  const std::uint64_t high = load_le64_unaligned(frame + 8);
  // Every sync, full or half, ends with FF 7F: without that pair the frame is plain data.
  const std::uint64_t ff_low = zero_bytes(~low);
  const std::uint64_t ff_high = zero_bytes(~high);
  const std::uint64_t ff_before_low = ff_low << 8U | ((last_four_ & 0xFFU) == 0xFFU ? 0x80U : 0U);
  const std::uint64_t ff_before_high = ff_high << 8U | ff_low >> 56U;
  if (((ff_before_low & zero_bytes(low ^ bytes_of(0x7F))) | (ff_before_high & zero_bytes(high ^ bytes_of(0x7F)))) !=
      0) {
    return false;
  }
  last_four_ = static_cast<std::uint32_t>((high >> 32U & 0xFFU) << 24U | (high >> 40U & 0xFFU) << 16U |
                                          (high >> 48U & 0xFFU) << 8U | high >> 56U);  // frame[12..15]
  // An ID change is an even byte with its LSB set (bytes 0..14; byte 15 is the aux byte).
  constexpr std::uint64_t even_lsbs = 0x0001000100010001ULL;
  const bool has_id = ((low | high) & even_lsbs) != 0;
  if (has_id || delayed_id_ || current_id_ != stream_) {
    std::copy(frame, frame + frame_.size(), frame_.begin());
    decode_frame(out);
    return true;
  }
  // Only data of the selected stream: 15 bytes, the even ones with their LSB from byte 15.
  // All 16 are stored, the last (the aux byte) where the next frame's first byte goes: feed()
  // makes room for a byte out per byte in.
  ++stats_.frames;
  stats_.selected_bytes += 15;
  const auto aux = static_cast<unsigned>(high >> 56U);
  store_le64_unaligned(out, low | aux_lsbs[aux & 0xFU]);
  store_le64_unaligned(out + 8, high | aux_lsbs[aux >> 4U]);
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
