// GDB Remote Serial Protocol framing, independent of I/O (GDB manual, "Remote Protocol",
// "Overview"): packets `$data#cs`, acks `+`/`-`, escapes `}` + (byte ^ 0x20),
// run-length encoding `X*N` in replies, and `%` notifications.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tp::gdb {

// `$payload#cs` with `$ # } *` escaped.
std::string frame_packet(std::string_view payload);

// The mod-256 sum the packet trailer carries.
std::uint8_t checksum(std::string_view bytes) noexcept;

// What the stub sent, one item at a time.
struct RspEvent {
  enum class Kind : std::uint8_t { ack, nak, packet, notification };
  Kind kind = Kind::packet;
  std::string payload;      // unescaped and run-length expanded (packets and notifications)
  bool checksum_ok = true;  // the trailer matched the bytes on the wire
};

// Push parser: feed() whatever arrived; complete items are appended to `out`.
class RspParser {
 public:
  // Longest payload accepted after expansion (a stub that never ends a packet cannot
  // make us grow without limit).
  static constexpr std::size_t max_payload = std::size_t{1} << 20U;

  void feed(std::span<const std::uint8_t> bytes, std::vector<RspEvent>& out);

  // Bytes outside any packet that were not acks (line noise, console output of a broken
  // stub), and packets dropped as malformed (bad RLE, over max_payload).
  [[nodiscard]] std::uint64_t stray_bytes() const noexcept { return stray_bytes_; }
  [[nodiscard]] std::uint64_t malformed_packets() const noexcept { return malformed_; }
  // Packets that used run-length encoding (GNU gdbserver does; QEMU and OpenOCD do not).
  [[nodiscard]] std::uint64_t run_length_packets() const noexcept { return run_length_packets_; }

 private:
  enum class State : std::uint8_t { idle, body, escape, repeat, checksum_high, checksum_low };
  void body_byte(std::uint8_t byte);
  void finish(std::vector<RspEvent>& out);

  State state_ = State::idle;
  bool notification_ = false;
  bool broken_ = false;
  bool run_length_ = false;
  std::uint64_t run_length_packets_ = 0;
  std::string payload_;
  std::uint8_t sum_ = 0;
  std::uint8_t trailer_ = 0;
  std::uint64_t stray_bytes_ = 0;
  std::uint64_t malformed_ = 0;
};

// Hex helpers for `m`/`M` payloads.
void append_hex(std::string& out, std::span<const std::uint8_t> bytes);
std::optional<std::vector<std::uint8_t>> decode_hex(std::string_view hex);

// `E NN` -> NN; anything else -> nothing.
std::optional<int> error_number(std::string_view reply);

// A stop reply (`S NN` or `T NN ...`).
bool is_stop_reply(std::string_view reply);
// The exit replies `W NN` / `X NN` (the process or the target is gone).
bool is_exit_reply(std::string_view reply);
// The process id of a `T` reply's `thread:pPID.TID` (multiprocess), if any.
std::optional<std::uint64_t> stop_reply_pid(std::string_view reply);

// qSupported reply features, e.g. PacketSize=1000;QStartNoAckMode+;multiprocess+
struct StubFeatures {
  std::size_t packet_size = 0;  // 0 when the stub did not say
  bool no_ack_mode = false;
  bool multiprocess = false;
  bool memory_map = false;  // probe servers (e.g. OpenOCD) offer qXfer:memory-map
};
StubFeatures parse_supported(std::string_view reply);

}  // namespace tp::gdb
