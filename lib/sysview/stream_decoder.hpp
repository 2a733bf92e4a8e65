// Push-style framing of a SystemView stream: feed it any split of the bytes, it hands the
// sink each whole packet (packet.hpp) and reports what it could not decode. Until the first
// sync (10 zero bytes) and after a malformed packet, bytes are skipped up to the next sync
// and reported with their count: SEGGER_SYSVIEW.c sends a sync on every start, so a capture
// attached to a running recording begins at the next one. Memory: one packet's carry.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sysview/packet.hpp"

namespace tp::sysview {

struct StreamCounters {
  std::uint64_t packets = 0;
  std::uint64_t malformed = 0;      // packets that could not be decoded (each began a resync)
  std::uint64_t skipped_bytes = 0;  // before the first sync and while resynchronising
  std::uint64_t syncs = 0;
};

// What the sink gets: packet(const Packet&) for each packet (its strings valid during the
// call), skipped(reason, bytes) once a sync ends a stretch of undecodable bytes (or the
// input ends in one).
class StreamDecoder {
 public:
  explicit StreamDecoder(bool wait_for_sync = true) : synced_(!wait_for_sync) {
    if (wait_for_sync) reason_ = "before the first sync";
  }

  template <class Sink>
  void feed(std::span<const std::uint8_t> bytes, Sink&& sink) {
    while (!bytes.empty()) {
      if (!synced_) {
        bytes = bytes.subspan(scan_for_sync(bytes, sink));
      } else if (!carry_.empty()) {
        bytes = bytes.subspan(continue_carry(bytes, sink));
      } else {
        const ParseResult r = parse_packet(bytes, packet_);
        if (r.status == ParseStatus::complete) {
          deliver(sink);
          bytes = bytes.subspan(r.consumed);
        } else if (r.status == ParseStatus::need_more) {
          carry_.assign(bytes.begin(), bytes.end());
          return;
        } else {
          lose_sync(r.reason);
          bytes = bytes.subspan(1);  // the bad packet's first byte; the rest is scanned
        }
      }
    }
  }

  // End of input: a packet cut short or bytes still waiting for a sync are reported.
  template <class Sink>
  void finish(Sink&& sink) {
    if (!carry_.empty()) {
      skipped_ += carry_.size();
      carry_.clear();
      if (reason_.empty()) reason_ = "a packet cut short by the end of the input";
    }
    if (skipped_ > 0) {
      counters_.skipped_bytes += skipped_;
      sink.skipped(reason_, skipped_);
      skipped_ = 0;
    }
  }

  [[nodiscard]] const StreamCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] bool synced() const noexcept { return synced_; }

 private:
  template <class Sink>
  void deliver(Sink& sink) {
    ++counters_.packets;
    sink.packet(static_cast<const Packet&>(packet_));
  }

  void lose_sync(std::string_view reason) {
    ++counters_.malformed;
    synced_ = false;
    zero_run_ = 0;
    reason_ = reason;
    skipped_ = 1;
  }

  // Consumes bytes up to and including a sync (or all of them); returns how many.
  template <class Sink>
  std::size_t scan_for_sync(std::span<const std::uint8_t> bytes, Sink& sink) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] != 0) {
        skipped_ += zero_run_ + 1;
        zero_run_ = 0;
        continue;
      }
      if (++zero_run_ < sync_length) continue;
      synced_ = true;
      zero_run_ = 0;
      ++counters_.syncs;
      if (skipped_ > 0) {
        counters_.skipped_bytes += skipped_;
        sink.skipped(reason_, skipped_);
      }
      skipped_ = 0;
      reason_ = {};
      return i + 1;
    }
    return bytes.size();
  }

  // A packet split across feeds: its start is in carry_; takes input bytes a few at a time
  // (doubling) until it is whole. Returns how many input bytes were used.
  template <class Sink>
  std::size_t continue_carry(std::span<const std::uint8_t> bytes, Sink& sink) {
    const std::size_t before = carry_.size();
    const std::size_t take = std::min(bytes.size(), std::max<std::size_t>(16, before));
    carry_.insert(carry_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
    const ParseResult r = parse_packet(carry_, packet_);
    if (r.status == ParseStatus::complete) {
      deliver(sink);
      carry_.clear();
      return r.consumed - before;
    }
    if (r.status == ParseStatus::need_more) return take;
    // Malformed: rescan what was carried, after its first byte, for the next sync.
    lose_sync(r.reason);
    std::vector<std::uint8_t> rest(carry_.begin() + 1, carry_.end());
    carry_.clear();
    const std::size_t used = scan_for_sync(rest, sink);
    if (used < rest.size()) {  // a sync inside what was carried: decode the rest again
      feed(std::span(rest).subspan(used), sink);
    }
    return take;
  }

  Packet packet_;
  std::vector<std::uint8_t> carry_;
  StreamCounters counters_;
  std::string_view reason_;
  std::uint64_t skipped_ = 0;
  std::size_t zero_run_ = 0;
  bool synced_;
};

}  // namespace tp::sysview
