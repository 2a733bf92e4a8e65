// ClickHouse's HTTP interface (port 8123), over Boost.Beast: one keep-alive connection,
// requests with a bounded wait, the body of a reply read whole or streamed in pieces.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tp {

struct ClickHouseSettings {
  std::string url = "http://127.0.0.1:8123";
  std::string database = "default";
  std::string creds;  // a file whose first line is user:password (never on the command line)
  int timeout_ms = 30'000;
};

struct HttpReply {
  unsigned status = 0;
  std::string body;
};

class ClickHouseHttp {
 public:
  explicit ClickHouseHttp(const ClickHouseSettings& settings);
  ~ClickHouseHttp();
  ClickHouseHttp(const ClickHouseHttp&) = delete;
  ClickHouseHttp& operator=(const ClickHouseHttp&) = delete;
  ClickHouseHttp(ClickHouseHttp&&) = delete;
  ClickHouseHttp& operator=(ClickHouseHttp&&) = delete;

  // POST /?query=<query> with `body`. Throws Error(not_found) when nothing listens,
  // Error(timeout) when no reply comes in time, Error(io_error) when the connection breaks.
  HttpReply post(std::string_view query, std::string_view body);
  // A query whose reply body is handed over piece by piece (a large SELECT); the status
  // (and, when it is not 200, the whole body) is returned.
  HttpReply stream(std::string_view query, const std::function<void(std::string_view piece)>& on_piece);
  // Runs a statement and throws Error(failure) with ClickHouse's message when it fails.
  void execute(std::string_view statement);
  [[nodiscard]] const std::string& endpoint() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The first line of ClickHouse's error text (it answers with the exception's whole trace).
[[nodiscard]] std::string clickhouse_error_line(std::string_view body);

}  // namespace tp
