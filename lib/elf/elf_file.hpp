// A reader for the parts of an ELF file the tools need: the class (word size), the data
// encoding (endianness), the machine, the symbols of .symtab and .dynsym, and the contents
// of the sections loaded into target memory, by address (System V ABI, "ELF Header",
// "Sections" and "Symbol Table"). Every offset is bounds-checked: a
// truncated or hostile file gives an Error(bad_input), never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tp::elf {

enum class Endian : std::uint8_t { little, big };

struct Symbol {
  std::string name;
  std::uint64_t value = 0;
  std::uint64_t size = 0;
  std::uint8_t type = 0;  // STT_OBJECT = 1, STT_FUNC = 2, ...
  bool dynamic = false;   // from .dynsym
};

// A section that occupies target memory with contents from the file (SHF_ALLOC, PROGBITS).
struct LoadedSection {
  std::string name;
  std::uint64_t address = 0;
  std::vector<std::uint8_t> bytes;
};

class ElfFile {
 public:
  // `name` is used in error messages. Throws Error(bad_input).
  static ElfFile parse(std::span<const std::uint8_t> bytes, std::string name);
  // Throws Error(not_found / permission_denied) when the file cannot be read.
  // Reads a regular file of at most max_file_size bytes (a device, a FIFO or a larger file
  // is Error(bad_input), before anything is read of it).
  static ElfFile load(const std::string& path);
  static constexpr std::uint64_t max_file_size = std::uint64_t{1} << 30U;

  [[nodiscard]] unsigned word_size() const noexcept { return word_size_; }  // 4 (ELF32) or 8 (ELF64)
  [[nodiscard]] Endian endian() const noexcept { return endian_; }
  [[nodiscard]] std::uint16_t machine() const noexcept { return machine_; }
  [[nodiscard]] std::string_view machine_name() const noexcept;
  [[nodiscard]] const std::vector<Symbol>& symbols() const noexcept { return symbols_; }
  [[nodiscard]] const std::vector<LoadedSection>& loaded_sections() const noexcept { return loaded_; }
  // A word of `size` bytes (1-8) at a target address, in the file's byte order; nothing when
  // no loaded section holds all of it.
  [[nodiscard]] std::optional<std::uint64_t> read_word(std::uint64_t address, unsigned size) const noexcept;
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  // A data or untyped symbol with this name (.symtab first, then .dynsym).
  [[nodiscard]] std::optional<Symbol> find(std::string_view symbol) const;

 private:
  std::string name_;
  unsigned word_size_ = 4;
  Endian endian_ = Endian::little;
  std::uint16_t machine_ = 0;
  std::vector<Symbol> symbols_;
  std::vector<LoadedSection> loaded_;
};

}  // namespace tp::elf
