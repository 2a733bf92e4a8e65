// The Palm Reporter side of the protocol: a TCP server (Boost.Asio, one thread) that
// accepts any number of senders, parses each stream, and writes records. A message whose
// content breaks a rule is skipped and reported, and the sender's next messages are read as
// usual; only input that cannot be framed closes that one connection (everything decoded
// before is kept).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/batched_writer.hpp"
#include "core/log.hpp"
#include "palm/parser.hpp"
#include "palm/records.hpp"

namespace tp::palm {

// The original Reporter's port is not documented anywhere we found; tracepipe listens on
// 9230 (next to trace-serve's 9229) unless told otherwise.
inline constexpr std::uint16_t default_port = 9230;

struct ServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = default_port;  // 0: any free port (the log says which)
  std::size_t max_message_size = default_max_message_size;
  std::vector<std::uint16_t> modules;  // empty: all
  Format format = Format::ndjson;
  bool once = false;  // stop when the first sender disconnects
  // Senders at once; past it a new connection is closed at once (counted, logged).
  std::size_t max_connections = 128;
  // A message that has begun must be complete within this (a stalled sender is cut off);
  // between messages a sender may stay idle as long as it likes.
  std::chrono::milliseconds message_timeout{10000};
};

struct ServerStats {
  std::uint64_t connections = 0;
  std::uint64_t messages = 0;
  std::uint64_t filtered = 0;             // messages of modules not asked for
  std::uint64_t rejected_streams = 0;     // connections closed for bad input
  std::uint64_t refused_connections = 0;  // past --max-connections
  std::uint64_t stalled_messages = 0;     // connections cut off mid-message after --message-timeout
  std::uint64_t skipped_parameters = 0;
  std::uint64_t skipped_messages = 0;     // framed, but breaking a rule (reported, the stream goes on)
  std::uint64_t line_break_readings = 0;  // ambiguous line breaks read (Message::line_break_readings)
  std::uint64_t repeated_parameters = 0;
};

class Server {
 public:
  // Binds and listens now; throws tp::Error (busy, permission_denied, usage) if it cannot.
  Server(ServerOptions options, BatchedWriter& writer, const Logger& logger);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  Server(Server&&) = delete;
  Server& operator=(Server&&) = delete;
  ~Server();

  [[nodiscard]] std::uint16_t port() const;
  // Serves until SIGINT/SIGTERM, or with `once` until the first sender has gone.
  void run();
  [[nodiscard]] const ServerStats& stats() const;

  class Impl;  // opaque: keeps Boost.Asio out of this header

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tp::palm
