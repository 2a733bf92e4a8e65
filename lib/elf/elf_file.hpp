// A reader for the parts of an ELF file eko-collect needs: the class (word size), the
// data encoding (endianness), the machine, and the symbols of .symtab and .dynsym
// (System V ABI, "ELF Header" and "Symbol Table"). Every offset is bounds-checked: a
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

class ElfFile {
 public:
  // `name` is used in error messages. Throws Error(bad_input).
  static ElfFile parse(std::span<const std::uint8_t> bytes, std::string name);
  // Throws Error(not_found / permission_denied) when the file cannot be read.
  static ElfFile load(const std::string& path);

  [[nodiscard]] unsigned word_size() const noexcept { return word_size_; }  // 4 (ELF32) or 8 (ELF64)
  [[nodiscard]] Endian endian() const noexcept { return endian_; }
  [[nodiscard]] std::uint16_t machine() const noexcept { return machine_; }
  [[nodiscard]] std::string_view machine_name() const noexcept;
  [[nodiscard]] const std::vector<Symbol>& symbols() const noexcept { return symbols_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  // A data or untyped symbol with this name (.symtab first, then .dynsym).
  [[nodiscard]] std::optional<Symbol> find(std::string_view symbol) const;

 private:
  std::string name_;
  unsigned word_size_ = 4;
  Endian endian_ = Endian::little;
  std::uint16_t machine_ = 0;
  std::vector<Symbol> symbols_;
};

}  // namespace tp::elf
