// Fuzz target: ELF files given to eko-collect --elf (untrusted: any file a user points
// at). Parsing may only end in a tp::Error; symbols found must be findable by name.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "elf/elf_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto elf = tp::elf::ElfFile::parse(std::span(data, size), "fuzz.elf");
    if (elf.word_size() != 4 && elf.word_size() != 8) std::abort();
    for (const auto& symbol : elf.symbols()) {
      if (symbol.name.empty()) std::abort();
      (void)elf.find(symbol.name);
    }
  } catch (const tp::Error&) {  // malformed input is reported, never a crash
  }
  return 0;
}
