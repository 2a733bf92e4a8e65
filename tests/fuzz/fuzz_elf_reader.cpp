// Fuzz target: ELF files given to eko-collect --elf and itm-decode --elf (untrusted: any file
// a user points at). Parsing may only end in a tp::Error; symbols found must be findable by
// name; loaded sections read back by address; functions and vector handlers are looked up.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "elf/elf_file.hpp"
#include "symbols/function_map.hpp"
#include "symbols/vector_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto elf = tp::elf::ElfFile::parse(std::span(data, size), "fuzz.elf");
    if (elf.word_size() != 4 && elf.word_size() != 8) std::abort();
    for (const auto& symbol : elf.symbols()) {
      if (symbol.name.empty()) std::abort();
      (void)elf.find(symbol.name);
    }
    for (const auto& section : elf.loaded_sections()) {
      if (!section.bytes.empty() && !elf.read_word(section.address, 1)) std::abort();
      (void)elf.read_word(section.address + section.bytes.size() - 1, 4);
    }
    const tp::symbols::FunctionMap functions(elf);
    for (const auto& [number, name] : tp::symbols::vector_handler_names(elf, functions)) {
      if (number == 0 || name.empty()) std::abort();
    }
    for (const auto& symbol : elf.symbols()) (void)functions.containing(symbol.value);
  } catch (const tp::Error&) {  // malformed input is reported, never a crash
  }
  return 0;
}
