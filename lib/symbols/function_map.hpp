// The functions of an ELF file by address, for naming sampled program counters: each
// STT_FUNC symbol's [value, value + size) (the Thumb bit cleared on ARM), C++ names
// demangled. The ELF reader's symbols are used (not libdw's): they are bounds-checked and
// fuzzed already, and need no DWARF, so a stripped-of-debug firmware still names functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_file.hpp"

namespace tp::symbols {

struct Function {
  std::string name;  // demangled
  std::uint64_t address = 0;
  std::uint64_t size = 0;
};

class FunctionMap {
 public:
  explicit FunctionMap(const elf::ElfFile& file);

  // The function whose range holds `address`; a symbol of size 0 holds only its own address.
  [[nodiscard]] const Function* containing(std::uint64_t address) const noexcept;
  // The function that starts at `address` (a vector table entry, Thumb bit cleared).
  [[nodiscard]] const Function* at(std::uint64_t address) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return functions_.size(); }

 private:
  std::vector<Function> functions_;  // by address
};

// "_ZN3app4tickEv" -> "app::tick()"; other names are returned as they are.
std::string demangle(std::string_view name);

}  // namespace tp::symbols
