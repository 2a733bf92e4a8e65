// palm-bench: load generator and timer for scripts/bench/palm-recv.sh (not installed).
//   palm-bench parse --messages N --size S          parser (and record formatting) throughput
//   palm-bench send --port P --senders K --messages N --size S   K concurrent TCP senders
//   palm-bench count --expect M                     reads stdin until M lines arrived
// Messages are built here from the protocol document, not with the library's parser.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "palm/parser.hpp"
#include "palm/records.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

void put(Bytes& b, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) b.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

// One text message: attributes, process id, time stamp, trace data, end.
Bytes build_stream(std::size_t messages, std::size_t size, std::uint32_t sender) {
  Bytes stream;
  const std::string filler(size, 'x');
  for (std::size_t i = 0; i < messages; ++i) {
    const std::string text = fmt::format("{}:{}:{}", sender, i, filler).substr(0, std::max<std::size_t>(size, 8));
    const std::size_t total = 6 + 8 + 7 + 7 + (3 + text.size()) + 3;
    stream.push_back(1);
    stream.push_back(0);
    put(stream, total, 4);
    stream.push_back(1), put(stream, 5, 2), put(stream, 0x0200, 2), put(stream, 0, 2), stream.push_back(1);
    stream.push_back(3), put(stream, 4, 2), put(stream, sender, 4);
    stream.push_back(6), put(stream, 4, 2), put(stream, i, 4);
    stream.push_back(5), put(stream, text.size(), 2);
    stream.insert(stream.end(), text.begin(), text.end());
    stream.push_back(0), put(stream, 0, 2);
  }
  return stream;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int parse(std::size_t messages, std::size_t size) {
  const Bytes stream = build_stream(messages, size, 1);
  for (const bool format : {false, true}) {
    tp::palm::Parser parser(1U << 20U);
    tp::OutBuffer out;
    std::size_t count = 0;
    std::size_t skipped = 0;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < stream.size(); i += 65536) {
      const auto error = parser.feed(
          std::span(stream).subspan(i, std::min<std::size_t>(65536, stream.size() - i)),
          [&](const tp::palm::Message& m) {
            ++count;
            if (format) {
              tp::palm::append_record(out, m, {1, "127.0.0.1:1"}, 1, tp::palm::Format::ndjson);
              if (out.size() > (1U << 20U)) out.clear();
            }
          },
          [&](const tp::palm::ParseError&) { ++skipped; });
      if (error || skipped != 0) return 1;
    }
    const double s = seconds_since(start);
    fmt::print("{:<28} {:>10.0f} messages/s {:>8.0f} MB/s  ({} messages of {} bytes)\n",
               format ? "parser + NDJSON formatting" : "parser", static_cast<double>(count) / s,
               static_cast<double>(stream.size()) / 1e6 / s, count, stream.size() / count);
  }
  return 0;
}

int send(std::uint16_t port, std::size_t senders, std::size_t messages, std::size_t size) {
  std::vector<Bytes> streams;
  for (std::size_t k = 0; k < senders; ++k)
    streams.push_back(build_stream(messages, size, static_cast<std::uint32_t>(k)));
  std::vector<std::thread> threads;
  threads.reserve(streams.size());
  for (const Bytes& stream : streams) {
    threads.emplace_back([&stream, port] {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(port);
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) std::exit(1);
      for (std::size_t i = 0; i < stream.size();) {
        const ssize_t n = ::write(fd, stream.data() + i, std::min<std::size_t>(65536, stream.size() - i));
        if (n <= 0) std::exit(1);
        i += static_cast<std::size_t>(n);
      }
      ::close(fd);
    });
  }
  for (auto& t : threads) t.join();
  return 0;
}

int count(std::uint64_t expect) {
  std::vector<char> buffer(1U << 20U);
  std::uint64_t lines = 0;
  while (lines < expect) {
    const ssize_t n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
    if (n <= 0) break;
    lines += static_cast<std::uint64_t>(std::count(buffer.begin(), buffer.begin() + n, '\n'));
  }
  fmt::print("{}\n", lines);
  return lines == expect ? 0 : 1;
}

int run_main(int argc, char** argv) {
  CLI::App app{"Palm Reporter protocol load generator and timer for the benchmarks", "palm-bench"};
  app.require_subcommand(1);
  std::size_t messages = 1'000'000;
  std::size_t size = 40;
  std::size_t senders = 1;
  std::uint16_t port = 0;
  std::uint64_t expect = 0;
  auto* p = app.add_subcommand("parse", "Parser throughput");
  p->add_option("--messages", messages);
  p->add_option("--size", size, "Text bytes per message");
  auto* s = app.add_subcommand("send", "Concurrent TCP senders");
  s->add_option("--port", port)->required();
  s->add_option("--senders", senders);
  s->add_option("--messages", messages, "Per sender");
  s->add_option("--size", size);
  auto* c = app.add_subcommand("count", "Count lines on stdin");
  c->add_option("--expect", expect)->required();
  CLI11_PARSE(app, argc, argv);
  if (p->parsed()) return parse(messages, size);
  if (s->parsed()) return send(port, senders, messages, size);
  return count(expect);
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("palm-bench", [&] { return run_main(argc, argv); });
}
