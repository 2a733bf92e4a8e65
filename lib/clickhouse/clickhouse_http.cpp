#include "clickhouse/clickhouse_http.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <fstream>
#include <limits>
#include <optional>

// clang-format off
#include "net/asio.hpp"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/core/detail/base64.hpp>
// clang-format on

#include "core/error.hpp"
#include "core/signals.hpp"

namespace tp {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

struct Url {
  std::string host;
  std::string port;
};

Url parse_url(const std::string& url) {
  std::string_view rest = url;
  if (rest.substr(0, 7) != "http://") {
    throw Error(ExitCode::usage,
                fmt::format("--clickhouse \"{}\": an http://HOST:PORT URL (ClickHouse's HTTP port)", url));
  }
  rest.remove_prefix(7);
  if (const std::size_t slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos) return Url{std::string(rest), "8123"};
  return Url{std::string(rest.substr(0, colon)), std::string(rest.substr(colon + 1))};
}

std::string url_encode(std::string_view text) {
  std::string encoded;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      encoded += c;
    } else {
      encoded += fmt::format("%{:02X}", byte);
    }
  }
  return encoded;
}

std::string basic_auth(const std::string& creds_path) {
  if (creds_path.empty()) return {};
  std::ifstream in(creds_path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    throw Error(ExitCode::not_found, fmt::format("cannot read the ClickHouse credentials file {}", creds_path));
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  std::string encoded(beast::detail::base64::encoded_size(line.size()), '\0');
  encoded.resize(beast::detail::base64::encode(encoded.data(), line.data(), line.size()));
  return "Basic " + encoded;
}

}  // namespace

struct ClickHouseHttp::Impl {
  ClickHouseSettings settings;
  Url url;
  std::string authorization;
  std::string endpoint;
  boost::asio::io_context io;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  bool reused = false;  // the connection carried a request before (the server may have closed it)
  std::optional<std::chrono::steady_clock::time_point> deadline;

  [[nodiscard]] bool past_deadline() const noexcept {
    return deadline && std::chrono::steady_clock::now() >= *deadline;
  }

  // Starts an operation with `start(handler)` and runs until it completes, within the timeout;
  // a stop request (SIGINT/SIGTERM) closes the connection and ends the wait.
  template <class Start>
  boost::system::error_code await(Start&& start) {
    boost::system::error_code result;
    bool done = false;
    const auto silence_bound = std::chrono::steady_clock::now() + std::chrono::milliseconds(settings.timeout_ms);
    stream->expires_at(deadline ? std::min(silence_bound, *deadline) : silence_bound);
    std::forward<Start>(start)([&](boost::system::error_code error, auto&&...) {
      result = error;
      done = true;
    });
    // `done` is set by the handler, which run_one() calls.
    const auto finished = [&done] { return done; };
    io.restart();
    while (!finished()) {
      io.run_one_for(std::chrono::milliseconds(100));
      if (finished() || !settings.stop_ends_wait || stop_requested() == 0) continue;
      stream->close();  // the operation ends (aborted), its handler runs
      while (!finished()) io.run_one();
      stream.reset();
      throw Error(ExitCode::io_error, fmt::format("stopped while waiting for ClickHouse at {}", endpoint));
    }
    return result;
  }

  void connect() {
    tcp::resolver resolver(io);
    boost::system::error_code error;
    const auto endpoints = resolver.resolve(url.host, url.port, error);
    if (error) throw Error(ExitCode::not_found, fmt::format("ClickHouse at {}: {}", endpoint, error.message()));
    stream.emplace(io);
    error = await([&](auto handler) { stream->async_connect(endpoints, std::move(handler)); });
    if (error == beast::error::timeout) fail(error, "connecting");
    if (error) {
      stream.reset();
      throw Error(ExitCode::not_found,
                  fmt::format("ClickHouse at {}: {}; is clickhouse-server running there?", endpoint, error.message()));
    }
    // A request's last segment must not wait for the ack of the one before it (Nagle's
    // algorithm against the server's delayed ACK: 40 ms an insert).
    stream->socket().set_option(tcp::no_delay(true), error);
    buffer.clear();
    reused = false;
  }

  // The body is the caller's, sent from where it is (a batch of rows is tens of MB).
  http::request<http::span_body<const char>> request(std::string_view query, std::string_view body) const {
    http::request<http::span_body<const char>> req{
        http::verb::post, fmt::format("/?database={}&query={}", url_encode(settings.database), url_encode(query)), 11};
    req.set(http::field::host, url.host);
    req.set(http::field::content_type, "text/plain");
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
    req.body() = boost::beast::span<const char>(body.data(), body.size());
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  [[noreturn]] void fail(const boost::system::error_code& error, std::string_view doing) {
    stream.reset();
    if (error == beast::error::timeout && past_deadline()) {
      throw Error(ExitCode::timeout,
                  fmt::format("ClickHouse at {}: no answer before the request's deadline ({})", endpoint, doing));
    }
    if (error == beast::error::timeout) {
      throw Error(ExitCode::timeout, fmt::format("ClickHouse at {}: no answer within {} ms ({}); giving up", endpoint,
                                                 settings.timeout_ms, doing));
    }
    if (error == http::error::partial_message || error == http::error::end_of_stream ||
        error == boost::asio::error::eof) {
      throw Error(
          ExitCode::io_error,
          fmt::format("ClickHouse at {} closed the connection before the end of its reply ({})", endpoint, doing));
    }
    throw Error(ExitCode::io_error, fmt::format("ClickHouse at {}: {} ({})", endpoint, error.message(), doing));
  }

  // Sends a request piece by piece (each within the timeout), connecting first when there is
  // no connection.
  boost::system::error_code send_once(const http::request<http::span_body<const char>>& req) {
    if (!stream) connect();
    http::request_serializer<http::span_body<const char>> serializer(req);
    boost::system::error_code error;
    while (!error && !serializer.is_done()) {
      error = await([&](auto handler) { http::async_write_some(*stream, serializer, std::move(handler)); });
    }
    return error;
  }

  using Parser = http::response_parser<http::buffer_body>;

  // Reads until the buffer holds a whole header, piece by piece as the body: the silence
  // before each piece is bounded, not the whole header (Beast's header read is one
  // operation; a slow link that keeps sending is no silent server).
  boost::system::error_code read_header_bytes() {
    constexpr std::size_t header_max = std::size_t{64} * 1024;  // beyond, the parser refuses it
    constexpr std::size_t piece = 4096;
    const auto header_in_buffer = [&] {
      const std::string_view held(static_cast<const char*>(buffer.data().data()), buffer.size());
      return held.find("\r\n\r\n") != std::string_view::npos || held.size() >= header_max;
    };
    boost::system::error_code error;
    while (!error && !header_in_buffer()) {
      error = await([&](auto handler) {
        stream->async_read_some(buffer.prepare(piece), [this, handler = std::move(handler)](boost::system::error_code e,
                                                                                            std::size_t n) mutable {
          buffer.commit(n);
          handler(e, n);
        });
      });
    }
    return error;
  }

  // Sends a request and reads the reply's headers into a new parser. A kept connection the
  // server closed while idle fails before any reply: then once more on a new connection.
  void exchange(const http::request<http::span_body<const char>>& req, std::optional<Parser>& parser) {
    const bool was_reused = stream.has_value() && reused;
    const auto attempt = [&] {
      parser.emplace();
      // No limit (a SELECT's reply is streamed). Not boost::none: Boost 1.74's parser compares
      // a Content-Length with the optional limit, and any length is above none ("body limit
      // exceeded" for every reply with a Content-Length).
      parser->body_limit(std::numeric_limits<std::uint64_t>::max());
      boost::system::error_code error = send_once(req);
      if (!error) error = read_header_bytes();
      if (!error) {
        error = await([&](auto handler) { http::async_read_header(*stream, buffer, *parser, std::move(handler)); });
      }
      return error;
    };
    boost::system::error_code error = attempt();
    if (error && was_reused && error != beast::error::timeout) {
      stream.reset();
      error = attempt();
    }
    if (error) fail(error, "waiting for the reply's headers");
    reused = true;
  }

  // Reads the body in pieces (the silence before each is bounded, not the total), handing each
  // to `on_piece` until it returns false (then the rest is not read: the connection is dropped).
  void read_body(Parser& parser, const std::function<bool(std::string_view piece)>& on_piece) {
    std::array<char, std::size_t{64} * 1024> piece{};
    while (!parser.is_done()) {
      parser.get().body().data = piece.data();
      parser.get().body().size = piece.size();
      boost::system::error_code error =
          await([&](auto handler) { http::async_read_some(*stream, buffer, parser, std::move(handler)); });
      if (error == http::error::need_buffer) error = {};
      if (error) fail(error, "reading the reply's body");
      if (!on_piece(std::string_view(piece.data(), piece.size() - parser.get().body().size))) {
        stream.reset();
        return;
      }
    }
    if (!parser.get().keep_alive()) stream.reset();
  }
};

ClickHouseHttp::ClickHouseHttp(const ClickHouseSettings& settings) : impl_(std::make_unique<Impl>()) {
  impl_->settings = settings;
  impl_->url = parse_url(settings.url);
  impl_->authorization = basic_auth(settings.creds);
  impl_->endpoint = fmt::format("{}:{}", impl_->url.host, impl_->url.port);
}

ClickHouseHttp::~ClickHouseHttp() = default;

const std::string& ClickHouseHttp::endpoint() const noexcept {
  return impl_->endpoint;
}

bool ClickHouseHttp::past_deadline() const noexcept {
  return impl_->past_deadline();
}

void ClickHouseHttp::set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
  impl_->deadline = deadline;
}

HttpReply ClickHouseHttp::post(std::string_view query, std::string_view body) {
  std::optional<Impl::Parser> parser;
  impl_->exchange(impl_->request(query, body), parser);
  HttpReply reply{parser->get().result_int(), {}};
  impl_->read_body(*parser, [&](std::string_view piece) {
    reply.body.append(piece.substr(0, error_body_max - reply.body.size()));
    return reply.body.size() < error_body_max;
  });
  return reply;
}

HttpReply ClickHouseHttp::stream(std::string_view query, const std::function<void(std::string_view piece)>& on_piece) {
  std::optional<Impl::Parser> parser;
  impl_->exchange(impl_->request(query, {}), parser);
  HttpReply reply{parser->get().result_int(), {}};
  impl_->read_body(*parser, [&](std::string_view piece) {
    if (reply.status == 200) {
      on_piece(piece);
      return true;
    }
    reply.body.append(piece.substr(0, error_body_max - reply.body.size()));
    return reply.body.size() < error_body_max;
  });
  return reply;
}

void ClickHouseHttp::execute(std::string_view statement) {
  const HttpReply reply = post(statement, {});
  if (reply.status != 200) {
    throw Error(ExitCode::failure, fmt::format("ClickHouse: {}", clickhouse_error_line(reply.body)));
  }
}

std::string clickhouse_error_line(std::string_view body) {
  constexpr std::size_t line_max = 2048;
  const std::size_t newline = body.find('\n');
  std::string line(body.substr(0, std::min(newline, line_max)));
  if (const std::size_t trace = line.find(", Stack trace"); trace != std::string::npos) line.resize(trace);
  if (newline > line_max && body.size() > line_max) line += " [cut]";
  return line;
}

int clickhouse_error_code(std::string_view body) {
  constexpr std::string_view prefix = "Code: ";
  if (body.substr(0, prefix.size()) != prefix) return 0;
  body.remove_prefix(prefix.size());
  int code = 0;
  const auto [end, error] = std::from_chars(body.data(), body.data() + std::min<std::size_t>(body.size(), 6), code);
  return error == std::errc() && end != body.data() ? code : 0;
}

bool refused_for_data(const HttpReply& reply) {
  // ClickHouse's codes for a value it cannot parse or hold (src/Common/ErrorCodes.cpp):
  // CANNOT_PARSE_TEXT, _ESCAPE_SEQUENCE, _QUOTED_STRING, _INPUT_ASSERTION_FAILED, ATTEMPT_TO_READ_AFTER_EOF,
  // CANNOT_PARSE_DATE, _DATETIME, TYPE_MISMATCH, ARGUMENT_OUT_OF_BOUND, CANNOT_CONVERT_TYPE,
  // CANNOT_PARSE_NUMBER, INCORRECT_DATA, TOO_LARGE_STRING_SIZE.
  constexpr std::array<int, 13> data_codes = {6, 25, 26, 27, 32, 38, 41, 53, 69, 70, 72, 117, 131};
  if (reply.status == 200) return false;
  const std::string_view body = reply.body;
  // A table of another shape refuses every row: that is not the rows' fault (retried).
  if (body.find("Unknown field found") != std::string_view::npos) return false;
  const int code = clickhouse_error_code(body);
  return std::find(data_codes.begin(), data_codes.end(), code) != data_codes.end() ||
         body.find("(while read the value of key") != std::string_view::npos;
}

}  // namespace tp
