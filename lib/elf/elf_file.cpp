#include "elf/elf_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "core/byte_source.hpp"
#include "core/error.hpp"
#include "core/file_descriptor.hpp"

namespace tp::elf {
namespace {

constexpr std::uint32_t sht_progbits = 1;
constexpr std::uint32_t sht_symtab = 2;
constexpr std::uint64_t shf_alloc = 2;
constexpr std::uint32_t sht_dynsym = 11;
constexpr std::uint8_t stt_func = 2;
constexpr std::uint8_t stt_section = 3;
constexpr std::uint8_t stt_file = 4;

// Bounds-checked reads in the file's byte order.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> bytes, Endian endian, const std::string& name)
      : bytes_(bytes), endian_(endian), name_(name) {}
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  [[nodiscard]] std::uint64_t read(std::uint64_t offset, unsigned size, std::string_view what) const {
    if (offset > bytes_.size() || bytes_.size() - offset < size) {
      throw Error(ExitCode::bad_input, fmt::format("{}: truncated ELF file ({} at offset {} is past the end, {} bytes)",
                                                   name_, what, offset, bytes_.size()));
    }
    std::uint64_t value = 0;
    for (unsigned i = 0; i < size; ++i) {
      const unsigned shift = endian_ == Endian::little ? 8 * i : 8 * (size - 1 - i);
      value |= static_cast<std::uint64_t>(bytes_[offset + i]) << shift;
    }
    return value;
  }

  [[nodiscard]] bool holds(std::uint64_t offset, std::uint64_t size) const noexcept {
    return offset <= bytes_.size() && bytes_.size() - offset >= size;
  }

  // A NUL-terminated name inside the string table [table, table + table_size).
  [[nodiscard]] std::string string_at(std::uint64_t table, std::uint64_t table_size, std::uint64_t index) const {
    if (index >= table_size || table > bytes_.size() || bytes_.size() - table < table_size) return {};
    const auto* begin = bytes_.data() + table + index;
    const auto* limit = bytes_.data() + table + table_size;
    const auto* end = std::find(begin, limit, std::uint8_t{0});
    return {reinterpret_cast<const char*>(begin), static_cast<std::size_t>(end - begin)};
  }

 private:
  std::span<const std::uint8_t> bytes_;
  Endian endian_;
  const std::string& name_;
};

struct Section {
  std::uint32_t name = 0;  // index into the section name table
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t address = 0;
  std::uint32_t link = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t entry_size = 0;
};

Section read_section(const Reader& r, std::uint64_t at, bool is64) {
  Section s;
  s.name = static_cast<std::uint32_t>(r.read(at, 4, "section name"));
  s.type = static_cast<std::uint32_t>(r.read(at + 4, 4, "section type"));
  if (is64) {
    s.flags = r.read(at + 8, 8, "section flags");
    s.address = r.read(at + 16, 8, "section address");
    s.offset = r.read(at + 24, 8, "section offset");
    s.size = r.read(at + 32, 8, "section size");
    s.link = static_cast<std::uint32_t>(r.read(at + 40, 4, "section link"));
    s.entry_size = r.read(at + 56, 8, "section entry size");
  } else {
    s.flags = r.read(at + 8, 4, "section flags");
    s.address = r.read(at + 12, 4, "section address");
    s.offset = r.read(at + 16, 4, "section offset");
    s.size = r.read(at + 20, 4, "section size");
    s.link = static_cast<std::uint32_t>(r.read(at + 24, 4, "section link"));
    s.entry_size = r.read(at + 36, 4, "section entry size");
  }
  return s;
}

void read_symbols(const Reader& r, const std::vector<Section>& sections, const Section& table, bool is64,
                  std::vector<Symbol>& out) {
  const std::uint64_t entry = is64 ? 24 : 16;
  if (table.entry_size != entry || table.link >= sections.size()) return;
  const Section& strings = sections[table.link];
  if (!r.holds(strings.offset, strings.size)) {
    throw Error(ExitCode::bad_input,
                fmt::format("{}: the symbols' string table (offset {}, {} bytes) goes past the end of the file",
                            r.name(), strings.offset, strings.size));
  }
  const std::uint64_t count = table.size / entry;
  for (std::uint64_t i = 1; i < count; ++i) {  // entry 0 is the undefined symbol
    const std::uint64_t at = table.offset + i * entry;
    Symbol symbol;
    const std::uint64_t name_index = r.read(at, 4, "symbol name");
    std::uint8_t info = 0;
    if (is64) {
      info = static_cast<std::uint8_t>(r.read(at + 4, 1, "symbol info"));
      symbol.value = r.read(at + 8, 8, "symbol value");
      symbol.size = r.read(at + 16, 8, "symbol size");
    } else {
      symbol.value = r.read(at + 4, 4, "symbol value");
      symbol.size = r.read(at + 8, 4, "symbol size");
      info = static_cast<std::uint8_t>(r.read(at + 12, 1, "symbol info"));
    }
    symbol.type = info & 0x0fU;
    if (symbol.type == stt_section || symbol.type == stt_file) continue;
    symbol.name = r.string_at(strings.offset, strings.size, name_index);
    symbol.dynamic = table.type == sht_dynsym;
    if (!symbol.name.empty()) out.push_back(std::move(symbol));
  }
}

// The sections loaded into target memory, with their names and contents.
std::vector<LoadedSection> read_loaded(const Reader& r, std::span<const std::uint8_t> bytes,
                                       const std::vector<Section>& sections, std::uint64_t names_index,
                                       const std::string& file_name) {
  std::vector<LoadedSection> loaded;
  const Section* names = names_index < sections.size() ? &sections[names_index] : nullptr;
  for (const Section& section : sections) {
    if (section.type != sht_progbits || (section.flags & shf_alloc) == 0 || section.size == 0) continue;
    if (section.offset > bytes.size() || bytes.size() - section.offset < section.size) {
      throw Error(ExitCode::bad_input,
                  fmt::format("{}: truncated ELF file (a section's contents at offset {} are past the end, {} bytes)",
                              file_name, section.offset, bytes.size()));
    }
    LoadedSection out;
    if (names != nullptr) out.name = r.string_at(names->offset, names->size, section.name);
    out.address = section.address;
    const auto begin = bytes.begin() + static_cast<std::ptrdiff_t>(section.offset);
    out.bytes.assign(begin, begin + static_cast<std::ptrdiff_t>(section.size));
    loaded.push_back(std::move(out));
  }
  return loaded;
}

}  // namespace

ElfFile ElfFile::parse(std::span<const std::uint8_t> bytes, std::string name) {
  ElfFile file;
  file.name_ = std::move(name);
  if (bytes.size() < 16 || bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' || bytes[3] != 'F') {
    throw Error(ExitCode::bad_input, fmt::format("{}: not an ELF file (no \\x7fELF magic)", file.name_));
  }
  if (bytes[4] != 1 && bytes[4] != 2) {
    throw Error(ExitCode::bad_input, fmt::format("{}: unknown ELF class {}", file.name_, bytes[4]));
  }
  if (bytes[5] != 1 && bytes[5] != 2) {
    throw Error(ExitCode::bad_input, fmt::format("{}: unknown ELF data encoding {}", file.name_, bytes[5]));
  }
  const bool is64 = bytes[4] == 2;
  file.word_size_ = is64 ? 8 : 4;
  file.endian_ = bytes[5] == 1 ? Endian::little : Endian::big;
  const Reader r(bytes, file.endian_, file.name_);
  file.machine_ = static_cast<std::uint16_t>(r.read(18, 2, "e_machine"));
  const std::uint64_t section_table = r.read(is64 ? 40 : 32, is64 ? 8 : 4, "e_shoff");
  const std::uint64_t section_size = r.read(is64 ? 58 : 46, 2, "e_shentsize");
  const std::uint64_t section_count = r.read(is64 ? 60 : 48, 2, "e_shnum");
  if (section_table == 0 || section_count == 0) return file;  // stripped of sections: no symbols
  if (section_size < (is64 ? 64U : 40U)) {
    throw Error(ExitCode::bad_input,
                fmt::format("{}: section headers of {} bytes are too small", file.name_, section_size));
  }
  std::vector<Section> sections;
  sections.reserve(section_count);
  for (std::uint64_t i = 0; i < section_count; ++i) {
    sections.push_back(read_section(r, section_table + i * section_size, is64));
  }
  for (const auto& section : sections) {
    if (section.type == sht_symtab) read_symbols(r, sections, section, is64, file.symbols_);
  }
  for (const auto& section : sections) {
    if (section.type == sht_dynsym) read_symbols(r, sections, section, is64, file.symbols_);
  }
  file.loaded_ = read_loaded(r, bytes, sections, r.read(is64 ? 62 : 50, 2, "e_shstrndx"), file.name_);
  return file;
}

std::optional<std::uint64_t> ElfFile::read_word(std::uint64_t address, unsigned size) const noexcept {
  if (size == 0 || size > 8) return std::nullopt;
  for (const LoadedSection& section : loaded_) {
    if (address < section.address || address - section.address > section.bytes.size() ||
        section.bytes.size() - (address - section.address) < size) {
      continue;
    }
    const std::size_t at = address - section.address;
    std::uint64_t value = 0;
    for (unsigned i = 0; i < size; ++i) {
      const unsigned shift = endian_ == Endian::little ? 8 * i : 8 * (size - 1 - i);
      value |= static_cast<std::uint64_t>(section.bytes[at + i]) << shift;
    }
    return value;
  }
  return std::nullopt;
}

ElfFile ElfFile::load(const std::string& path) {
  const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));  // a FIFO must not hold the open
  if (!file.valid()) throw_system_error(errno, "cannot open " + path);
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) throw_system_error(errno, "cannot read " + path);
  if (!S_ISREG(st.st_mode))
    throw Error(ExitCode::bad_input, fmt::format("{}: not a regular file (an ELF is one)", path));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_file_size) {
    throw Error(ExitCode::bad_input, fmt::format("{}: {} bytes is more than an ELF file may have here ({} bytes)", path,
                                                 size, max_file_size));
  }
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  const std::size_t got = read_at(file.get(), reinterpret_cast<char*>(bytes.data()), bytes.size(), 0);
  bytes.resize(got);
  return parse(bytes, path);
}

std::string_view ElfFile::machine_name() const noexcept {
  switch (machine_) {
    case 3:
      return "x86";
    case 8:
      return "MIPS";
    case 20:
      return "PowerPC";
    case 40:
      return "ARM";
    case 62:
      return "x86-64";
    case 183:
      return "AArch64";
    case 243:
      return "RISC-V";
    default:
      return "unknown";
  }
}

std::optional<Symbol> ElfFile::find(std::string_view symbol) const {
  for (const auto& s : symbols_) {
    if (s.name == symbol && s.type != stt_func) return s;
  }
  return std::nullopt;
}

}  // namespace tp::elf
