#include "rtt/memory_capture.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "core/clock.hpp"
#include "core/signals.hpp"
#include "rtt/capture_output.hpp"

namespace tp::rtt {
namespace {

constexpr unsigned max_full_warnings = 10;  // per channel; the rest are counted
// A GDB server reads only a halted target, at a few MB/s (QEMU: 16 MiB in 3.9 s): a poll reads
// at most this much in its halted window (shared by the channels), the rest in the next polls.
constexpr std::uint32_t halted_read_limit = std::uint32_t{64} * 1024;
constexpr std::uint32_t smallest_channel_share = 4096;

struct Counters {
  std::uint64_t polls = 0;
  std::uint64_t data_polls = 0;
  std::map<unsigned, std::uint64_t> bytes;
  std::uint64_t full_reads = 0;  // a ring that drops (NO_BLOCK_SKIP/TRIM) found full: writes may be lost
  std::uint64_t stalls = 0;      // a BLOCK_IF_FIFO_FULL ring found full: the target waited, nothing lost
  std::uint64_t reinits = 0;
  std::uint64_t down_bytes = 0;
  std::uint64_t stopped_us = 0;  // the target's time halted for us (GDB servers)
  std::uint64_t longest_stop_us = 0;
  std::uint64_t halted_since_us = 0;  // the halted window under way began then
  std::uint64_t round_trips = 0;
};

void end_halted_window(Counters& counters) {
  const std::uint64_t stopped = monotonic_us() - counters.halted_since_us;
  counters.stopped_us += stopped;
  counters.longest_stop_us = std::max(counters.longest_stop_us, stopped);
}

// Runs `access` on the target, halted around it when the link needs that; the time stopped
// is counted. The target runs again on every way out.
template <class Access>
void with_target(target::TargetMemory& memory, bool halts, Counters& counters, Access&& access) {
  if (!halts) {
    access();
    return;
  }
  counters.halted_since_us = monotonic_us();
  memory.halt();
  try {
    access();
  } catch (...) {
    memory.release();
    throw;
  }
  memory.resume();
  end_halted_window(counters);
}

// Sleeps until `until_us`, a stop request, or stdin data (read into `pending`).
void wait_for(std::uint64_t until_us, bool& read_stdin, std::vector<std::uint8_t>& pending) {
  while (stop_requested() == 0) {
    const std::uint64_t now = monotonic_us();
    if (now >= until_us) return;
    std::array<pollfd, 2> fds{{{stop_wake_fd(), POLLIN, 0}, {read_stdin ? STDIN_FILENO : -1, POLLIN, 0}}};
    const bool room = pending.size() < max_pending_down;
    if (!room) fds[1].fd = -1;
    const int ready =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::min<std::uint64_t>((until_us - now + 999) / 1000, 100)));
    if (ready > 0 && (fds[1].revents & (POLLIN | POLLHUP)) != 0) {
      std::array<std::uint8_t, 4096> buffer{};
      const ssize_t n = ::read(STDIN_FILENO, buffer.data(), std::min(buffer.size(), max_pending_down - pending.size()));
      if (n > 0) {
        pending.insert(pending.end(), buffer.begin(), buffer.begin() + n);
        return;  // to the target soon
      }
      if (n == 0 || errno != EINTR) read_stdin = false;  // end of stdin: the capture goes on
    }
  }
}

std::string list_channels(const ControlBlock& block) {
  std::string out = fmt::format("RTT control block at 0x{:08x}: {} up, {} down buffers\n", block.address,
                                block.up.size(), block.down.size());
  for (const auto* buffers : {&block.up, &block.down}) {
    for (const Buffer& b : *buffers) {
      const std::string_view direction = b.direction == Direction::up ? "up" : "down";
      if (!b.configured()) {
        out += fmt::format("{:<4} {:>2}  (not configured)\n", direction, b.index);
        continue;
      }
      out += fmt::format("{:<4} {:>2}  {:<16} {:>7} bytes  {:<18}  {:>7} waiting  buffer 0x{:08x}\n", direction,
                         b.index, fmt::format("\"{}\"", b.name), b.size, mode_name(b.mode()),
                         waiting_bytes(b.read, b.write, b.size).total(), b.buffer);
    }
  }
  return out;
}

class MemoryCapture {
 public:
  MemoryCapture(const CaptureOptions& o, LocateSettings where, target::TargetMemory& memory, BatchedWriter& writer,
                const Logger& log)
      : o_(o),
        memory_(memory),
        writer_(writer),
        log_(log),
        output_(writer, o.format == "ndjson", o.max_line),
        where_(std::move(where)),
        halts_(!memory.reads_while_running()),
        read_stdin_(o.forward_stdin) {
    pending_.assign(o.send.begin(), o.send.end());
    if (halts_) {
      // A scan of a large range (0:4G) is many reads: the target runs between its pieces.
      where_.between_reads = [this] {
        memory_.resume();
        end_halted_window(counters_);
        counters_.halted_since_us = monotonic_us();
        memory_.halt();
      };
    }
  }

  ExitCode run() {
    connect_block();
    if (o_.list) {
      writer_.write(list_channels(block_));
      writer_.flush();
      memory_.release();
      return ExitCode::ok;
    }
    try {
      loop();
    } catch (...) {
      memory_.release();  // first: writing the output may fail too (a reader gone)
      try {
        output_.finish();
      } catch (...) {  // the error that ended the loop is the one to report
      }
      report();
      throw;
    }
    stop_sysview();
    output_.finish();
    memory_.release();
    report();
    return ExitCode::ok;
  }

 private:
  // Finds the block, waiting for it to become valid (the target may still be starting).
  void connect_block() {
    const std::uint64_t deadline = monotonic_us() + us_of(o_.wait);
    std::string problem;
    std::string said;
    for (;;) {
      std::optional<ControlBlock> block;
      with_target(memory_, halts_, counters_, [&] {
        block = locate(memory_, where_, problem);
        if (block) read_names(memory_, *block);
      });
      if (block) {
        block_ = std::move(*block);
        break;
      }
      if (monotonic_us() >= deadline || stop_requested() != 0) {
        throw Error(ExitCode::not_found, fmt::format("no valid RTT control block: {}", problem));
      }
      if (problem != said) log_.info(fmt::format("waiting for the RTT control block: {}", problem));
      said = problem;
      bool no_stdin = false;
      wait_for(monotonic_us() + 100'000, no_stdin, pending_);
    }
    log_.verbose(fmt::format("RTT control block at 0x{:08x}, {} up and {} down buffers", block_.address,
                             block_.up.size(), block_.down.size()));
    if (o_.list) return;
    ups_.clear();
    for (const unsigned channel : o_.channels) {
      if (channel >= block_.up.size() || !block_.up[channel].configured()) {
        throw Error(ExitCode::usage,
                    fmt::format("no up channel {}; the target has:\n{}", channel, list_channels(block_)));
      }
      ups_.emplace_back(block_.up[channel]);
    }
    const unsigned down_index = o_.down_channel >= 0 ? static_cast<unsigned>(o_.down_channel) : o_.channels.front();
    down_.reset();
    if (down_index < block_.down.size() && block_.down[down_index].configured()) down_.emplace(block_.down[down_index]);
    const bool named_sysview = block_.up[o_.channels.front()].name == "SysView";
    sysview_ = o_.sysview == "on" || (o_.sysview == "auto" && named_sysview && o_.format == "raw");
    if (sysview_ && !down_) {
      throw Error(ExitCode::usage,
                  fmt::format("channel {} has no down buffer for SystemView's commands", o_.channels.front()));
    }
    if (sysview_) {
      pending_.insert(pending_.begin(), static_cast<std::uint8_t>(SystemViewCommand::start));
      log_.info(fmt::format("channel {} is SystemView's: sending the start command (the stop command at the end)",
                            o_.channels.front()));
    }
    if ((!pending_.empty() || o_.forward_stdin) && !down_) {
      throw Error(ExitCode::usage, fmt::format("no down channel {} to send to", down_index));
    }
  }

  // One poll: every up channel read, pending host data written. A block initialised again is
  // reported and found again (connect_block()) before it returns.
  void poll_once(std::uint64_t now) {
    bool reinitialised = false;
    std::string why;
    const std::uint32_t share =
        halts_ ? std::max(halted_read_limit / static_cast<std::uint32_t>(ups_.size()), smallest_channel_share)
               : std::numeric_limits<std::uint32_t>::max();
    with_target(memory_, halts_, counters_, [&] {
      for (UpChannel& up : ups_) {
        data_.clear();
        UpRead r;
        try {
          r = up.read(memory_, data_, share);
        } catch (...) {
          // Read but not given back (RdOff refused, E01): written all the same, then the error.
          output_.bytes(up.buffer().index, data_, now);
          counters_.bytes[up.buffer().index] += data_.size();
          throw;
        }
        if (r.reinitialised) {
          reinitialised = true;
          why = r.problem;
          break;
        }
        results_.emplace_back(up.buffer().index, r);
        output_.bytes(up.buffer().index, data_, now);
        counters_.bytes[up.buffer().index] += r.bytes;
      }
      if (!reinitialised && down_ && !pending_.empty()) {
        const std::size_t sent = down_->write(memory_, pending_);
        pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(sent));
        counters_.down_bytes += sent;
      }
    });
    ++counters_.polls;
    if (reinitialised) {
      ++counters_.reinits;
      log_.warn(
          fmt::format("at read {}: the control block was initialised again, or is being (a target reset?): {}; "
                      "what the target wrote before it and was not read is lost; finding the block again",
                      counters_.polls, why));
      connect_block();
    }
  }

  void loop() {
    const std::uint64_t started = monotonic_us();
    const std::uint64_t duration = us_of(o_.duration);
    const std::uint64_t idle_exit = us_of(o_.idle_exit);
    const std::uint64_t longest = us_of(o_.interval);
    const std::uint64_t shortest = std::min(us_of(o_.min_interval), longest);
    std::uint64_t interval = shortest;
    std::uint64_t last_data = 0;
    while (stop_requested() == 0) {
      const std::uint64_t now = monotonic_us();
      results_.clear();
      poll_once(now);
      bool any = false;
      bool half_full = false;
      for (const auto& [channel, r] : results_) {
        any = any || r.bytes != 0;
        const Buffer& b = block_.up[channel];
        half_full = half_full || r.fill * 2 >= b.size || r.left != 0;
        if (r.full) report_full(channel, r, now);
      }
      if (any) {
        ++counters_.data_polls;
        last_data = now;
      }
      output_.flush(now - std::uint64_t{o_.line_timeout_ms} * 1000U);
      // Faster while data flows (at once when a ring was half full), slower when it does not.
      interval = half_full ? shortest : any ? std::max(shortest, interval / 2) : std::min(longest, interval * 2);
      if (duration != 0 && now - started >= duration) break;
      if (idle_exit != 0 && last_data != 0 && now - last_data >= idle_exit) break;
      wait_for(now + interval, read_stdin_, pending_);
    }
  }

  // A ring found full: in a mode that drops (NO_BLOCK_SKIP/TRIM) writes may be lost, an Overflow
  // record; BLOCK_IF_FIFO_FULL made the target wait, nothing lost: a stall, only counted and said.
  void report_full(unsigned channel, const UpRead& r, std::uint64_t now) {
    const auto up =
        std::find_if(ups_.begin(), ups_.end(), [&](const UpChannel& c) { return c.buffer().index == channel; });
    const Buffer& b = up != ups_.end() ? up->buffer() : block_.up[channel];
    const bool stalled = b.mode() == Mode::block_if_fifo_full;
    ++(stalled ? counters_.stalls : counters_.full_reads);
    if (!stalled) output_.buffer_full(channel, now);
    if (++full_warnings_[channel] > max_full_warnings) {
      if (full_warnings_[channel] == max_full_warnings + 1) {
        log_.warn(fmt::format("channel {}: full again; further full reads are only counted (--stats)", channel));
      }
      return;
    }
    const std::string_view what = stalled
                                      ? "the target waited for room (BLOCK_IF_FIFO_FULL): nothing lost, but it stalled"
                                      : "the target may have dropped writes it could not fit";
    log_.warn(fmt::format("channel {}: buffer full at read {} ({} of {} bytes, {}): {}", channel, counters_.polls,
                          r.fill, b.size, mode_name(b.mode()), what));
  }

  void stop_sysview() {
    if (!sysview_ || !down_) return;
    try {
      const std::array<std::uint8_t, 1> stop{static_cast<std::uint8_t>(SystemViewCommand::stop)};
      with_target(memory_, halts_, counters_, [&] { down_->write(memory_, stop); });
    } catch (const std::exception& e) {
      log_.warn(fmt::format("could not send SystemView's stop command: {}", e.what()));
    }
  }

  void report() const {
    const auto line = [&](const std::string& text) { o_.stats ? log_.report(text) : log_.verbose(text); };
    if (const auto link = memory_.link_statistics(); !link.empty()) line(link);
    std::string per_channel;
    for (const auto& [channel, bytes] : counters_.bytes)
      per_channel += fmt::format(", channel {}: {} bytes", channel, bytes);
    const auto polls = std::max<std::uint64_t>(counters_.polls, 1);
    line(
        fmt::format("{} polls ({} with data){}; {} bytes sent down; {} reads found a ring full (writes may be lost); "
                    "{} stalls (a BLOCK_IF_FIFO_FULL ring full: the target waited, nothing lost); {} "
                    "re-initialisations; {} round trips ({:.1f} per poll)",
                    counters_.polls, counters_.data_polls, per_channel, counters_.down_bytes, counters_.full_reads,
                    counters_.stalls, counters_.reinits, memory_.round_trips(),
                    static_cast<double>(memory_.round_trips()) / static_cast<double>(polls)));
    if (halts_) {
      line(
          fmt::format("the target was halted {:.3f} ms per poll on average, {:.3f} ms at most (the GDB server reads "
                      "only a halted target)",
                      static_cast<double>(counters_.stopped_us) / 1000.0 / static_cast<double>(polls),
                      static_cast<double>(counters_.longest_stop_us) / 1000.0));
    }
  }

  const CaptureOptions& o_;
  target::TargetMemory& memory_;
  BatchedWriter& writer_;
  const Logger& log_;
  CaptureOutput output_;
  LocateSettings where_;
  bool halts_;
  bool read_stdin_;
  bool sysview_ = false;
  ControlBlock block_;
  std::vector<UpChannel> ups_;
  std::optional<DownChannel> down_;
  std::vector<std::uint8_t> pending_;
  std::vector<std::uint8_t> data_;
  std::vector<std::pair<unsigned, UpRead>> results_;
  std::map<unsigned, unsigned> full_warnings_;
  Counters counters_;
};

}  // namespace

ExitCode capture_memory(const CaptureOptions& o, LocateSettings where, target::TargetMemory& memory,
                        BatchedWriter& writer, const Logger& log) {
  MemoryCapture session(o, std::move(where), memory, writer, log);
  return session.run();
}

}  // namespace tp::rtt
