// RTT: the control block as SEGGER_RTT.h lays it out, ring arithmetic, the scan, the up and
// down channels against a memory image, the Text lines of rtt-capture --format ndjson, and
// rtt-capture's polling against a scripted target (stalls, halted windows, a refused RdOff).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/out_buffer.hpp"
#include "rtt/capture_command.hpp"
#include "rtt/control_block.hpp"
#include "rtt/target_rtt.hpp"
#include "rtt/text_lines.hpp"

using namespace tp::rtt;

namespace {

// Target RAM as a byte image at `base`; reads inside `hole` are refused as a bus fault.
class MemoryImage final : public tp::target::TargetMemory {
 public:
  MemoryImage(std::uint32_t base, std::size_t size) : base_(base), bytes_(size) {}
  void halt() override {}
  void resume() override {}
  [[nodiscard]] bool halted() const noexcept override { return false; }
  [[nodiscard]] bool reads_while_running() const noexcept override { return true; }
  std::vector<std::uint8_t> read(std::uint64_t address, std::size_t length) override {
    check(address, length);
    ++reads;
    return {bytes_.begin() + static_cast<std::ptrdiff_t>(address - base_),
            bytes_.begin() + static_cast<std::ptrdiff_t>(address - base_ + length)};
  }
  void write(std::uint64_t address, std::span<const std::uint8_t> data) override {
    check(address, data.size());
    std::memcpy(bytes_.data() + (address - base_), data.data(), data.size());
  }
  void release() noexcept override {}
  [[nodiscard]] std::uint64_t round_trips() const noexcept override { return reads; }
  [[nodiscard]] std::string description() const override { return "image"; }

  void put32(std::uint32_t address, std::uint32_t value) {
    for (unsigned i = 0; i < 4; ++i) bytes_[address - base_ + i] = static_cast<std::uint8_t>(value >> (8 * i));
  }
  [[nodiscard]] std::uint32_t get32(std::uint32_t address) const { return load_u32(bytes_.data() + (address - base_)); }
  void put(std::uint32_t address, std::string_view text) {
    std::memcpy(bytes_.data() + (address - base_), text.data(), text.size());
  }

  std::uint64_t hole_start = 0;
  std::uint64_t hole_end = 0;
  std::uint64_t reads = 0;

 private:
  void check(std::uint64_t address, std::size_t length) const {
    if (address < base_ || address + length > base_ + bytes_.size() ||
        (address < hole_end && address + length > hole_start)) {
      throw tp::target::MemoryError(address, length, "bus fault");
    }
  }
  std::uint64_t base_;
  std::vector<std::uint8_t> bytes_;
};

constexpr std::uint32_t ram = 0x2000'0000;

// A block as SEGGER_RTT_Init leaves it: `up` up and `down` down buffers, up 0 "Terminal"
// of `size` bytes at ram+0x1000, down 0 of 16 bytes at ram+0x1800; names at ram+0x1900.
std::uint32_t write_block(MemoryImage& m, std::uint32_t at, std::uint32_t size = 64, int up = 3, int down = 3) {
  m.put(at, std::string_view("SEGGER RTT\0\0\0\0\0\0", 16));
  m.put32(at + 16, static_cast<std::uint32_t>(up));
  m.put32(at + 20, static_cast<std::uint32_t>(down));
  m.put(ram + 0x1900, std::string_view("Terminal\0", 9));
  const std::uint32_t up0 = at + 24;
  m.put32(up0, ram + 0x1900);
  m.put32(up0 + 4, ram + 0x1000);
  m.put32(up0 + 8, size);
  const std::uint32_t down0 = at + 24 + 24 * static_cast<std::uint32_t>(up);
  m.put32(down0, ram + 0x1900);
  m.put32(down0 + 4, ram + 0x1800);
  m.put32(down0 + 8, 16);
  return at;
}

// The target side of an up buffer: SEGGER_RTT_WriteNoLock's effect (bytes, then WrOff).
void target_writes(MemoryImage& m, std::uint32_t descriptor, std::string_view text) {
  const std::uint32_t buffer = m.get32(descriptor + 4);
  const std::uint32_t size = m.get32(descriptor + 8);
  std::uint32_t write = m.get32(descriptor + 12);
  for (const char c : text) {
    m.put(buffer + write, std::string_view(&c, 1));
    write = (write + 1) % size;
  }
  m.put32(descriptor + 12, write);
}

std::string as_text(const std::vector<std::uint8_t>& bytes) {
  return {bytes.begin(), bytes.end()};
}

}  // namespace

TEST_CASE("RTT control block: the header and every descriptor checked") {
  MemoryImage m(ram, 0x2000);
  const std::uint32_t at = write_block(m, ram + 0x400);
  std::string problem;
  auto block = parse_control_block(at, m.read(at, 24 + 24 * 6), std::nullopt, problem);
  REQUIRE_MESSAGE(block, problem);
  CHECK(block->up.size() == 3);
  CHECK(block->down.size() == 3);
  CHECK(block->up[0].configured());
  CHECK(block->up[0].descriptor == at + 24);
  CHECK(block->up[0].size == 64);
  CHECK(!block->up[1].configured());
  CHECK(block->down[0].descriptor == at + 24 + 24 * 3);
  CHECK(block->size() == 24 + 24 * 6);
  // Inside --ram, or not.
  CHECK(parse_control_block(at, m.read(at, 168), MemoryRange{ram, 0x2000}, problem));
  CHECK(!parse_control_block(at, m.read(at, 168), MemoryRange{ram, 0x1000}, problem));
  CHECK(problem.find("outside the RAM") != std::string::npos);
  // What SEGGER_RTT.h says must hold.
  m.put32(at + 24 + 20, 0x0100'0000);  // Flags[31:24]
  CHECK(!parse_control_block(at, m.read(at, 168), std::nullopt, problem));
  CHECK(problem.find("Flags[31:24]") != std::string::npos);
  m.put32(at + 24 + 20, 2);
  m.put32(at + 24 + 12, 64);  // WrOff == size
  CHECK(!parse_control_block(at, m.read(at, 168), std::nullopt, problem));
  CHECK(problem.find("not below its size") != std::string::npos);
  m.put32(at + 24 + 12, 0);
  m.put32(at + 16, 0);  // no up buffers: being initialised
  CHECK(!parse_control_block(at, m.read(at, 168), std::nullopt, problem));
  CHECK(problem.find("implausible buffer counts") != std::string::npos);
  m.put(at, "SEGGER RTX");
  CHECK(!parse_header(m.read(at, 24), problem));
  CHECK(problem.find("SEGGER_RTT_Init") != std::string::npos);
  CHECK(!parse_header(m.read(at, 10), problem));  // cut short
}

TEST_CASE("RTT rings: bytes waiting and room, one byte always free") {
  CHECK(waiting_bytes(0, 0, 8).total() == 0);
  const RingPieces straight = waiting_bytes(2, 6, 8);
  CHECK((straight.first_offset == 2 && straight.first_length == 4 && straight.second_length == 0));
  const RingPieces wrapped = waiting_bytes(6, 3, 8);
  CHECK((wrapped.first_offset == 6 && wrapped.first_length == 2 && wrapped.second_length == 3));
  CHECK(waiting_bytes(1, 0, 8).total() == 7);  // full
  CHECK(free_space(0, 0, 8).total() == 7);
  CHECK(free_space(1, 0, 8).total() == 0);
  const RingPieces room = free_space(3, 5, 8);
  CHECK((room.first_offset == 5 && room.first_length == 3 && room.second_length == 2));
  CHECK(free_space(0, 5, 8).total() == 2);     // to the end, minus the byte before RdOff
  CHECK(waiting_bytes(9, 0, 8).total() == 0);  // offsets past the size: nothing
}

TEST_CASE("RTT scan: the id found across read boundaries and after a refused hole; two blocks are an error") {
  MemoryImage m(ram, 0x4000);
  m.hole_start = ram + 0x200;  // unreadable memory before the block
  m.hole_end = ram + 0x300;
  const std::uint32_t at = write_block(m, ram + 0x1000 - 4);  // the id across the first 4 KiB read's end
  m.put32(at + 24 + 4, ram + 0x2000);                         // up 0's ring after the block, not over it
  LocateSettings where;
  where.scan = MemoryRange{ram, 0x4000};
  std::string problem;
  auto block = locate(m, where, problem);
  REQUIRE_MESSAGE(block, problem);
  CHECK(block->address == at);
  read_names(m, *block);
  CHECK(block->up[0].name == "Terminal");
  // A stale copy of the id elsewhere that is not a block is passed over.
  m.put(ram + 0x3000, "SEGGER RTT");
  block = locate(m, where, problem);
  REQUIRE(block);
  CHECK(block->address == at);
  // A second valid block: say which.
  write_block(m, ram + 0x3400);
  CHECK_THROWS_AS((void)locate(m, where, problem), tp::Error);
  // No id at all.
  MemoryImage empty(ram, 0x1000);
  where.scan = MemoryRange{ram, 0x1000};
  CHECK(!locate(empty, where, problem));
  CHECK(problem.find("no \"SEGGER RTT\" id") != std::string::npos);
}

TEST_CASE("RTT up channel: reads to WrOff with wrap-around, gives RdOff back, sees a re-initialised block") {
  MemoryImage m(ram, 0x2000);
  const std::uint32_t at = write_block(m, ram + 0x400, 16);
  std::string problem;
  const auto block = parse_control_block(at, m.read(at, 168), std::nullopt, problem);
  REQUIRE(block);
  UpChannel up(block->up[0]);
  const std::uint32_t descriptor = block->up[0].descriptor;
  std::vector<std::uint8_t> out;
  target_writes(m, descriptor, "hello, ");
  UpRead r = up.read(m, out);
  CHECK(r.bytes == 7);
  CHECK(m.get32(descriptor + 16) == 7);
  target_writes(m, descriptor, "world!!!!\n");  // wraps: 10 more bytes in a 16-byte ring
  const std::uint64_t reads_before = m.reads;
  r = up.read(m, out);
  CHECK(r.bytes == 10);
  // The descriptor, the two pieces (never per word), and WrOff again before RdOff goes back
  // (the image reads while the core runs; a probe does that in the last piece's command).
  CHECK(m.reads - reads_before == 4);
  CHECK(as_text(out) == "hello, world!!!!\n");
  CHECK(m.get32(descriptor + 16) == 1);
  // Full: 15 of 16 bytes waiting.
  target_writes(m, descriptor, "0123456789abcde");
  out.clear();
  r = up.read(m, out);
  CHECK(r.full);
  CHECK(r.fill == 15);
  // NO_BLOCK_SKIP (the default) drops a whole write that does not fit: within an eighth of
  // full counts; BLOCK_IF_FIFO_FULL only when full.
  target_writes(m, descriptor, "0123456789abcd");
  CHECK(up.read(m, out).full);
  m.put32(descriptor + 20, 2);
  target_writes(m, descriptor, "0123456789abcd");
  CHECK(!up.read(m, out).full);
  // The target started again: RdOff is not what we wrote.
  m.put32(descriptor + 12, 3);
  m.put32(descriptor + 16, 0);
  r = up.read(m, out);
  CHECK(r.reinitialised);
  CHECK(r.problem == "RdOff is 0, not the 12 written last");
}

TEST_CASE("RTT down channel: writes up to the target's RdOff, wrapping, then WrOff") {
  MemoryImage m(ram, 0x2000);
  const std::uint32_t at = write_block(m, ram + 0x400);
  std::string problem;
  const auto block = parse_control_block(at, m.read(at, 168), std::nullopt, problem);
  REQUIRE(block);
  DownChannel down(block->down[0]);
  const std::uint32_t descriptor = block->down[0].descriptor;
  const std::string text = "0123456789abcdefXYZ";
  const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  CHECK(down.write(m, bytes) == 15);  // a 16-byte ring holds 15
  CHECK(m.get32(descriptor + 12) == 15);
  CHECK(down.write(m, bytes) == 0);  // full until the target reads
  m.put32(descriptor + 16, 10);      // the target read 10
  CHECK(down.write(m, bytes.first(12)) == 10);
  CHECK(m.get32(descriptor + 12) == 9);  // wrapped: 15 + 10 - 16
  const auto ring = m.read(ram + 0x1800, 16);
  CHECK(std::string(ring.begin(), ring.begin() + 9) == "123456789");
  CHECK(static_cast<char>(ring[15]) == '0');
}

TEST_CASE("rtt-capture's Text lines: per line, \\r\\n, split at the maximum, partial lines by age") {
  tp::OutBuffer out;
  TextLines lines(3, 8);
  const std::string input = "one\r\ntwo\nlonger than eight\npart";
  lines.add(std::span(reinterpret_cast<const std::uint8_t*>(input.data()), input.size()), 100, out);
  const std::string written(out.view());
  CHECK(
      written.find(
          R"({"timestamp":100,"port":3,"event":{"kind":"Text","data":{"message":"one"}},"source":"rtt","clock":"us"})") !=
      std::string::npos);
  CHECK(written.find(R"("message":"two")") != std::string::npos);
  CHECK(written.find(R"("message":"longer t")") != std::string::npos);
  CHECK(written.find(R"("message":"han eigh")") != std::string::npos);
  CHECK(written.find(R"("message":"part")") == std::string::npos);
  lines.flush_stale(100, out);  // began at 100: not older than 100
  CHECK(std::string(out.view()).find(R"("message":"part")") == std::string::npos);
  lines.flush_stale(101, out);
  CHECK(std::string(out.view()).find(R"("message":"part")") != std::string::npos);
  CHECK(lines.lines() == 6);
}

TEST_CASE("RTT control block: a ring over the block itself is refused (its bytes are not the target's output)") {
  MemoryImage m(ram, 0x2000);
  const std::uint32_t at = write_block(m, ram + 0x400);
  std::string problem;
  REQUIRE(parse_control_block(at, m.read(at, 168), std::nullopt, problem));
  // up 0's ring at the block, inside it, and ending in its first byte; then just after it.
  for (const auto& ring : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
           {at, 64}, {at + 100, 16}, {at - 16, 17}, {at + 167, 2}, {at - 0x100, 0x1000}}) {
    const std::uint32_t buffer = ring.first;  // named variables: clang 14 cannot capture a binding
    const std::uint32_t size = ring.second;
    m.put32(at + 24 + 4, buffer);
    m.put32(at + 24 + 8, size);
    CHECK_MESSAGE(!parse_control_block(at, m.read(at, 168), std::nullopt, problem), buffer, "+", size);
    CHECK(problem.find("overlaps the control block (0x20000400+168)") != std::string::npos);
  }
  m.put32(at + 24 + 4, at + 168);  // right after the block: fine
  m.put32(at + 24 + 8, 64);
  CHECK(parse_control_block(at, m.read(at, 168), std::nullopt, problem));
  m.put32(at + 24 + 4, at - 16);  // right before it: fine
  m.put32(at + 24 + 8, 16);
  CHECK(parse_control_block(at, m.read(at, 168), std::nullopt, problem));
  // A down ring over it too.
  m.put32(at + 24 + 24 * 3 + 4, at + 24);
  CHECK(!parse_control_block(at, m.read(at, 168), std::nullopt, problem));
  CHECK(problem.find("down buffer 0: ") != std::string::npos);
}

namespace {

// A target rtt-capture polls: RAM as a byte image, firmware that runs at each halt (a GDB
// server's target) or at each read of up buffer 0's descriptor (a probe's, read running), and
// what the debugger saw: reads outside a halt, the bytes of the largest halted window, halted
// at the end. A write to `refuse_write_at` is refused as a GDB server's E01.
struct Script {
  explicit Script(bool halting_) : halting(halting_) {}
  MemoryImage image{ram, 0x20'0000};
  bool halting;
  std::function<void(MemoryImage&)> firmware;
  std::uint64_t refuse_write_at = 0;
  bool halted = false;
  std::uint64_t window_bytes = 0;
  std::uint64_t largest_window = 0;
  std::uint64_t reads_running = 0;
  std::uint64_t halts = 0;
  bool released = false;
};

class ScriptedTarget final : public tp::target::TargetMemory {
 public:
  explicit ScriptedTarget(Script& s) : s_(s) {}
  void halt() override {
    if (s_.halted) return;
    s_.halted = true;
    ++s_.halts;
    s_.window_bytes = 0;
    if (s_.firmware && s_.halting) s_.firmware(s_.image);
  }
  void resume() override {
    s_.largest_window = std::max(s_.largest_window, s_.window_bytes);
    s_.halted = false;
  }
  [[nodiscard]] bool halted() const noexcept override { return s_.halted; }
  [[nodiscard]] bool reads_while_running() const noexcept override { return !s_.halting; }
  std::vector<std::uint8_t> read(std::uint64_t address, std::size_t length) override {
    if (s_.halting && !s_.halted) ++s_.reads_running;
    if (!s_.halting && s_.firmware && address == up0_descriptor) s_.firmware(s_.image);
    s_.window_bytes += length;
    return s_.image.read(address, length);
  }
  void write(std::uint64_t address, std::span<const std::uint8_t> bytes) override {
    if (s_.halting && !s_.halted) ++s_.reads_running;
    if (address == s_.refuse_write_at) throw tp::target::MemoryError(address, bytes.size(), "GDB server: E01");
    s_.image.write(address, bytes);
  }
  void release() noexcept override {
    resume();
    s_.released = true;
  }
  [[nodiscard]] std::uint64_t round_trips() const noexcept override { return 0; }
  [[nodiscard]] std::string description() const override { return "scripted target"; }

  static constexpr std::uint32_t block_at = ram + 0x400;
  static constexpr std::uint32_t up0_descriptor = block_at + 24;

 private:
  Script& s_;
};

// stderr (the tool's diagnostics) into a string while it lives.
class StderrCapture {
 public:
  StderrCapture() : path_(std::filesystem::temp_directory_path() / ("rtt-stderr-" + std::to_string(::getpid()))) {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  ~StderrCapture() {
    restore();
    std::filesystem::remove(path_);
  }
  std::string text() {
    restore();
    std::ifstream in(path_);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
  }
  std::filesystem::path path_;
  int saved_ = -1;
};

struct CaptureRun {
  tp::ExitCode code = tp::ExitCode::ok;
  std::string out;
  std::string err;
};

// rtt-capture on channel 0 of the scripted target, as Text records, until 100 ms without data
// (`adjust` changes the options first).
CaptureRun run_capture(Script& script, std::uint32_t ring_size, std::uint32_t mode,
                       const std::function<void(CaptureOptions&)>& adjust = {}) {
  write_block(script.image, ScriptedTarget::block_at, ring_size);
  script.image.put32(ScriptedTarget::up0_descriptor + 20, mode);
  CaptureOptions o;
  o.address = "0x20000400";
  o.format = "ndjson";
  o.max_line = 1 << 20;
  o.idle_exit = "100ms";
  o.duration = "60s";  // deadline: a broken capture fails instead of hanging
  o.stats = true;
  if (adjust) adjust(o);
  const auto output = std::filesystem::temp_directory_path() / ("rtt-capture-" + std::to_string(::getpid()));
  CaptureRun run;
  StderrCapture err;
  try {
    run.code = capture(
        o, [&] { return std::make_unique<ScriptedTarget>(script); }, output.string(), false,
        tp::Logger("rtt-capture", tp::Verbosity::normal, tp::LogFormat::text));
  } catch (const tp::Error& e) {
    run.code = e.code();
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  run.err = err.text();
  std::ifstream in(output);
  std::stringstream all;
  all << in.rdbuf();
  run.out = all.str();
  std::filesystem::remove(output);
  return run;
}

// The firmware's side of up buffer 0: writes `text` from `sent` on, as much as the ring takes
// (BLOCK_IF_FIFO_FULL waits for room: what does not fit now goes later) or, with `whole`, only
// whole 9-byte lines (NO_BLOCK_SKIP drops a line that does not fit).
void fill_ring(MemoryImage& m, const std::string& text, std::size_t& sent, bool whole_lines, std::size_t& dropped) {
  const std::uint32_t d = ScriptedTarget::up0_descriptor;
  const std::uint32_t room = free_space(m.get32(d + 16), m.get32(d + 12), m.get32(d + 8)).total();
  std::size_t take = std::min<std::size_t>(room, text.size() - sent);
  if (whole_lines && take < 9 && sent < text.size()) {
    ++dropped;
    sent += 9;
    return;
  }
  if (whole_lines) take -= take % 9;
  target_writes(m, d, std::string_view(text).substr(sent, take));
  sent += take;
}

std::string lines_text(std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += fmt::format("line {:03}\n", i % 1000);
  return text;
}

// The Text messages, each with its newline back.
std::string messages_of(const std::string& ndjson) {
  std::string out;
  std::istringstream in(ndjson);
  const std::string key = R"("message":")";
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(key);
    if (at == std::string::npos) continue;
    out += line.substr(at + key.size(), line.find('"', at + key.size()) - at - key.size()) + "\n";
  }
  return out;
}

std::size_t count_of(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("rtt-capture: a BLOCK_IF_FIFO_FULL ring found full is a stall (counted, said), never an Overflow record") {
  for (const bool halting : {false, true}) {
    Script script(halting);
    const std::string text = lines_text(300);
    std::size_t sent = 0;
    std::size_t dropped = 0;
    script.firmware = [&](MemoryImage& m) { fill_ring(m, text, sent, false, dropped); };
    const CaptureRun run = run_capture(script, 64, 2);
    CAPTURE(run.err);
    CHECK(run.code == tp::ExitCode::ok);
    CHECK(messages_of(run.out) == text);  // lossless: every line
    CHECK(count_of(run.out, R"("kind":"Overflow")") == 0);
    CHECK(run.err.find("down; 0 reads found a ring full") != std::string::npos);
    CHECK(run.err.find(" stalls (a BLOCK_IF_FIFO_FULL ring full") != std::string::npos);
    CHECK(run.err.find("nothing lost, but it stalled") != std::string::npos);
    CHECK(count_of(run.err, "buffer full at read") <= 10);  // bounded warnings
    CHECK(script.released);
  }
}

TEST_CASE("rtt-capture: a NO_BLOCK_SKIP ring found full is an Overflow record (writes were dropped)") {
  Script script(false);
  const std::string text = lines_text(300);
  std::size_t sent = 0;
  std::size_t dropped = 0;
  script.firmware = [&](MemoryImage& m) {
    for (int i = 0; i < 3; ++i) fill_ring(m, text, sent, true, dropped);  // faster than it is read
  };
  const CaptureRun run = run_capture(script, 64, 0);
  CAPTURE(run.err);
  CHECK(run.code == tp::ExitCode::ok);
  REQUIRE(dropped > 0);
  CHECK(count_of(run.out, R"("kind":"Overflow")") > 0);
  CHECK(run.err.find("the target may have dropped writes") != std::string::npos);
  CHECK(run.err.find(" 0 stalls") != std::string::npos);
}

TEST_CASE("rtt-capture through a GDB server: a halted window reads at most 64 KiB; the rest in the next polls") {
  Script script(true);
  const std::string text = lines_text(100'000);  // 900 kB waiting at once in a 1 MiB ring
  bool written = false;
  script.firmware = [&](MemoryImage& m) {
    if (!written) target_writes(m, ScriptedTarget::up0_descriptor, text);
    written = true;
  };
  const CaptureRun run = run_capture(script, 1U << 20U, 2);
  CAPTURE(run.err.substr(0, 2000));
  CHECK(run.code == tp::ExitCode::ok);
  CHECK(messages_of(run.out) == text);
  CHECK(script.reads_running == 0);
  // 64 KiB of ring, the descriptors and names read around them.
  CHECK(script.largest_window <= 64 * 1024 + 1024);
  CHECK(script.halts >= text.size() / (64 * 1024));
  CHECK(!script.halted);
}

TEST_CASE("rtt-capture: an RdOff write refused (E01) ends it (exit 6) with the bytes of that read written out") {
  Script script(true);
  const std::string text = lines_text(5);
  int polls = 0;
  script.firmware = [&](MemoryImage& m) {
    if (++polls == 3) target_writes(m, ScriptedTarget::up0_descriptor, text);
  };
  script.refuse_write_at = ScriptedTarget::up0_descriptor + 16;
  const CaptureRun run = run_capture(script, 256, 2);
  CHECK(run.code == tp::ExitCode::bad_input);
  CHECK(run.err.find("E01") != std::string::npos);
  CHECK(messages_of(run.out) == text);
  CHECK(script.released);
  CHECK(!script.halted);
}

TEST_CASE("rtt-capture's START:SIZE: 0:4G is the whole 32-bit space; past 2^32 refused, never wrapped to 0") {
  const MemoryRange all = parse_memory_range("0:4G", "--scan");
  CHECK(all.start == 0);
  CHECK(all.size == std::uint64_t{1} << 32U);
  CHECK(all.holds(0xFFFF'FFF0U, 16));
  CHECK(parse_memory_range("0x20000000:64K", "--scan").size == 65536);
  CHECK(parse_memory_range("0x20000000:0x10000", "--scan").size == 65536);
  CHECK(parse_memory_range("0x80000000:2G", "--scan").size == std::uint64_t{1} << 31U);
  CHECK(parse_memory_range("0:4294967296", "--scan").size == std::uint64_t{1} << 32U);
  for (const std::string_view wrong :
       {"0x1000:4G", "0:5G", "0:4294967297", "0:0x100000001", "0x80000000:0x80000001", "0:18446744073709551616",
        "0:16777216G", "0:0", "0x20000000", "0x100000000:1K"}) {
    CHECK_THROWS_AS_MESSAGE((void)parse_memory_range(wrong, "--scan"), tp::Error, wrong);
  }
  CHECK(parse_address("0xFFFFFFFF", "--address") == 0xFFFF'FFFFU);
}

TEST_CASE("rtt-capture through a GDB server: a scan lets the target run between its 4 KiB reads") {
  Script script(true);
  const CaptureRun run = run_capture(script, 64, 2, [](CaptureOptions& o) {
    o.address.clear();
    o.scan = "0x20000000:1M";
    o.list = true;
  });
  CHECK(run.code == tp::ExitCode::ok);
  CHECK(run.out.find("RTT control block at 0x20000400") != std::string::npos);
  CHECK(script.reads_running == 0);
  CHECK(script.halts >= 256);  // a window per 4 KiB read
  // A 4 KiB read, and at the end the block and its names.
  CHECK(script.largest_window <= 4096 + 1024);
  CHECK(!script.halted);
}

TEST_CASE("rtt-capture: a block that changes under it to a ring over itself is found again and refused, never read") {
  Script script(true);
  int polls = 0;
  script.firmware = [&](MemoryImage& m) {
    if (++polls == 3) target_writes(m, ScriptedTarget::up0_descriptor, "before\n");
    if (polls == 5) m.put32(ScriptedTarget::up0_descriptor + 4, ScriptedTarget::block_at);  // the ring: the block
  };
  const CaptureRun run = run_capture(script, 64, 2, [](CaptureOptions& o) { o.wait = "300ms"; });
  CAPTURE(run.err);
  CHECK(run.code == tp::ExitCode::not_found);
  CHECK(run.err.find("initialised again") != std::string::npos);
  CHECK(run.err.find("overlaps the control block") != std::string::npos);
  CHECK(messages_of(run.out) == "before\n");  // the block's own bytes never became Text
  CHECK(!script.halted);
}
