#include "rtt/target_rtt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/number.hpp"
#include "core/quantity.hpp"

namespace tp::rtt {
namespace {

constexpr std::uint32_t scan_step = 4096;
constexpr std::uint32_t scan_piece = 256;  // after a refused read: how much is tried at a time
constexpr std::size_t max_name = 32;
static_assert(descriptor_read_offset == descriptor_write_offset + 4, "read_check_then_write reads WrOff before RdOff");

std::optional<ControlBlock> read_block(target::TargetMemory& memory, std::uint32_t address,
                                       const std::optional<MemoryRange>& ram, std::string& problem) {
  std::vector<std::uint8_t> header;
  try {
    header = memory.read(address, header_size);
  } catch (const target::MemoryError& e) {
    problem = fmt::format("0x{:08x} cannot be read: {}", address, e.what());
    return std::nullopt;
  }
  const auto counts = parse_header(header, problem);
  if (!counts) return std::nullopt;
  const std::size_t rest = descriptor_size * static_cast<std::size_t>(counts->up + counts->down);
  std::vector<std::uint8_t> descriptors = memory.read(address + header_size, rest);
  header.insert(header.end(), descriptors.begin(), descriptors.end());
  return parse_control_block(address, header, ram, problem);
}

// Reads `length` bytes at `at` into `window` (the readable bytes so far, contiguous from
// `window_start`); memory the target refuses is read again in small pieces, and a piece it
// still refuses ends the window (the id is searched in each window).
void read_readable(target::TargetMemory& memory, std::uint64_t at, std::uint64_t length,
                   std::vector<std::uint8_t>& window, std::uint64_t& window_start, std::set<std::uint32_t>& found) {
  const auto search = [&] {
    for (const std::size_t offset : find_id(window)) found.insert(static_cast<std::uint32_t>(window_start + offset));
  };
  try {
    const auto bytes = memory.read(at, static_cast<std::size_t>(length));
    window.insert(window.end(), bytes.begin(), bytes.end());
    return;
  } catch (const target::MemoryError&) {
  }
  for (std::uint64_t piece = at; piece < at + length; piece += scan_piece) {
    try {
      const auto bytes =
          memory.read(piece, static_cast<std::size_t>(std::min<std::uint64_t>(scan_piece, at + length - piece)));
      window.insert(window.end(), bytes.begin(), bytes.end());
    } catch (const target::MemoryError&) {
      search();
      window.clear();
      window_start = piece + scan_piece;
    }
  }
}

std::optional<ControlBlock> scan(target::TargetMemory& memory, const LocateSettings& settings, std::string& problem) {
  const MemoryRange range = *settings.scan;
  const std::uint64_t end = std::uint64_t{range.start} + range.size;
  std::set<std::uint32_t> found;
  std::vector<std::uint8_t> window;
  std::uint64_t window_start = range.start;
  for (std::uint64_t at = range.start; at < end; at += scan_step) {
    if (at != range.start && settings.between_reads) settings.between_reads();
    read_readable(memory, at, std::min<std::uint64_t>(scan_step, end - at), window, window_start, found);
    for (const std::size_t offset : find_id(window)) found.insert(static_cast<std::uint32_t>(window_start + offset));
    // Keep the tail an id could start in.
    const std::size_t keep = std::min(window.size(), control_block_id.size() - 1);
    window_start += window.size() - keep;
    window.erase(window.begin(), window.end() - static_cast<std::ptrdiff_t>(keep));
  }
  if (found.empty()) {
    problem = fmt::format(
        "no \"SEGGER RTT\" id in 0x{:08x}+{} (the target has not run SEGGER_RTT_Init yet, or the "
        "block is elsewhere: --elf, --address or --scan)",
        range.start, range.size);
    return std::nullopt;
  }
  std::vector<ControlBlock> valid;
  std::string last_problem;
  for (const std::uint32_t address : found) {
    if (auto block = read_block(memory, address, settings.ram, last_problem)) valid.push_back(std::move(*block));
  }
  if (valid.size() > 1) {
    std::string addresses;
    for (const auto& block : valid) addresses += fmt::format(" 0x{:08x}", block.address);
    throw Error(ExitCode::usage, fmt::format("{} valid RTT control blocks in 0x{:08x}+{}:{}: say which with --address "
                                             "(or --elf)",
                                             valid.size(), range.start, range.size, addresses));
  }
  if (valid.empty()) {
    problem = fmt::format("the id at 0x{:08x} is not a valid block yet: {}", *found.begin(), last_problem);
    return std::nullopt;
  }
  return std::move(valid.front());
}

}  // namespace

std::uint32_t parse_address(std::string_view text, std::string_view option) {
  const auto value = parse_c_number<std::uint64_t>(text);
  if (!value || *value > 0xFFFF'FFFFU) {
    throw Error(ExitCode::usage, fmt::format("{} '{}': a 32-bit number (0x20000000, 536870912)", option, text));
  }
  return static_cast<std::uint32_t>(*value);
}

MemoryRange parse_memory_range(std::string_view text, std::string_view option) {
  constexpr std::uint64_t address_space = std::uint64_t{1} << 32U;
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    throw Error(ExitCode::usage, fmt::format("{} '{}': START:SIZE, e.g. 0x20000000:64K", option, text));
  }
  const std::uint32_t start = parse_address(text.substr(0, colon), option);
  const std::string_view size_text = text.substr(colon + 1);
  std::uint64_t size = 0;
  if (size_text.starts_with("0x") || size_text.starts_with("0X")) {
    size = parse_c_number<std::uint64_t>(size_text).value_or(address_space + 1);
  } else {
    try {
      size = parse_byte_count(size_text, address_space);
    } catch (const Error& e) {
      throw Error(ExitCode::usage, fmt::format("{} '{}': {}", option, text, e.what()));
    }
  }
  if (size == 0 || size > address_space - start) {
    throw Error(ExitCode::usage,
                fmt::format("{} '{}': the range must be inside 4 GiB (START+SIZE at most 0x100000000) and not empty",
                            option, text));
  }
  return {start, size};
}

std::optional<ControlBlock> locate(target::TargetMemory& memory, const LocateSettings& settings, std::string& problem) {
  if (settings.address) {
    auto block = read_block(memory, *settings.address, settings.ram, problem);
    if (!block) problem = fmt::format("at 0x{:08x}: {}", *settings.address, problem);
    return block;
  }
  return scan(memory, settings, problem);
}

void read_names(target::TargetMemory& memory, ControlBlock& block) {
  for (auto* buffers : {&block.up, &block.down}) {
    for (Buffer& b : *buffers) {
      b.name.clear();
      if (b.name_pointer == 0) continue;
      try {
        const auto bytes = memory.read(b.name_pointer, max_name);
        for (const std::uint8_t c : bytes) {
          if (c == 0) break;
          b.name += static_cast<char>(c);
        }
      } catch (const target::MemoryError&) {
        b.name.clear();
      }
    }
  }
}

UpRead UpChannel::read(target::TargetMemory& memory, std::vector<std::uint8_t>& out, std::uint32_t most) {
  UpRead result;
  const auto words = memory.read(buffer_.descriptor, descriptor_size);
  Buffer now = buffer_;
  parse_descriptor(std::span(words).first<descriptor_size>(), now);
  if (now.buffer != buffer_.buffer || now.size != buffer_.size || now.write >= now.size || now.read >= now.size ||
      now.read != last_read_) {
    result.reinitialised = true;
    result.problem =
        now.read != last_read_ && now.buffer == buffer_.buffer && now.size == buffer_.size && now.read < now.size
            ? fmt::format("RdOff is {}, not the {} written last", now.read, last_read_)
            : fmt::format("the descriptor changed (buffer 0x{:08x} size {} WrOff {} RdOff {})", now.buffer, now.size,
                          now.write, now.read);
    return result;
  }
  buffer_.flags = now.flags;  // the target may change the mode (SEGGER_RTT_ConfigUpBuffer)
  const RingPieces waiting = waiting_bytes(now.read, now.write, now.size);
  result.fill = waiting.total();
  // NO_BLOCK_SKIP drops a whole write that does not fit, so a ring can lose data well short
  // of full: within an eighth of full counts there.
  const std::uint32_t margin = now.mode() == Mode::no_block_skip ? now.size / 8 : 0;
  result.full = waiting.total() + 1 + margin >= now.size;
  const std::uint32_t take = std::min(waiting.total(), most);
  result.left = waiting.total() - take;
  if (take == 0) return result;
  const RingPieces pieces{waiting.first_offset, std::min(waiting.first_length, take),
                          take - std::min(waiting.first_length, take)};
  // RdOff goes back with the ring's last read (one exchange on a probe), and only after it.
  const std::uint32_t read = (now.read + take) % now.size;
  const std::array<std::uint8_t, 4> word{static_cast<std::uint8_t>(read), static_cast<std::uint8_t>(read >> 8U),
                                         static_cast<std::uint8_t>(read >> 16U),
                                         static_cast<std::uint8_t>(read >> 24U)};
  const std::uint64_t read_offset_at = buffer_.descriptor + descriptor_read_offset;
  std::uint64_t last_piece = now.buffer + pieces.first_offset;
  std::uint32_t last_length = pieces.first_length;
  if (pieces.second_length != 0) {
    const auto first = memory.read(last_piece, pieces.first_length);
    out.insert(out.end(), first.begin(), first.end());
    last_piece = now.buffer;
    last_length = pieces.second_length;
  }
  if (memory.reads_while_running()) {
    // The core ran while the ring was read: it may have filled it (and dropped writes) since
    // the descriptor was read. WrOff just before RdOff goes back says so.
    const std::uint32_t write_now = memory.read_check_then_write(last_piece, last_length, read_offset_at, word, out);
    const std::uint32_t fill_now = waiting_bytes(now.read, write_now, now.size).total();
    result.fill = std::max(result.fill, fill_now);
    result.full = result.full || fill_now + 1 + margin >= now.size;
  } else {
    memory.read_then_write(last_piece, last_length, read_offset_at, word, out);  // halted: nothing moves
  }
  last_read_ = read;
  result.bytes = take;
  return result;
}

std::size_t DownChannel::write(target::TargetMemory& memory, std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return 0;
  const auto words = memory.read(buffer_.descriptor, descriptor_size);
  Buffer now = buffer_;
  parse_descriptor(std::span(words).first<descriptor_size>(), now);
  if (now.buffer != buffer_.buffer || now.size != buffer_.size || now.write >= now.size || now.read >= now.size) {
    throw Error(ExitCode::io_error,
                fmt::format("down buffer {} changed under us (the target reset or re-initialised RTT)", buffer_.index));
  }
  const RingPieces room = free_space(now.read, now.write, now.size);
  const std::uint32_t first = std::min<std::uint32_t>(room.first_length, static_cast<std::uint32_t>(bytes.size()));
  const std::uint32_t second =
      std::min<std::uint32_t>(room.second_length, static_cast<std::uint32_t>(bytes.size() - first));
  if (first + second == 0) return 0;
  memory.write(now.buffer + room.first_offset, bytes.first(first));
  if (second != 0) memory.write(now.buffer, bytes.subspan(first, second));
  const std::uint32_t write = (now.write + first + second) % now.size;
  const std::array<std::uint8_t, 4> word{static_cast<std::uint8_t>(write), static_cast<std::uint8_t>(write >> 8U),
                                         static_cast<std::uint8_t>(write >> 16U),
                                         static_cast<std::uint8_t>(write >> 24U)};
  memory.write(buffer_.descriptor + descriptor_write_offset, word);
  return first + second;
}

}  // namespace tp::rtt
