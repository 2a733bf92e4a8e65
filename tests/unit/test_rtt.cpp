// RTT: the control block as SEGGER_RTT.h lays it out, ring arithmetic, the scan, the up and
// down channels against a memory image, the Text lines of rtt-capture --format ndjson.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/out_buffer.hpp"
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
  CHECK(m.reads - reads_before == 3);  // the descriptor, then the two pieces: never per word
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
