// TPIU (CoreSight trace formatter) 16-byte frames: deformatter and framer.
// Frame layout (CoreSight TPIU, "formatter protocol"): even bytes 0..14 are data or a
// stream-ID change (LSB 1); byte 15 holds, in bit k, the real LSB of data byte 2k or,
// for an ID change, whether it takes effect only after the next data byte; odd bytes
// 1..13 are data. (Byte 14 follows the even-byte rule with aux bit 7: checked against
// the real STM32F105 capture, whose streams 1 and 2 then match sigrok byte for byte.) Full sync FF FF FF 7F may appear
// at any alignment and restarts framing; a half sync FF 7F on a 16-bit boundary is padding.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tp::itm {

struct TpiuStats {
  std::uint64_t frames = 0;
  std::uint64_t full_syncs = 0;
  std::uint64_t half_syncs = 0;
  std::uint64_t selected_bytes = 0;   // bytes of the selected stream
  std::uint64_t other_bytes = 0;      // bytes of other streams (not ID 0)
  std::uint64_t trigger_bytes = 0;    // ID 0x7D
  std::uint64_t discarded_bytes = 0;  // partial frames cut off by a full sync
  bool operator==(const TpiuStats&) const = default;
};

class TpiuDeformatter {
 public:
  static constexpr std::uint8_t null_id = 0x00;
  static constexpr std::uint8_t trigger_id = 0x7D;

  explicit TpiuDeformatter(std::uint8_t stream) noexcept : stream_(stream) {}

  // Appends the bytes of the selected stream to `out`. Until the first full sync,
  // the input is taken to start on a frame boundary.
  void feed(std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& out);
  [[nodiscard]] const TpiuStats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::uint8_t current_id() const noexcept { return current_id_; }
  // Bytes of an incomplete frame at end of input.
  [[nodiscard]] std::size_t pending_bytes() const noexcept { return frame_size_; }

 private:
  // The selected stream's bytes are written at `out`, which moves on: feed() makes room for
  // as many as it was given plus those of a frame begun before (each byte out is a byte in).
  void take_byte(std::uint8_t byte, std::uint8_t*& out);
  // A whole frame at `frame` when no sync ends in it (the bulk of a stream): decoded
  // without the byte-wise framing; false (nothing done) otherwise.
  bool take_whole_frame(const std::uint8_t* frame, std::uint8_t*& out);
  void decode_frame(std::uint8_t*& out);
  void emit(std::uint8_t byte, std::uint8_t*& out);

  std::array<std::uint8_t, 16> frame_{};
  std::size_t frame_size_ = 0;
  std::uint32_t last_four_ = 0;
  std::uint8_t stream_;
  std::uint8_t current_id_ = null_id;
  std::optional<std::uint8_t> delayed_id_;  // takes effect after the next data byte
  TpiuStats stats_;
};

// Builds TPIU frames from (stream ID, bytes) runs: the inverse of TpiuDeformatter,
// for tests and the simulator. Frames are built once 16 bytes are queued, or on flush().
class TpiuFramer {
 public:
  void sync(std::vector<std::uint8_t>& out);  // full sync (flushes a partial frame first)
  void write(std::uint8_t stream, std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& out);
  // Writes out everything queued, padding the last frame with the null stream.
  void flush(std::vector<std::uint8_t>& out);

 private:
  struct Item {
    std::uint8_t stream;
    std::uint8_t byte;
  };
  void build_frame(std::vector<std::uint8_t>& out);

  std::vector<Item> queue_;
  std::size_t head_ = 0;
  std::uint8_t current_ = TpiuDeformatter::null_id;
};

}  // namespace tp::itm
