#include "symbols/vector_table.hpp"

#include <array>
#include <optional>
#include <string_view>

namespace tp::symbols {
namespace {

constexpr std::array<std::string_view, 3> table_sections = {".isr_vector", ".vectors", ".vector_table"};
constexpr std::array<std::string_view, 5> table_symbols = {"g_pfnVectors", "__isr_vector", "__Vectors",
                                                           "__vector_table", "vector_table"};
// ARMv7-M: 16 system vectors and up to 496 interrupts.
constexpr std::uint64_t max_vectors = 512;

struct TableExtent {
  std::uint64_t address = 0;
  std::uint64_t words = 0;
};

std::optional<TableExtent> find_table(const elf::ElfFile& file) {
  for (const std::string_view name : table_sections) {
    for (const elf::LoadedSection& section : file.loaded_sections()) {
      if (section.name == name) return TableExtent{section.address, section.bytes.size() / 4};
    }
  }
  for (const std::string_view name : table_symbols) {
    if (const auto symbol = file.find(name); symbol && symbol->size >= 8) {
      return TableExtent{symbol->value, symbol->size / 4};
    }
  }
  return std::nullopt;
}

}  // namespace

std::map<std::uint32_t, std::string> vector_handler_names(const elf::ElfFile& file, const FunctionMap& functions) {
  std::map<std::uint32_t, std::string> names;
  const std::optional<TableExtent> table = find_table(file);
  if (!table || file.word_size() != 4) return names;
  const std::uint64_t words = std::min(table->words, max_vectors);
  for (std::uint64_t number = 1; number < words; ++number) {  // word 0: the initial stack pointer
    const auto vector = file.read_word(table->address + 4 * number, 4);
    if (!vector || *vector == 0) continue;
    // Handlers are Thumb code: bit 0 of the vector is set (B1.5.3).
    if (const Function* handler = functions.at(*vector & ~std::uint64_t{1})) {
      names.emplace(static_cast<std::uint32_t>(number), handler->name);
    }
  }
  return names;
}

}  // namespace tp::symbols
