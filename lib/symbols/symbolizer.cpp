#include "symbols/symbolizer.hpp"

#include <fmt/format.h>

#include "symbols/vector_table.hpp"

namespace tp::symbols {

Symbolizer::Symbolizer(const elf::ElfFile& file, const std::string& path)
    : functions_(file), lines_(path), handlers_(vector_handler_names(file, functions_)) {
  constexpr std::uint16_t em_arm = 40;  // System V ABI, e_machine
  if (file.machine() != em_arm) {
    machine_warning_ = fmt::format("{} is an ELF for {} (e_machine {}), not ARM: its names may not fit the trace", path,
                                   file.machine_name(), file.machine());
  }
}

Symbolizer Symbolizer::load(const std::string& path) {
  return Symbolizer(elf::ElfFile::load(path), path);
}

CodePlace Symbolizer::place(std::uint64_t pc) const {
  CodePlace place;
  if (const Function* function = functions_.containing(pc)) place.function = function->name;
  place.line = lines_.at(pc);
  return place;
}

std::string_view Symbolizer::handler(std::uint32_t number) const noexcept {
  const auto found = handlers_.find(number);
  return found == handlers_.end() ? std::string_view() : std::string_view(found->second);
}

}  // namespace tp::symbols
