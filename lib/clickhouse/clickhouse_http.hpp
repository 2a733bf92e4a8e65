// ClickHouse's HTTP interface (port 8123), over Boost.Beast: one keep-alive connection,
// requests with a bounded wait, the body of a reply read whole or streamed in pieces.
// Every wait is bounded by timeout_ms: the connect, each piece of a request sent, and the
// silence before each piece of a reply, headers or body (a large SELECT may take long in all;
// a server that says nothing for timeout_ms is given up: Error(timeout)). A SIGINT/SIGTERM
// ends a wait too, unless the settings say to finish it (an insert whose rows are fetched).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tp {

struct ClickHouseSettings {
  std::string url = "http://127.0.0.1:8123";
  std::string database = "default";
  std::string creds;  // a file whose first line is user:password (never on the command line)
  int timeout_ms = 30'000;
  bool stop_ends_wait = true;  // a SIGINT/SIGTERM ends a wait (Error(io_error)); false: it runs its course
};

struct HttpReply {
  unsigned status = 0;
  std::string body;  // for a status other than 200, its first error_body_max bytes only
};

// What is kept of a reply's body that is not a result (a 100 MB error text is not read whole).
inline constexpr std::size_t error_body_max = std::size_t{64} * 1024;

class ClickHouseHttp {
 public:
  explicit ClickHouseHttp(const ClickHouseSettings& settings);
  ~ClickHouseHttp();
  ClickHouseHttp(const ClickHouseHttp&) = delete;
  ClickHouseHttp& operator=(const ClickHouseHttp&) = delete;
  ClickHouseHttp(ClickHouseHttp&&) = delete;
  ClickHouseHttp& operator=(ClickHouseHttp&&) = delete;

  // POST /?query=<query> with `body`, for a statement whose answer is short (an INSERT, a
  // CREATE): at most error_body_max bytes of the reply are read. Throws Error(not_found) when
  // nothing listens, Error(timeout) when no reply comes in time, Error(io_error) when the
  // connection breaks.
  HttpReply post(std::string_view query, std::string_view body);
  // A query whose reply body is handed over piece by piece (a large SELECT); the status
  // (and, when it is not 200, the body's first error_body_max bytes) is returned.
  HttpReply stream(std::string_view query, const std::function<void(std::string_view piece)>& on_piece);
  // Runs a statement and throws Error(failure) with ClickHouse's message when it fails.
  void execute(std::string_view statement);
  [[nodiscard]] const std::string& endpoint() const noexcept;
  // From now on no wait goes past `deadline` (a whole request's bound, besides timeout_ms's
  // silence bound): past it, Error(timeout); nullopt: none.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline);
  // Whether the deadline set has passed (what a timeout met means).
  [[nodiscard]] bool past_deadline() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The first line of ClickHouse's error text (it answers with the exception's whole trace),
// at most a few KB.
[[nodiscard]] std::string clickhouse_error_line(std::string_view body);
// The code of ClickHouse's error text ("Code: 27, e.displayText() = ..."), 0 when none.
[[nodiscard]] int clickhouse_error_code(std::string_view body);
// Whether a refused INSERT was refused for its data (a value it cannot parse or hold), so
// the rows refused are to be found and skipped, not the insert retried: ClickHouse 18.16
// answers HTTP 500 for these too, so its error code tells.
[[nodiscard]] bool refused_for_data(const HttpReply& reply);

}  // namespace tp
