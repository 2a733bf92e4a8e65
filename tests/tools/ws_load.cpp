// ws-load: a load generator for WebSocket servers of the Callisto protocol (benchmarks).
// Opens N clients from one thread (poll), sends Connect and Start, and counts the Event
// messages each receives until a record containing "__end__" arrives (or the stream goes
// quiet). Records with "sent_us":T (CLOCK_REALTIME microseconds) give latency samples.
// Some clients can be stalled: they handshake and Start, then never read.
// Prints one JSON object with the totals.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::uint64_t realtime_us() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

struct Client {
  int fd = -1;
  std::string buffer;
  bool upgraded = false;
  bool done = false;
  std::uint64_t events = 0;
  std::uint64_t bytes = 0;
};

std::string masked_text_frame(std::string_view payload) {
  std::string out;
  out.push_back(static_cast<char>(0x81));
  out.push_back(static_cast<char>(0x80U | payload.size()));  // payloads here are < 126 bytes
  const std::array<char, 4> mask{0x12, 0x34, 0x56, 0x78};
  out.append(mask.data(), mask.size());
  for (std::size_t i = 0; i < payload.size(); ++i) out.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
  return out;
}

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send failed");
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

int connect_to(const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    throw std::runtime_error(fmt::format("cannot connect to {}:{}", host, port));
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Handles whole frames in the client's buffer; returns false when the stream has ended.
void consume_frames(Client& client, bool latency, std::vector<std::uint32_t>& samples, std::uint64_t now) {
  std::size_t at = 0;
  while (client.buffer.size() - at >= 2) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(client.buffer.data() + at);
    std::uint64_t length = p[1] & 0x7FU;
    std::size_t header = 2;
    if (length == 126) {
      if (client.buffer.size() - at < 4) break;
      length = (std::uint64_t{p[2]} << 8U) | p[3];
      header = 4;
    } else if (length == 127) {
      if (client.buffer.size() - at < 10) break;
      length = 0;
      for (int i = 2; i < 10; ++i) length = (length << 8U) | p[i];
      header = 10;
    }
    if (client.buffer.size() - at < header + length) break;
    const std::string_view payload(client.buffer.data() + at + header, length);
    if (payload.starts_with(R"({"type":"Event")")) {
      ++client.events;
      client.bytes += header + length;
      if (payload.find("__end__") != std::string_view::npos) client.done = true;
      if (latency) {
        const std::size_t sent = payload.find("\"sent_us\":");
        if (sent != std::string_view::npos) {
          std::uint64_t value = 0;
          const char* begin = payload.data() + sent + 10;
          std::from_chars(begin, payload.data() + payload.size(), value);
          samples.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(now - value, UINT32_MAX)));
        }
      }
    }
    at += header + length;
  }
  client.buffer.erase(0, at);
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"WebSocket load generator for trace-serve benchmarks", "ws-load"};
  std::string host = "127.0.0.1";
  int port = 9229;
  int clients_wanted = 1;
  int stalled_wanted = 0;
  double quiet_s = 3;
  double timeout_s = 120;
  bool latency = false;
  std::string ready_file;
  app.add_option("--host", host);
  app.add_option("--port", port)->required();
  app.add_option("--clients", clients_wanted);
  app.add_option("--stalled", stalled_wanted, "Clients that Start and never read");
  app.add_option("--quiet", quiet_s, "End after this many seconds without data");
  app.add_option("--timeout", timeout_s);
  app.add_flag("--latency", latency, "Latency from the records' sent_us field");
  app.add_option("--ready-file", ready_file, "Created once every client has sent Start");
  CLI11_PARSE(app, argc, argv);

  std::vector<Client> clients(static_cast<std::size_t>(clients_wanted + stalled_wanted));
  for (Client& client : clients) {
    client.fd = connect_to(host, port);
    send_all(client.fd, fmt::format("GET /ws HTTP/1.1\r\nHost: {}:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                                    host, port));
    send_all(client.fd,
             masked_text_frame(R"({"type":"Connect","data":{"probe_selector":null,"chip":null,"token":null}})"));
    send_all(client.fd, masked_text_frame(R"({"type":"Start","data":{"allow_mask":4294967295,"baud_rate":null}})"));
  }
  // Give the servers time to process Start before the stream begins (a benchmark's warm-up:
  // the stalled clients never read, so no reply can say it).
  ::usleep(300000);  // pace: the benchmark's warm-up, no check depends on it
  if (!ready_file.empty()) std::ofstream(ready_file) << "ready\n";

  std::vector<std::uint32_t> samples;
  std::vector<pollfd> fds;
  std::array<char, 1 << 16> buffer{};
  std::uint64_t first_us = 0;
  std::uint64_t last_us = 0;
  const std::uint64_t started = realtime_us();
  const auto readers = static_cast<std::size_t>(clients_wanted);
  while (true) {
    fds.clear();
    for (std::size_t i = 0; i < readers; ++i) {
      if (!clients[i].done) fds.push_back(pollfd{clients[i].fd, POLLIN, 0});
    }
    if (fds.empty()) break;
    const std::uint64_t now = realtime_us();
    if (now - started > static_cast<std::uint64_t>(timeout_s * 1e6)) break;
    if (first_us != 0 && now - last_us > static_cast<std::uint64_t>(quiet_s * 1e6)) break;
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    for (const pollfd& p : fds) {
      if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      auto& client = *std::find_if(clients.begin(), clients.end(), [&](const Client& c) { return c.fd == p.fd; });
      const ssize_t n = ::recv(p.fd, buffer.data(), buffer.size(), 0);
      if (n <= 0) {
        client.done = true;
        continue;
      }
      const std::uint64_t received = realtime_us();
      client.buffer.append(buffer.data(), static_cast<std::size_t>(n));
      if (!client.upgraded) {
        const std::size_t end = client.buffer.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        client.buffer.erase(0, end + 4);
        client.upgraded = true;
      }
      const std::uint64_t before = client.events;
      consume_frames(client, latency, samples, received);
      if (client.events != before) {
        if (first_us == 0) first_us = received;
        last_us = received;
      }
    }
  }
  std::uint64_t total = 0;
  std::uint64_t least = UINT64_MAX;
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < readers; ++i) {
    total += clients[i].events;
    bytes += clients[i].bytes;
    least = std::min(least, clients[i].events);
  }
  std::sort(samples.begin(), samples.end());
  const auto percentile = [&](double q) -> std::uint32_t {
    return samples.empty() ? 0
                           : samples[std::min(samples.size() - 1,
                                              static_cast<std::size_t>(q * static_cast<double>(samples.size())))];
  };
  const double seconds = first_us == 0 ? 0 : static_cast<double>(last_us - first_us) / 1e6;
  fmt::print(
      R"({{"clients":{},"stalled":{},"events":{},"least_per_client":{},"bytes":{},"seconds":{:.3f},"events_per_sec":{:.0f},"latency_p50_us":{},"latency_p99_us":{},"latency_max_us":{},"samples":{}}})"
      "\n",
      readers, stalled_wanted, total, least == UINT64_MAX ? 0 : least, bytes, seconds,
      seconds > 0 ? static_cast<double>(total) / seconds : 0.0, percentile(0.5), percentile(0.99),
      samples.empty() ? 0 : samples.back(), samples.size());
  for (const Client& client : clients) ::close(client.fd);
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "ws-load: {}\n", e.what());
    return 1;
  }
}
