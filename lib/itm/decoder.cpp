#include "itm/decoder.hpp"

namespace tp::itm {
namespace {

constexpr std::uint32_t sync_min_zero_bytes = 5;  // 5 x 8 + 7 zero bits of 0x80 = 47
constexpr std::uint8_t lts_max_payload = 4;
constexpr std::uint8_t gts1_max_payload = 4;
constexpr std::uint8_t gts2_max_payload = 6;
constexpr std::uint8_t extension_max_payload = 4;

bool is_extension(std::uint8_t h) {
  return (h & 0x0BU) == 0x08U;
}  // C EEE 1 S 0 0

}  // namespace

std::string_view packet_kind_name(PacketKind kind) noexcept {
  switch (kind) {
    case PacketKind::sync:
      return "sync";
    case PacketKind::overflow:
      return "overflow";
    case PacketKind::local_timestamp:
      return "local_timestamp";
    case PacketKind::global_timestamp1:
      return "global_timestamp1";
    case PacketKind::global_timestamp2:
      return "global_timestamp2";
    case PacketKind::stimulus_page:
      return "stimulus_page";
    case PacketKind::extension:
      return "extension";
    case PacketKind::instrumentation:
      return "instrumentation";
    case PacketKind::event_counter:
      return "event_counter";
    case PacketKind::exception:
      return "exception";
    case PacketKind::pc_sample:
      return "pc_sample";
    case PacketKind::data_trace_pc:
      return "data_trace_pc";
    case PacketKind::data_trace_address:
      return "data_trace_address";
    case PacketKind::data_trace_value:
      return "data_trace_value";
    case PacketKind::hardware:
      return "hardware";
    case PacketKind::malformed:
      return "malformed";
  }
  return "unknown";
}

std::string_view malformed_reason_name(MalformedReason reason) noexcept {
  switch (reason) {
    case MalformedReason::reserved_header:
      return "reserved header";
    case MalformedReason::stray_zeros:
      return "zero bytes without a sync";
    case MalformedReason::too_long:
      return "packet longer than its maximum";
    case MalformedReason::truncated:
      return "packet cut short";
    case MalformedReason::bad_length:
      return "invalid packet length";
    case MalformedReason::unsynchronized:
      return "bytes skipped before a sync";
  }
  return "malformed";
}

ItmDecoder::ItmDecoder(DecoderOptions options) noexcept : options_(options) {
  reset();
}

void ItmDecoder::reset() noexcept {
  state_ = options_.wait_for_sync ? State::unsynced : State::header;
  current_ = Packet{};
  expected_ = 0;
  page_ = 0;
  zero_run_ = 0;
  header_zeros_ = 0;
  garbage_ = Packet{};
}

void ItmDecoder::add_garbage(std::uint8_t first_byte, std::uint32_t bytes, MalformedReason reason) {
  if (garbage_.value == 0) {
    garbage_ = Packet{};
    garbage_.kind = PacketKind::malformed;
    garbage_.header = first_byte;
    garbage_.info = static_cast<std::uint8_t>(reason);
  }
  garbage_.value += bytes;
}

int ItmDecoder::flush_garbage(int count) {
  if (garbage_.value == 0) return count;
  out(count) = garbage_;
  garbage_ = Packet{};
  return count + 1;
}

void ItmDecoder::after_malformed() noexcept {
  state_ = options_.strict_sync ? State::unsynced : State::header;
}

int ItmDecoder::malformed_packet_in_progress(int count, MalformedReason reason) {
  add_garbage(current_.header, 1U + current_.length, reason);
  after_malformed();
  return flush_garbage(count);
}

int ItmDecoder::step(std::uint8_t byte) {
  const std::uint32_t zeros_before = zero_run_;
  zero_run_ = byte == 0 ? zero_run_ + 1 : 0;
  switch (state_) {
    case State::header:
      return on_header(byte, zeros_before);
    case State::fixed_payload:
      return on_fixed_payload(byte);
    case State::continuation:
      return on_continuation(byte);
    case State::skip_continuation:
      return on_skipped_continuation(byte);
    case State::unsynced:
      return on_unsynced(byte, zeros_before);
  }
  return 0;
}

int ItmDecoder::on_unsynced(std::uint8_t byte, std::uint32_t zeros_before) {
  if (byte == 0) {
    ++header_zeros_;  // may be the start of the sync we wait for
    return 0;
  }
  if (byte == 0x80 && zeros_before >= sync_min_zero_bytes) {
    state_ = State::header;
    return on_header(byte, zeros_before);
  }
  add_garbage(byte, header_zeros_ + 1, MalformedReason::unsynchronized);
  header_zeros_ = 0;
  return 0;
}

int ItmDecoder::on_header(std::uint8_t h, std::uint32_t zeros_before) {
  if (h == 0) {
    ++header_zeros_;
    return 0;
  }
  if (h == 0x80 && zeros_before >= sync_min_zero_bytes) {
    // Zeros consumed as payload of the previous packet may belong to the sync too.
    header_zeros_ = 0;
    page_ = 0;
    state_ = State::header;
    const int n = flush_garbage(0);
    out(n) = Packet{PacketKind::sync, h, 0, 0, 0, 0, 0};
    return n + 1;
  }
  if (header_zeros_ != 0) {
    add_garbage(0, header_zeros_, MalformedReason::stray_zeros);
    header_zeros_ = 0;
    if (options_.strict_sync) {
      state_ = State::unsynced;
      return on_unsynced(h, 0);
    }
  }
  current_ = Packet{};
  current_.header = h;
  if ((h & 3U) != 0) {  // source packet: SWIT or hardware
    expected_ = source_payload_length_of(h);
    state_ = State::fixed_payload;
    return 0;
  }
  int n = 0;
  const auto begin_continuation = [&](PacketKind kind, std::uint8_t max_payload, std::uint8_t info) {
    current_.kind = kind;
    current_.info = info;
    expected_ = max_payload;
    state_ = State::continuation;
  };
  if (h == 0x70) {
    n = flush_garbage(0);
    out(n) = Packet{PacketKind::overflow, h, 0, 0, 0, 0, 0};
    return n + 1;
  }
  if ((h & 0x0FU) == 0) {
    if ((h & 0x80U) == 0) {  // LTS2: 0TTT0000, TTT = 1..6 (0x70 is overflow)
      n = flush_garbage(0);
      out(n) = Packet{PacketKind::local_timestamp, h, 0, 0, 0, 0, static_cast<std::uint64_t>(h >> 4U)};
      return n + 1;
    }
    if ((h & 0xC0U) == 0xC0U) {  // LTS1: 11TT0000
      begin_continuation(PacketKind::local_timestamp, lts_max_payload, static_cast<std::uint8_t>((h >> 4U) & 3U));
      return 0;
    }
  } else if (h == 0x94) {
    begin_continuation(PacketKind::global_timestamp1, gts1_max_payload, 0);
    return 0;
  } else if (h == 0xB4) {
    begin_continuation(PacketKind::global_timestamp2, gts2_max_payload, 0);
    return 0;
  } else if (is_extension(h)) {
    const auto sh = static_cast<std::uint8_t>((h >> 2U) & 1U);
    const auto ex = static_cast<std::uint64_t>((h >> 4U) & 7U);
    if ((h & 0x80U) == 0) {
      n = flush_garbage(0);
      if (sh == 0) {
        page_ = static_cast<std::uint8_t>(ex);
        out(n) = Packet{PacketKind::stimulus_page, h, 0, 0, 0, 0, ex};
      } else {
        out(n) = Packet{PacketKind::extension, h, 0, 0, 0, sh, ex};
      }
      return n + 1;
    }
    begin_continuation(PacketKind::extension, extension_max_payload, sh);
    current_.value = ex;
    return 0;
  }
  add_garbage(h, 1, MalformedReason::reserved_header);
  after_malformed();
  return 0;
}

int ItmDecoder::on_fixed_payload(std::uint8_t byte) {
  current_.value |= static_cast<std::uint64_t>(byte) << (8U * current_.length);
  ++current_.length;
  if (current_.length < expected_) return 0;
  return complete_source(flush_garbage(0));
}

int ItmDecoder::complete_source(int count) {
  Packet& p = current_;
  p.address = static_cast<std::uint8_t>(p.header >> 3U);
  state_ = State::header;
  if ((p.header & 4U) == 0) {
    p.kind = PacketKind::instrumentation;
    p.port = static_cast<std::uint16_t>(page_ * 32U + p.address);
  } else {
    classify_hardware(p);
  }
  out(count) = p;
  return count + 1;
}

int ItmDecoder::on_continuation(std::uint8_t byte) {
  Packet& p = current_;
  const unsigned shift = p.kind == PacketKind::extension ? 3U + 7U * p.length : 7U * p.length;
  p.value |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
  ++p.length;
  if ((byte & 0x80U) != 0) {
    if (p.length < expected_) return 0;
    // Too long (D4.2.4: at most 4 payload bytes for a local timestamp): the packet's own
    // bytes run on to one with bit 7 clear; they are skipped with it, one malformed report.
    add_garbage(p.header, 1U + p.length, MalformedReason::too_long);
    state_ = State::skip_continuation;
    return 0;
  }
  return complete_continuation(0);
}

int ItmDecoder::on_skipped_continuation(std::uint8_t byte) {
  add_garbage(byte, 1, MalformedReason::too_long);
  if ((byte & 0x80U) == 0) after_malformed();
  return 0;
}

int ItmDecoder::complete_continuation(int count) {
  Packet& p = current_;
  state_ = State::header;
  if (p.kind == PacketKind::global_timestamp1 && p.length == gts1_max_payload) {
    // Byte 4 of GTS1: bit 5 ClkCh, bit 6 Wrap, bits 4:0 = TS[25:21].
    p.info = static_cast<std::uint8_t>((p.value >> 26U) & 3U);
    p.value &= (1ULL << 26U) - 1U;
  } else if (p.kind == PacketKind::global_timestamp2 && p.length != 4 && p.length != 6) {
    return malformed_packet_in_progress(count, MalformedReason::bad_length);
  }
  count = flush_garbage(count);
  out(count) = p;
  return count + 1;
}

int ItmDecoder::finish_pending() {
  int n = 0;
  if (state_ == State::fixed_payload || state_ == State::continuation) {
    add_garbage(current_.header, 1U + current_.length, MalformedReason::truncated);
    state_ = State::header;
  } else if (state_ == State::skip_continuation) {
    state_ = State::header;  // its bytes are in the pending malformed report
  }
  if (header_zeros_ != 0) {
    add_garbage(0, header_zeros_, MalformedReason::stray_zeros);
    header_zeros_ = 0;
  }
  n = flush_garbage(n);
  zero_run_ = 0;
  return n;
}

}  // namespace tp::itm
