// eko-collect's library parts: ELF reader, RSP framing and client (recorded replies of
// QEMU, gdbserver and OpenOCD over a socket pair), compact log decoding and segments,
// layout files, the memory snapshot and the collector against an in-memory target,
// CMSIS-DAP SWD encoders and parsers, argument resolution.
#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <thread>

#include "dap/swd_protocol.hpp"
#include "ekotrace/collector.hpp"
#include "ekotrace/report_finish.hpp"
#include "ekotrace/target_setup.hpp"
#include "elf/elf_file.hpp"
#include "gdb/rsp_client.hpp"

using Bytes = std::vector<std::uint8_t>;
using tp::elf::Endian;

namespace {

// Waits until fd is ready for events (or its peer is gone); false when a minute passes first,
// a deadline whose expiry ends the peer thread and so fails the test's checks.
bool ready_for(int fd, short events) {
  pollfd ready{fd, events, 0};
  return ::poll(&ready, 1, 60'000) > 0;
}

void put(Bytes& b, std::size_t at, std::uint64_t v, unsigned size, Endian e) {
  if (b.size() < at + size) b.resize(at + size);
  for (unsigned i = 0; i < size; ++i)
    b[at + i] = static_cast<std::uint8_t>(v >> (8 * (e == Endian::little ? i : size - 1 - i)));
}

// A minimal ELF with a .symtab (TRACER_1 object, main function) and its .strtab.
Bytes make_elf(bool is64, Endian e) {
  Bytes b(is64 ? 64 : 52, 0);
  b[0] = 0x7f, b[1] = 'E', b[2] = 'L', b[3] = 'F', b[4] = is64 ? 2 : 1, b[5] = e == Endian::little ? 1 : 2, b[6] = 1;
  put(b, 18, is64 ? 183 : 40, 2, e);
  const std::string strings = std::string("\0TRACER_1\0main\0", 15);
  const std::size_t strtab = b.size();
  b.insert(b.end(), strings.begin(), strings.end());
  const std::size_t symtab = b.size();
  const unsigned entry = is64 ? 24 : 16;
  b.resize(symtab + 3 * entry, 0);
  const auto symbol = [&](std::size_t index, std::uint32_t name, std::uint64_t value, std::uint8_t type) {
    const std::size_t at = symtab + index * entry;
    put(b, at, name, 4, e);
    if (is64) {
      b[at + 4] = type;
      put(b, at + 8, value, 8, e);
    } else {
      put(b, at + 4, value, 4, e);
      b[at + 12] = type;
    }
  };
  symbol(1, 1, 0x20000100, 1);
  symbol(2, 10, 0x1234, 2);
  const std::size_t sections = b.size();
  const unsigned sh = is64 ? 64 : 40;
  b.resize(sections + 3 * sh, 0);
  const auto section = [&](std::size_t index, std::uint32_t type, std::uint64_t offset, std::uint64_t size,
                           std::uint32_t link, std::uint64_t entsize) {
    const std::size_t at = sections + index * sh;
    put(b, at + 4, type, 4, e);
    put(b, at + (is64 ? 24 : 16), offset, is64 ? 8 : 4, e);
    put(b, at + (is64 ? 32 : 20), size, is64 ? 8 : 4, e);
    put(b, at + (is64 ? 40 : 24), link, 4, e);
    put(b, at + (is64 ? 56 : 36), entsize, is64 ? 8 : 4, e);
  };
  section(1, 3, strtab, strings.size(), 0, 0);
  section(2, 2, symtab, 3 * entry, 1, entry);
  put(b, is64 ? 40 : 32, sections, is64 ? 8 : 4, e);
  put(b, is64 ? 58 : 46, sh, 2, e);
  put(b, is64 ? 60 : 48, 3, 2, e);
  return b;
}

// A GDB server that answers from a script; `greeting` is sent as soon as it connects.
class ScriptedStub {
 public:
  ScriptedStub(std::map<std::string, std::string> replies, std::string greeting = {}, bool ack = true)
      : replies_(std::move(replies)) {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
    client_fd_ = fds[0];
    peer_ = tp::FileDescriptor(fds[1]);
    thread_ = std::thread([this, greeting, ack] { serve(greeting, ack); });
  }
  ScriptedStub(const ScriptedStub&) = delete;
  ScriptedStub& operator=(const ScriptedStub&) = delete;
  ~ScriptedStub() {
    ::shutdown(peer_.get(), SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
  }
  // Waits until the client closed its end and everything it sent was read.
  void wait_closed() { thread_.join(); }
  tp::FileDescriptor client() { return tp::FileDescriptor(client_fd_); }
  std::vector<std::string> requests;  // read after the client is gone
  int nak_first = 0;                  // answer the first N packets with '-'

 private:
  void send(std::string_view s) { (void)::write(peer_.get(), s.data(), s.size()); }
  void serve(const std::string& greeting, bool ack) {
    if (!greeting.empty()) send(tp::gdb::frame_packet(greeting));
    tp::gdb::RspParser parser;
    std::vector<tp::gdb::RspEvent> events;
    bool no_ack = !ack;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(peer_.get(), buffer, sizeof buffer);
      if (n == 0) return;
      if (n < 0) {
        if (errno != EAGAIN || !ready_for(peer_.get(), POLLIN)) return;
        continue;
      }
      if (n == 1 && buffer[0] == 0x03) {
        send(tp::gdb::frame_packet("T02thread:p01.01;"));
        continue;
      }
      parser.feed(std::span(reinterpret_cast<const std::uint8_t*>(buffer), static_cast<std::size_t>(n)), events);
      for (auto& e : events) {
        if (e.kind != tp::gdb::RspEvent::Kind::packet) continue;
        if (nak_first > 0) {
          --nak_first;
          send("-");
          continue;
        }
        if (!no_ack) send("+");
        requests.push_back(e.payload);
        const auto found = replies_.find(e.payload);
        if (e.payload == "c") continue;  // running: no reply until interrupted
        send(tp::gdb::frame_packet(found == replies_.end() ? "" : found->second));
        if (e.payload == "QStartNoAckMode" && found != replies_.end()) no_ack = true;
      }
      events.clear();
    }
  }
  std::map<std::string, std::string> replies_;
  int client_fd_ = -1;
  tp::FileDescriptor peer_;
  std::thread thread_;
};

// An in-memory target for the collector.
class FakeTarget final : public tp::target::TargetMemory {
 public:
  explicit FakeTarget(Bytes ram, std::uint64_t base) : ram_(std::move(ram)), base_(base) {}
  void halt() override {
    halted_ = true;
    ++halts;
  }
  void resume() override { halted_ = false; }
  [[nodiscard]] bool halted() const noexcept override { return halted_; }
  std::vector<std::uint8_t> read(std::uint64_t address, std::size_t length) override {
    ++reads;
    if (address < base_ || address + length > base_ + ram_.size())
      throw tp::target::MemoryError(address, length, "E14");
    return {ram_.begin() + static_cast<std::ptrdiff_t>(address - base_),
            ram_.begin() + static_cast<std::ptrdiff_t>(address - base_ + length)};
  }
  void write(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    ++writes;
    std::copy(bytes.begin(), bytes.end(), ram_.begin() + static_cast<std::ptrdiff_t>(address - base_));
  }
  void release() noexcept override { halted_ = false; }
  [[nodiscard]] std::uint64_t round_trips() const noexcept override { return reads + writes; }
  [[nodiscard]] std::string description() const override { return "fake"; }
  std::uint64_t word(std::uint64_t address, unsigned size = 4) const {
    std::uint64_t v = 0;
    for (unsigned i = 0; i < size; ++i) v |= static_cast<std::uint64_t>(ram_[address - base_ + i]) << (8 * i);
    return v;
  }
  void set(std::uint64_t address, std::uint64_t v, unsigned size = 4) {
    put(ram_, address - base_, v, size, Endian::little);
  }
  std::uint64_t reads = 0, writes = 0, halts = 0;

 private:
  Bytes ram_;
  std::uint64_t base_;
  bool halted_ = false;
};

constexpr std::uint64_t base = 0x20000000;

// Tracer k (0-based) at reference base + 4k, history at base + 0x100 + 0x40k (32-bit layout).
void add_tracer(FakeTarget& t, unsigned k, std::vector<std::uint32_t> log) {
  const std::uint64_t handle = base + 0x40 + 4 * k, history = base + 0x100 + 0x40 * k;
  const std::uint64_t clocks = base + 0x300 + 0x10 * k, storage = base + 0x400 + 0x100 * k;
  t.set(base + 4 * k, handle);
  t.set(handle, history);
  t.set(history, k + 1);
  t.set(history + 16, clocks);
  t.set(history + 20, 2);
  t.set(history + 24, 1);
  t.set(clocks, k + 1);
  t.set(clocks + 4, 7);
  t.set(history + 28, storage);
  t.set(history + 32, 64);
  t.set(history + 36, log.size());
  for (std::size_t i = 0; i < log.size(); ++i) t.set(storage + 4 * i, log[i]);
}

}  // namespace

TEST_CASE("elf: ELF32/ELF64, little and big endian, symbols") {
  for (const bool is64 : {false, true}) {
    for (const Endian e : {Endian::little, Endian::big}) {
      const Bytes b = make_elf(is64, e);
      const auto elf = tp::elf::ElfFile::parse(b, "t.elf");
      CHECK(elf.word_size() == (is64 ? 8U : 4U));
      CHECK(elf.endian() == e);
      CHECK(elf.machine_name() == (is64 ? "AArch64" : "ARM"));
      REQUIRE(elf.find("TRACER_1"));
      CHECK(elf.find("TRACER_1")->value == 0x20000100);
      CHECK_FALSE(elf.find("main"));  // functions are not tracer references
      CHECK_FALSE(elf.find("nothing"));
      for (std::size_t cut : {std::size_t{3}, std::size_t{20}, b.size() - 10}) {
        CHECK_THROWS_AS(tp::elf::ElfFile::parse(std::span(b).first(cut), "cut.elf"), tp::Error);
      }
    }
  }
  const Bytes text{'#', '!', '/', 'b', 'i', 'n', '/', 's', 'h', '\n', 0, 0, 0, 0, 0, 0, 0};
  CHECK_THROWS_WITH(tp::elf::ElfFile::parse(text, "x"), doctest::Contains("not an ELF file"));
}

TEST_CASE("rsp: framing, escapes, run-length encoding, malformed input") {
  CHECK(tp::gdb::frame_packet("OK") == "$OK#9a");
  const std::string escaped =
      "a}\x03"
      "b}\x04"
      "c}]d}\x0a";
  CHECK(tp::gdb::frame_packet("a#b$c}d*") == fmt::format("${}#{:02x}", escaped, tp::gdb::checksum(escaped)));
  tp::gdb::RspParser parser;
  std::vector<tp::gdb::RspEvent> events;
  const std::string body = "0* ";  // '0' and 3 more (' ' is 32 = 29 + 3)
  const std::string hash = "}\x03";
  const std::string stream =
      fmt::format("+-xy${}#{:02x}${}#{:02x}$bad#00%Stop:T05#{:02x}", body, tp::gdb::checksum(body), hash,
                  tp::gdb::checksum(hash), tp::gdb::checksum("Stop:T05"));
  for (const char c : stream)
    parser.feed(std::span(reinterpret_cast<const std::uint8_t*>(&c), 1), events);  // byte by byte
  REQUIRE(events.size() == 6);
  CHECK(events[0].kind == tp::gdb::RspEvent::Kind::ack);
  CHECK(events[1].kind == tp::gdb::RspEvent::Kind::nak);
  CHECK(events[2].payload == "0000");
  CHECK(events[3].payload == "#");
  CHECK_FALSE(events[4].checksum_ok);
  CHECK(events[5].kind == tp::gdb::RspEvent::Kind::notification);
  CHECK(parser.stray_bytes() == 2);
  CHECK(parser.run_length_packets() == 1);
  events.clear();
  const std::string bad_rle = "$*x#00$a*\x01#00";
  parser.feed(std::span(reinterpret_cast<const std::uint8_t*>(bad_rle.data()), bad_rle.size()), events);
  CHECK(events.empty());
  CHECK(parser.malformed_packets() == 2);
  CHECK(tp::gdb::decode_hex("0aFf") == Bytes{0x0a, 0xff});
  CHECK_FALSE(tp::gdb::decode_hex("0g"));
  CHECK_FALSE(tp::gdb::decode_hex("abc"));
  CHECK(tp::gdb::error_number("E14") == 0x14);
  CHECK_FALSE(tp::gdb::error_number("E1"));
  CHECK(tp::gdb::is_stop_reply("T02thread:p01.01;"));
  CHECK_FALSE(tp::gdb::is_stop_reply("OK"));
  CHECK(tp::gdb::stop_reply_pid("T05thread:p2a.01;") == 0x2a);
  const auto f = tp::gdb::parse_supported("PacketSize=4000;qXfer:memory-map:read+;QStartNoAckMode+;multiprocess+");
  CHECK(f.packet_size == 0x4000);
  CHECK(f.no_ack_mode);
  CHECK(f.memory_map);
  CHECK(f.multiprocess);
}

TEST_CASE("rsp client: QEMU's unsolicited stop, split reads, E14, D;pid fallback") {
  ScriptedStub stub({{"qSupported:swbreak+;hwbreak+", "PacketSize=2;multiprocess+"},
                     {"?", "T05thread:p01.01;"},
                     {"m20000000,a", "0102030405"},
                     {"m20000005,5", "060708090a"},
                     {"mffffff00,4", "E14"},
                     {"M20000000,2:beef", "OK"},
                     {"D", "E22"},
                     {"D;1", "OK"}},
                    "T02thread:p01.01;");
  {
    tp::gdb::RspClient client(stub.client(), "stub", 2000);
    client.start();
    CHECK(client.halted());
    CHECK(client.statistics().unsolicited_stops == 1);
    CHECK(client.max_read() == (0x400 - 4) / 2);  // PacketSize=2 cannot be right: the default is used
    CHECK(client.read(0x20000000, 10) == Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    CHECK_THROWS_AS(client.read(0xffffff00, 4), tp::target::MemoryError);
    const Bytes beef{0xbe, 0xef};
    client.write(0x20000000, beef);
    client.resume();
    CHECK_FALSE(client.halted());
    client.halt();
    CHECK(client.halted());
    CHECK(client.detach());
  }
  stub.wait_closed();
  CHECK(stub.requests.back() == "D;1");
}

TEST_CASE("rsp client: no-ack mode, retransmission after a nak, probe servers get c instead of D") {
  ScriptedStub stub({{"qSupported:swbreak+;hwbreak+", "PacketSize=4000;QStartNoAckMode+;qXfer:memory-map:read+"},
                     {"QStartNoAckMode", "OK"},
                     {"?", "S05"}});
  stub.nak_first = 1;
  {
    tp::gdb::RspClient client(stub.client(), "openocd", 2000);
    client.start();
    CHECK(client.no_ack());
    CHECK(client.statistics().retransmissions == 1);
    client.release();
  }
  stub.wait_closed();
  CHECK(stub.requests.back() == "c");
}

TEST_CASE("rsp client: a silent or vanished server") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
  tp::FileDescriptor peer(fds[1]);
  tp::gdb::RspClient silent(tp::FileDescriptor{fds[0]}, "silent", 100);
  try {
    silent.start();
    FAIL("no timeout");
  } catch (const tp::Error& e) {
    CHECK(e.code() == tp::ExitCode::timeout);
  }
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
  ::close(fds[1]);
  tp::gdb::RspClient gone(tp::FileDescriptor{fds[0]}, "gone", 100);
  try {
    gone.start();
    FAIL("no error");
  } catch (const tp::Error& e) {
    CHECK(e.code() == tp::ExitCode::io_error);
  }
}

namespace {
// A peer that writes `unit` over and over until the client's end closes.
class Flood {
 public:
  explicit Flood(std::string unit) {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
    client_fd_ = fds[0];
    peer_ = tp::FileDescriptor(fds[1]);
    thread_ = std::thread([this, chunk = repeat(unit)] {
      while (::send(peer_.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL) != 0 && errno != EPIPE) {
        if (errno == EAGAIN && !ready_for(peer_.get(), POLLOUT)) return;
        errno = 0;
      }
    });
  }
  Flood(const Flood&) = delete;
  Flood& operator=(const Flood&) = delete;
  ~Flood() { thread_.join(); }
  tp::FileDescriptor client() { return tp::FileDescriptor(client_fd_); }

 private:
  static std::string repeat(const std::string& unit) {
    std::string chunk;
    while (chunk.size() < 16384) chunk += unit;
    return chunk;
  }
  int client_fd_ = -1;
  tp::FileDescriptor peer_;
  std::thread thread_;
};

tp::ExitCode failure_of(tp::gdb::RspClient& client, std::chrono::milliseconds& took) {
  const auto started = std::chrono::steady_clock::now();
  try {
    (void)client.request("m20000000,4");
  } catch (const tp::Error& e) {
    took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    return e.code();
  }
  return tp::ExitCode::ok;
}
}  // namespace

TEST_CASE("rsp client: the timeout bounds a whole exchange whatever the server floods") {
  std::chrono::milliseconds took{0};
  const std::vector<std::string> floods{fmt::format("+{}", tp::gdb::frame_packet("O4142")),  // console output
                                        fmt::format("+{}", tp::gdb::frame_packet("T05")),    // stop replies
                                        "+$OK#00",                                           // bad checksums
                                        fmt::format("+${}", std::string(4096, 'A'))};        // a packet never ending
  for (const std::string& unit : floods) {
    CAPTURE(unit.substr(0, 20));
    tp::ExitCode code = tp::ExitCode::ok;
    {
      Flood flood(unit);
      tp::gdb::RspClient client(flood.client(), "flood", 200);
      code = failure_of(client, took);
      client.release();
    }
    CHECK(code == tp::ExitCode::timeout);
    CHECK(took.count() < 1000);
  }
  // Packets without an ack: at most 64 are queued, then the server is given up.
  Flood never_acks(tp::gdb::frame_packet("S05"));
  tp::gdb::RspClient client(never_acks.client(), "never acks", 5000);
  CHECK(failure_of(client, took) == tp::ExitCode::io_error);
  CHECK(took.count() < 1000);
  client.release();
}

TEST_CASE("ekotrace: compact log decoding and segments") {
  using namespace tp::ekotrace;
  const std::vector<std::uint32_t> items{0x80000001, 5, 3, 0x40000064, 99, 0x80000001, 6, 0x80000002, 9, 4, 0x40000007};
  const auto log = decode_compact_log(items);
  CHECK(log.truncated);
  REQUIRE(log.entries.size() == 6);
  CHECK(log.entries[0].is_clock);
  CHECK(log.entries[2].has_payload);
  CHECK(log.entries[2].value == 99);
  Segmenter segmenter;
  std::vector<Row> rows;
  segmenter.add(1, 0, log.entries, rows);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].segment_id == 0);
  CHECK(rows[2].segment_index == 2);
  CHECK(rows[3].segment_id == 1);  // the tracer's own clock starts the next segment
  CHECK(rows[4].segment_id == 1);  // another tracer's clock does not
  CHECK(rows[4].segment_index == 1);
  CHECK(reserved_event_name(max_event_id - 2) == "log overflowed");
  // ekotrace's rule: every own clock starts a segment, back to back too (notes' example).
  const auto example = decode_compact_log(std::vector<std::uint32_t>{
      0x80000007, 0, 100, 101, 0x80000007, 1, 0x80000007, 2, 0x80000007, 3, 0x80000009, 4, 0x40000000 | 102, 55});
  std::vector<Row> four;
  Segmenter fresh;
  fresh.add(7, 0, example.entries, four);
  CHECK(fresh.segments() == 4);
  REQUIRE(four.size() == 8);
  CHECK(four[3].segment_id == 1);
  CHECK(four[4].segment_id == 2);
  CHECK(four[5].segment_id == 3);
  CHECK(four[6].segment_id == 3);  // tracer 9's clock stays in tracer 7's segment
  CHECK(four[7].segment_index == 2);
  // Event id 0 is not an event: dropped and counted.
  const auto zeros = decode_compact_log(std::vector<std::uint32_t>{0, 5, 0x40000000, 7});
  CHECK(zeros.zero_events == 2);
  REQUIRE(zeros.entries.size() == 1);
  CHECK(zeros.entries[0].id == 5);
  CHECK(reserved_event_name(5).empty());
}

TEST_CASE("ekotrace: layouts and layout files") {
  using namespace tp::ekotrace;
  CHECK(Layout::standard(8).compact_log == 40);
  CHECK(Layout::standard(8).in_use == 64);
  CHECK(Layout::standard(4).history_size() == 41);
  // Clock capacity as ekotrace sizes it: a 64 KiB tracer (about 14,000 log items) has ~1000
  // clocks, not the 256 once assumed; a capacity far beyond the log's share is not ekotrace's.
  const Layout standard = Layout::standard(4);
  CHECK(plausible_max_clocks(standard, 14000) >= 1000);
  CHECK(plausible_max_clocks(standard, 14000) < 1100);
  CHECK(plausible_max_clocks(standard, 0) == 2);
  CHECK(plausible_max_clocks(apply_layout_file(standard, R"({"max_clocks": 300})", "l.json"), 14000) == 300);
  CHECK_FALSE(apply_layout_file(standard, R"({"max_clocks": null})", "l.json").max_clocks);
  CHECK(apply_layout_file(standard, R"({"event_count": 8})", "l.json").event_count == 8);
  const auto custom = apply_layout_file(Layout::standard(4), R"({"in_use": null, "compact_log": 32})", "l.json");
  CHECK_FALSE(custom.in_use);
  CHECK(custom.compact_log == 32);
  CHECK_THROWS_WITH(apply_layout_file(Layout::standard(4), R"({"inuse": 3})", "l.json"), doctest::Contains("unknown"));
  CHECK_THROWS_AS(apply_layout_file(Layout::standard(4), R"({"word_size": 8})", "l.json"), tp::Error);
  CHECK_THROWS_AS(apply_layout_file(Layout::standard(4), "[1,", "l.json"), tp::Error);
  CHECK_THROWS_AS(apply_layout_file(Layout::standard(4), R"({"clocks": -1})", "l.json"), tp::Error);
}

TEST_CASE("ekotrace collector: reads, in_use, NULL, clear as ekotrace does, --no-clear, few round trips") {
  using namespace tp::ekotrace;
  FakeTarget target(Bytes(0x1000, 0), base);
  add_tracer(target, 0, {0x80000001, 7, 1, 0x40000064, 42});
  add_tracer(target, 1, {0x80000002, 7, 2});
  add_tracer(target, 2, {0x80000003, 7, 3});
  target.set(base + 0x100 + 0x40 * 1 + 40, 1, 1);  // tracer 2 in use
  target.set(base + 4 * 3, 0);                     // tracer 4: NULL reference
  std::vector<TracerSpec> specs{{"T1", base}, {"T2", base + 4}, {"T3", base + 8}, {"T4", base + 12}};
  Collector collector(target, specs, {Layout::standard(4), Endian::little, true, 512}, 2048);
  auto rows = collector.collect();
  CHECK(target.halted());
  CHECK(rows.size() == 3 + 2);
  collector.finish();
  CHECK_FALSE(target.halted());
  CHECK(target.reads <= 5);  // references, handles, histories, then logs and clocks: coalesced
  const auto& t = collector.tracers();
  CHECK(t[1].counters.skipped_in_use == 1);
  CHECK(t[3].counters.null_reference == 1);
  // Cleared as ekotrace ends a report: local clock 7 -> 8 in the clocks and in the restarted
  // log, then "produced report"; event_count 1 (that event).
  CHECK(target.word(base + 0x100 + 36) == 3);
  CHECK(target.word(base + 0x400) == 0x80000001);
  CHECK(target.word(base + 0x404) == 8);
  CHECK(target.word(base + 0x408) == produced_report_event);
  CHECK(target.word(base + 0x300 + 4) == 8);
  CHECK(target.word(base + 0x100 + 4) == 1);
  CHECK(target.word(base + 0x300 + 0x10 + 4) == 7);  // tracer 2 was skipped: untouched
  CHECK(collector.take_warnings().size() == 1);      // T4's NULL
  rows = collector.collect();  // nothing new: what the clear wrote is not handed out again, nor cleared again
  CHECK(rows.empty());
  collector.finish();
  CHECK(target.word(base + 0x300 + 4) == 8);
  target.set(base + 0x100 + 0x40 * 1 + 40, 0, 1);  // tracer 2 free again: its entries come now
  CHECK(collector.collect().size() == 2);
  collector.finish();
  // New entries after the clear: the restarted log comes first, as the next segment.
  target.set(base + 0x400 + 12, 0x3FFFFFFD);  // "log overflowed"
  target.set(base + 0x100 + 36, 4);
  rows = collector.collect();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].entry.is_clock);
  CHECK(rows[0].entry.value == 8);
  CHECK(rows[0].segment_index == 0);
  CHECK(rows[1].entry.id == produced_report_event);
  collector.finish();
  CHECK(collector.tracers()[0].counters.overflows == 1);  // "produced report" is not an overflow
  CHECK(target.word(base + 0x404) == 9);                  // every report has its own local clock
}

TEST_CASE("ekotrace: the clear after a poll is history.rs finished_report_logging") {
  using namespace tp::ekotrace;
  const auto items = [](std::initializer_list<std::uint32_t> list) { return std::vector<std::uint32_t>(list); };
  auto after = finished_report_logging(std::vector<LogicalClock>{{1, 7}}, 64);
  CHECK(after.clocks[0].count == 8);
  CHECK(after.log == items({0x80000001, 8, produced_report_event}));
  CHECK(after.event_count == 1);
  after = finished_report_logging(std::vector<LogicalClock>{{2, 5}, {1, 3}}, 64);
  CHECK(after.log == items({0x80000002, 6, 0x80000001, 3, produced_report_event}));
  CHECK(after.clocks[1].count == 3);  // only the tracer's own clock moves
  // A clock pair is written only while the log holds fewer than capacity - 2 items.
  after = finished_report_logging(std::vector<LogicalClock>{{2, 5}, {1, 3}}, 5);
  CHECK(after.log == items({0x80000002, 6, 0x80000001, 3, produced_report_event}));
  after = finished_report_logging(std::vector<LogicalClock>{{2, 5}, {1, 3}}, 4);
  CHECK(after.log == items({0x80000002, 6, log_overflowed_event, produced_report_event}));
  after = finished_report_logging(std::vector<LogicalClock>{{2, 5}}, 2);
  CHECK(after.log == items({log_overflowed_event, produced_report_event}));
  after = finished_report_logging(std::vector<LogicalClock>{{2, 5}, {1, 3}}, 3);  // the notice fills it
  CHECK(after.log == items({0x80000002, 6, log_overflowed_event}));
  CHECK(after.event_count == 0);
  after = finished_report_logging(std::vector<LogicalClock>{{2, 5}}, 3);
  CHECK(after.log == items({0x80000002, 6, produced_report_event}));
  // Saturating, as ekotrace's saturating_add.
  after = finished_report_logging(std::vector<LogicalClock>{{4, 0xFFFFFFFF}}, 64);
  CHECK(after.clocks[0].count == 0xFFFFFFFF);
  // No room at all: nothing written, no event counted.
  after = finished_report_logging(std::vector<LogicalClock>{{4, 1}}, 0);
  CHECK(after.log.empty());
  CHECK(after.event_count == 0);
  CHECK(is_overflow_event(log_overflowed_event));
  CHECK(is_overflow_event(clocks_full_event));
  CHECK_FALSE(is_overflow_event(produced_report_event));
  CHECK_FALSE(is_overflow_event(max_user_event_id));
}

TEST_CASE("ekotrace collector: --no-clear hands out only what is new") {
  using namespace tp::ekotrace;
  FakeTarget target(Bytes(0x1000, 0), base);
  add_tracer(target, 0, {0x80000001, 7, 1});
  Collector collector(target, {{"T1", base}}, {Layout::standard(4), Endian::little, false, 512}, 2048);
  CHECK(collector.collect().size() == 2);
  collector.finish();
  CHECK(collector.collect().empty());
  collector.finish();
  target.set(base + 0x400 + 12, 5);
  target.set(base + 0x100 + 36, 4);
  const auto rows = collector.collect();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].entry.id == 5);
  collector.finish();
  CHECK(target.writes == 0);
}

TEST_CASE("dap: SWD transfer encoding and replies") {
  using namespace tp::dap;
  const std::array<TransferRequest, 2> requests{{{true, false, ap_tar, 0x20000000}, {true, true, ap_drw, 0}}};
  CHECK(transfer_command(requests) == Bytes{0x05, 0, 2, 0x05, 0x00, 0x00, 0x00, 0x20, 0x0f});
  CHECK(jtag_to_swd_command().size() == 2 + 17);
  const auto ok = parse_transfer_reply(Bytes{0x05, 2, 1, 0x78, 0x56, 0x34, 0x12}, 1);
  REQUIRE(ok);
  CHECK(ok->ok());
  CHECK(ok->data == std::vector<std::uint32_t>{0x12345678});
  const auto fault = parse_transfer_reply(Bytes{0x05, 1, 4}, 1);
  REQUIRE(fault);
  CHECK_FALSE(fault->ok());
  CHECK_FALSE(parse_transfer_reply(Bytes{0x05, 2, 1, 0x78}, 1));  // data cut short
  CHECK_FALSE(parse_transfer_reply(Bytes{0x06, 0, 1}, 0));
  const auto block = parse_block_reply(Bytes{0x06, 1, 0, 1, 1, 2, 3, 4}, true);
  REQUIRE(block);
  CHECK(block->data == std::vector<std::uint32_t>{0x04030201});
  CHECK_FALSE(parse_block_reply(Bytes{0x06, 2, 0, 1, 1, 2, 3, 4}, true));
  CHECK(connected_swd(Bytes{0x02, 1}));
  CHECK_FALSE(connected_swd(Bytes{0x02, 0}));
  CHECK(tp::probes::cmsis_dap::parse_status_reply(Command::swj_clock, Bytes{0x11, 0}));
}

TEST_CASE("eko-collect arguments: shape from the ELF or flags, tracers as symbols or addresses") {
  using namespace tp::ekotrace;
  const Bytes b = make_elf(false, Endian::big);
  const auto elf = tp::elf::ElfFile::parse(b, "fw.elf");
  CHECK(resolve_shape(&elf, std::nullopt, std::nullopt).endian == Endian::big);
  CHECK_THROWS_AS(resolve_shape(&elf, 64U, std::nullopt), tp::Error);
  CHECK_THROWS_AS(resolve_shape(&elf, std::nullopt, Endian::little), tp::Error);
  CHECK(resolve_shape(nullptr, std::nullopt, std::nullopt).warnings.size() == 2);
  CHECK(resolve_shape(nullptr, 64U, Endian::big).word_size == 8);
  const auto tracers = resolve_tracers({"0x20001000", "TRACER_1"}, &elf);
  CHECK(tracers[0].reference == 0x20001000);
  CHECK(tracers[1].reference == 0x20000100);
  CHECK_THROWS_AS(resolve_tracers({"TRACER_1"}, nullptr), tp::Error);
  CHECK_THROWS_AS(resolve_tracers({"0xzz"}, nullptr), tp::Error);
  CHECK_THROWS_AS(resolve_tracers({"NOPE"}, &elf), tp::Error);
}
