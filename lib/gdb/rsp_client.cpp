#include "gdb/rsp_client.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "core/clock.hpp"
#include "core/signals.hpp"

namespace tp::gdb {
namespace {

constexpr int max_sends = 3;                        // a packet is sent again at most twice after a `-`
constexpr std::size_t default_packet_size = 0x400;  // when the stub does not say
constexpr std::size_t largest_read = 0x4000;
constexpr std::size_t smallest_packet = 64;
// While we wait for an ack, a real server sends at most its stop reply (QEMU on connect);
// more than this is a server that floods without acknowledging, not one to keep buffering.
constexpr std::size_t max_queued_packets = 64;
constexpr std::size_t max_queued_bytes = std::size_t{4} << 20U;
// After SIGINT/SIGTERM the exchange under way may finish within a grace period, then the
// target is resumed within a budget of its own: the tool ends within a second of the signal.
constexpr std::uint64_t grace_after_stop_ms = 250;
constexpr std::uint64_t release_budget_after_stop_ms = 500;
constexpr int poll_slice_ms = 50;
// Leaving after an exchange cut short: how long the reply still owed, or a running target's
// answer to 0x03, may take (QEMU answers within a millisecond), out of the release budget.
constexpr std::uint64_t settle_wait_ms = 150;  // a stop signal between the check and poll() waits this long at most

}  // namespace

RspClient::RspClient(FileDescriptor socket, std::string name, int timeout_ms)
    : socket_(std::move(socket)), name_(std::move(name)), timeout_ms_(timeout_ms) {}

std::unique_ptr<RspClient> RspClient::connect(const net::TcpEndpoint& endpoint, int timeout_ms) {
  auto socket = net::connect_tcp(endpoint, timeout_ms,
                                 " (is the GDB server running? e.g. `openocd -f ...` listens on :3333, "
                                 "`qemu-system-arm ... -gdb tcp::3333`)");
  auto client = std::make_unique<RspClient>(std::move(socket),
                                            fmt::format("GDB server {}:{}", endpoint.host, endpoint.port), timeout_ms);
  client->start();
  return client;
}

void RspClient::lost(std::string_view why) {
  connected_ = false;
  halted_ = false;
  throw Error(ExitCode::io_error, fmt::format("{}: {}", name_, why), ErrorCode::target_disconnected);
}

void RspClient::send_raw(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(socket_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      wait_for(POLLOUT, "did not take our packet");  // a server that never reads fills the socket
      continue;
    }
    lost(fmt::format("connection lost while sending ({})", std::strerror(errno)));
  }
}

void RspClient::wait_for(short events, std::string_view what) {
  const std::uint64_t now = monotonic_ms();
  if (stop_requested() != 0 && !releasing_) {
    // A healthy poll takes milliseconds: let it finish (nothing half-read), but no longer than this.
    if (stop_deadline_ms_ == 0) stop_deadline_ms_ = now + grace_after_stop_ms;
    if (now >= stop_deadline_ms_) {
      throw Error(ExitCode::failure, fmt::format("{}: stopped while waiting for the server", name_));
    }
  }
  if (now >= exchange_deadline_ms_) {
    throw Error(ExitCode::timeout, fmt::format("{}: {} within {} ms", name_, what, timeout_ms_),
                ErrorCode::target_not_responding);
  }
  pollfd p{socket_.get(), events, 0};
  ::poll(&p, 1, static_cast<int>(std::min<std::uint64_t>(exchange_deadline_ms_ - now, poll_slice_ms)));
}

void RspClient::begin_exchange() {
  exchange_deadline_ms_ = monotonic_ms() + static_cast<std::uint64_t>(timeout_ms_);
  if (releasing_) exchange_deadline_ms_ = std::min(exchange_deadline_ms_, release_deadline_ms_);
}

void RspClient::read_more() {
  const std::size_t before = events_.size();
  std::array<std::uint8_t, 16384> buffer{};
  while (events_.size() == before) {
    wait_for(POLLIN, "sent no complete reply");
    const ssize_t n = ::read(socket_.get(), buffer.data(), buffer.size());
    if (n == 0) lost("the server closed the connection");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;  // the deadline and stop requests: wait_for()
      lost(fmt::format("connection lost ({})", std::strerror(errno)));
    }
    parser_.feed(std::span(buffer.data(), static_cast<std::size_t>(n)), events_);
  }
}

void RspClient::check_queue() const {
  std::size_t packets = 0;
  std::size_t bytes = 0;
  for (auto e = events_.begin() + static_cast<std::ptrdiff_t>(next_event_); e != events_.end(); ++e) {
    if (e->kind == RspEvent::Kind::ack || e->kind == RspEvent::Kind::nak) continue;
    ++packets;
    bytes += e->payload.size();
  }
  if (packets > max_queued_packets || bytes > max_queued_bytes) {
    throw Error(ExitCode::io_error,
                fmt::format("{}: {} packets ({} bytes) sent without acknowledging ours: not a GDB server "
                            "in acknowledged mode",
                            name_, packets, bytes));
  }
}

RspEvent RspClient::next_event() {
  if (next_event_ >= events_.size()) {
    events_.clear();
    next_event_ = 0;
    read_more();
  }
  return std::move(events_[next_event_++]);
}

void RspClient::send_packet(std::string_view payload) {
  const std::string framed = frame_packet(payload);
  for (int attempt = 0; attempt < max_sends; ++attempt) {
    if (attempt > 0) ++stats_.retransmissions;
    send_raw(framed);
    if (no_ack_) return;
    // Packets may come before our ack (QEMU's stop reply on connect): they stay queued
    // for receive_packet(); only the ack or nak is taken out.
    for (;;) {
      const auto answer = std::find_if(
          events_.begin() + static_cast<std::ptrdiff_t>(next_event_), events_.end(),
          [](const RspEvent& e) { return e.kind == RspEvent::Kind::ack || e.kind == RspEvent::Kind::nak; });
      if (answer == events_.end()) {
        check_queue();
        read_more();
        continue;
      }
      const bool acked = answer->kind == RspEvent::Kind::ack;
      events_.erase(answer);
      if (acked) return;
      break;
    }
  }
  throw Error(ExitCode::io_error, fmt::format("{}: the server refused a packet {} times", name_, max_sends));
}

std::string RspClient::receive_packet() {
  for (;;) {
    RspEvent event = next_event();
    if (event.kind != RspEvent::Kind::packet) continue;  // stray acks; notifications are for non-stop mode
    if (!event.checksum_ok) {
      ++stats_.bad_checksums;
      if (no_ack_) throw Error(ExitCode::io_error, fmt::format("{}: reply with a bad checksum", name_));
      send_raw("-");
      continue;
    }
    if (!no_ack_) send_raw("+");
    return std::move(event.payload);
  }
}

std::string RspClient::request(std::string_view payload) {
  ++stats_.round_trips;
  begin_exchange();
  reply_owed_ = true;  // until it comes: a request cut short leaves its reply on the way
  send_packet(payload);
  std::string reply = next_reply();
  reply_owed_ = false;
  return reply;
}

std::string RspClient::next_reply() {
  for (;;) {
    std::string reply = receive_packet();
    if (is_stop_reply(reply)) {  // answers nothing we asked: QEMU's stop reply on connect
      ++stats_.unsolicited_stops;
      continue;
    }
    if (!reply.empty() && reply[0] == 'O' && reply != "OK") continue;  // console output of a stub
    return reply;
  }
}

void RspClient::start() {
  // All-stop mode: a client that connects finds the target stopped (QEMU halts a running VM,
  // OpenOCD halts on attach), so a failure from here on still resumes it on release().
  halted_ = true;
  features_ = parse_supported(request("qSupported:swbreak+;hwbreak+"));
  if (features_.no_ack_mode && request("QStartNoAckMode") == "OK") no_ack_ = true;
  ++stats_.round_trips;
  begin_exchange();
  send_packet("?");
  const std::string stop = receive_packet();
  if (is_exit_reply(stop)) {
    throw Error(ExitCode::not_found, fmt::format("{}: no program is running (`?` -> {})", name_, stop),
                ErrorCode::target_not_found);
  }
  if (auto pid = stop_reply_pid(stop)) pid_ = *pid;
}

void RspClient::halt() {
  if (halted_) return;
  ++stats_.round_trips;
  begin_exchange();
  run_state_unknown_ = true;  // until the stop reply: QEMU ignores 0x03 while its target is not running yet
  send_raw("\x03");
  halted_ = true;  // from here the target may be stopped: a failure below still resumes it on release()
  for (;;) {
    std::string reply = receive_packet();
    if (is_stop_reply(reply)) {
      if (auto pid = stop_reply_pid(reply)) pid_ = *pid;
      run_state_unknown_ = false;
      return;
    }
    if (is_exit_reply(reply)) lost(fmt::format("the program ended ({})", reply));
  }
}

void RspClient::resume() {
  if (!halted_) return;
  begin_exchange();
  // From the first byte of `c` the server may run the target, even if its ack never reaches us
  // (a stop request cuts the wait short): release() then interrupts first, for a packet sent
  // to a running QEMU halts it and is dropped (a `D` then would leave it halted for good).
  run_state_unknown_ = true;
  send_packet("c");
  halted_ = false;
  run_state_unknown_ = false;
}

std::size_t RspClient::packet_size() const noexcept {
  // A stub that does not say, or names something too small to carry a request, gets the default.
  return features_.packet_size >= smallest_packet ? features_.packet_size : default_packet_size;
}

std::size_t RspClient::max_read() const noexcept {
  return std::min<std::size_t>((packet_size() - 4) / 2, largest_read);
}

std::vector<std::uint8_t> RspClient::read(std::uint64_t address, std::size_t length) {
  halt();
  std::vector<std::uint8_t> bytes;
  bytes.reserve(length);
  while (bytes.size() < length) {
    const std::size_t chunk = std::min(max_read(), length - bytes.size());
    const std::uint64_t at = address + bytes.size();
    const std::string reply = request(fmt::format("m{:x},{:x}", at, chunk));
    if (const auto error = error_number(reply)) {
      throw target::MemoryError(at, chunk,
                                fmt::format("{}: cannot read {} bytes at 0x{:x} (E{:02X}{})", name_, chunk, at, *error,
                                            *error == 14 ? ": unmapped" : ""));
    }
    const auto data = decode_hex(reply);
    if (!data || data->empty() || data->size() > chunk) {
      throw Error(ExitCode::io_error,
                  fmt::format("{}: malformed reply to a read at 0x{:x}: '{}'", name_, at, reply.substr(0, 40)));
    }
    bytes.insert(bytes.end(), data->begin(), data->end());  // a short reply: ask again for the rest
  }
  return bytes;
}

void RspClient::write(std::uint64_t address, std::span<const std::uint8_t> bytes) {
  halt();
  const std::size_t per_packet = (packet_size() - 40) / 2;  // "M<addr>,<len>:" takes up to 40
  for (std::size_t done = 0; done < bytes.size();) {
    const std::size_t chunk = std::min(per_packet, bytes.size() - done);
    const std::uint64_t at = address + done;
    std::string payload = fmt::format("M{:x},{:x}:", at, chunk);
    append_hex(payload, bytes.subspan(done, chunk));
    const std::string reply = request(payload);
    if (reply != "OK") {
      throw target::MemoryError(at, chunk,
                                fmt::format("{}: cannot write {} bytes at 0x{:x} ({})", name_, chunk, at,
                                            reply.empty() ? "not supported" : reply));
    }
    done += chunk;
  }
}

bool RspClient::detach() {
  std::string reply = request("D");
  if (reply != "OK") reply = request(fmt::format("D;{:x}", pid_));
  if (reply == "OK") halted_ = false;
  return reply == "OK";
}

void RspClient::release() noexcept {
  if (!connected_ || !socket_.valid()) return;
  releasing_ = true;
  const auto budget = static_cast<std::uint64_t>(timeout_ms_);
  release_deadline_ms_ =
      monotonic_ms() + (stop_requested() != 0 ? std::min(budget, release_budget_after_stop_ms) : budget);
  try {
    if (reply_owed_) {  // the reply to a request cut short first, or it would answer our `D`
      reply_owed_ = false;
      exchange_deadline_ms_ = std::min(monotonic_ms() + settle_wait_ms, release_deadline_ms_);
      (void)next_reply();
    }
  } catch (const std::exception&) {  // none soon (a server flooding, or gone): go on
  }
  settle_run_state();
  try {
    // Probe servers keep the target halted on `D`: they get `c`, then the connection closes.
    if (halted_ && (features_.memory_map || !detach())) resume();
  } catch (const std::exception&) {  // the link is gone: nothing more can be done from here
  }
  close_gracefully();
  connected_ = false;
  socket_.reset();
}

// After a `c` without its ack, or a 0x03 without its stop reply, the target may run or not, and
// a packet that reaches a running QEMU halts it and is dropped: a `D` then would leave it
// halted for good. 0x03 again: a running target stops and says so at once; one that is halted
// ignores it (no reply within the wait): halted either way, then `D` or `c` lets it run.
void RspClient::settle_run_state() noexcept {
  if (!run_state_unknown_) return;
  run_state_unknown_ = false;
  try {
    send_raw("\x03");
    exchange_deadline_ms_ = std::min(monotonic_ms() + settle_wait_ms, release_deadline_ms_);
    while (!is_stop_reply(receive_packet())) {
    }
  } catch (const std::exception&) {  // no stop reply: it was halted already
  }
  halted_ = true;
}

// Closing a TCP socket with unread bytes in it sends RST, and a peer that gets RST may drop
// what it had not read yet: our `D` or `c` behind a flood it sent us. So: FIN after the last
// packet, then read and discard until the server closes (or the release budget ends).
void RspClient::close_gracefully() noexcept {
  ::shutdown(socket_.get(), SHUT_WR);
  std::array<std::uint8_t, 16384> discard{};
  for (;;) {
    const std::uint64_t now = monotonic_ms();
    if (now >= release_deadline_ms_) return;
    pollfd p{socket_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<std::uint64_t>(release_deadline_ms_ - now, poll_slice_ms))) <= 0) {
      continue;
    }
    const ssize_t n = ::read(socket_.get(), discard.data(), discard.size());
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return;
  }
}

std::string RspClient::description() const {
  return fmt::format("{} (packet size {}, {})", name_, features_.packet_size,
                     no_ack_ ? "no-ack mode" : "acknowledged mode");
}

}  // namespace tp::gdb

namespace tp::gdb {

std::string RspClient::link_statistics() const {
  return fmt::format(
      "{}: {}, {} run-length-encoded replies, {} unsolicited stop replies, {} retransmissions, {} bad "
      "checksums, {} stray bytes",
      name_, no_ack_ ? "no-ack mode" : "acknowledged mode", parser_.run_length_packets(), stats_.unsolicited_stops,
      stats_.retransmissions, stats_.bad_checksums, parser_.stray_bytes());
}

}  // namespace tp::gdb
