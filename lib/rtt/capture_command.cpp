#include "rtt/capture_command.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "core/batched_writer.hpp"
#include "core/clock.hpp"
#include "core/signals.hpp"
#include "elf/elf_file.hpp"
#include "net/tcp_connect.hpp"
#include "rtt/capture_output.hpp"
#include "rtt/memory_capture.hpp"
#include "rtt/target_rtt.hpp"

namespace tp::rtt {
namespace {

LocateSettings locate_settings(const CaptureOptions& o) {
  LocateSettings where;
  if (!o.ram.empty()) where.ram = parse_memory_range(o.ram, "--ram");
  if (!o.address.empty()) {
    where.address = parse_address(o.address, "--address");
  } else if (!o.elf.empty()) {
    const elf::ElfFile elf = elf::ElfFile::load(o.elf);
    const auto symbol = elf.find("_SEGGER_RTT");
    if (!symbol) {
      throw Error(ExitCode::not_found, fmt::format("{} has no _SEGGER_RTT symbol (is SEGGER_RTT.c linked in?): give "
                                                   "--address or --scan",
                                                   o.elf));
    }
    where.address = static_cast<std::uint32_t>(symbol->value);
  } else {
    where.scan = parse_memory_range(o.scan, "--scan");
  }
  return where;
}

// An RTT TCP server (OpenOCD's `rtt server start PORT CHANNEL`, J-Link's 19021, probe-rs):
// a plain byte stream both ways.
ExitCode capture_tcp(const CaptureOptions& o, BatchedWriter& writer, const Logger& log) {
  FileDescriptor socket = connect_tcp(net::parse_tcp_endpoint(o.tcp, "--tcp"), 5000,
                                      " (start the probe's RTT server first, e.g. OpenOCD's `rtt server start`)");
  CaptureOutput output(writer, o.format == "ndjson", o.max_line);
  std::vector<std::uint8_t> pending(o.send.begin(), o.send.end());
  const bool sysview = o.sysview == "on";
  if (sysview) pending.insert(pending.begin(), static_cast<std::uint8_t>(SystemViewCommand::start));
  bool read_stdin = o.forward_stdin;
  const unsigned channel = o.channels.front();
  const std::uint64_t started = monotonic_us();
  const std::uint64_t duration = us_of(o.duration);
  const std::uint64_t idle_exit = us_of(o.idle_exit);
  std::uint64_t last_data = 0;
  std::uint64_t received = 0;
  std::array<std::uint8_t, 65536> buffer{};
  bool closed = false;
  while (stop_requested() == 0 && !closed) {
    const std::uint64_t now = monotonic_us();
    if (!pending.empty()) {
      const ssize_t n = ::send(socket.get(), pending.data(), pending.size(), MSG_NOSIGNAL);
      if (n > 0) pending.erase(pending.begin(), pending.begin() + n);
    }
    std::array<pollfd, 3> fds{{{socket.get(), POLLIN, 0},
                               {stop_wake_fd(), POLLIN, 0},
                               {read_stdin && pending.size() < max_pending_down ? STDIN_FILENO : -1, POLLIN, 0}}};
    if (!pending.empty()) fds[0].events |= POLLOUT;
    ::poll(fds.data(), fds.size(), 50);
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = ::recv(socket.get(), buffer.data(), buffer.size(), 0);
      if (n > 0) {
        output.bytes(channel, std::span(buffer.data(), static_cast<std::size_t>(n)), now);
        received += static_cast<std::uint64_t>(n);
        last_data = now;
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        closed = true;
      }
    }
    if ((fds[2].revents & (POLLIN | POLLHUP)) != 0) {
      const ssize_t n = ::read(STDIN_FILENO, buffer.data(), std::min(buffer.size(), max_pending_down - pending.size()));
      if (n > 0) pending.insert(pending.end(), buffer.begin(), buffer.begin() + n);
      if (n == 0) read_stdin = false;
    }
    output.flush(now - std::uint64_t{o.line_timeout_ms} * 1000U);
    if (duration != 0 && now - started >= duration) break;
    if (idle_exit != 0 && last_data != 0 && now - last_data >= idle_exit) break;
  }
  if (sysview && !closed) {
    const auto stop = static_cast<std::uint8_t>(SystemViewCommand::stop);
    (void)::send(socket.get(), &stop, 1, MSG_NOSIGNAL);
  }
  output.finish();
  const std::string summary = fmt::format("{} bytes from {}", received, o.tcp);
  o.stats ? log.report(summary) : log.verbose(summary);
  if (closed) throw Error(ExitCode::io_error, fmt::format("the RTT server {} closed the connection", o.tcp));
  return ExitCode::ok;
}

}  // namespace

ExitCode capture(const CaptureOptions& o, const TargetOpener& open_target, const std::string& output, bool append,
                 const Logger& log) {
  if (o.channels.empty()) throw Error(ExitCode::usage, "--channel: at least one up channel");
  if (o.format == "raw" && o.channels.size() > 1) {
    throw Error(ExitCode::usage, "raw output carries one channel: give one --channel, or --format ndjson");
  }
  if (!o.tcp.empty() && o.list) throw Error(ExitCode::usage, "--list needs the target's memory, not --tcp");
  if (!o.tcp.empty() && o.channels.size() > 1) {
    throw Error(ExitCode::usage, "an RTT TCP server serves one channel: give one --channel (its port number)");
  }
  stop_on_hangup_and_quit();  // the target is released on those too, not left halted
  BatchedWriter writer = BatchedWriter::open(output, append, {o.elf});
  if (!o.tcp.empty()) return capture_tcp(o, writer, log);
  LocateSettings where = locate_settings(o);  // a bad option or ELF before the target is touched
  const std::unique_ptr<target::TargetMemory> memory = open_target();
  log.verbose(memory->description());
  return capture_memory(o, std::move(where), *memory, writer, log);
}

}  // namespace tp::rtt
