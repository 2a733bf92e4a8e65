// Names for addresses from a firmware ELF (itm-decode --elf): the function holding a
// sampled PC and, with DWARF, its file and line; the handler of each exception from the
// vector table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "elf/elf_file.hpp"
#include "symbols/function_map.hpp"
#include "symbols/line_table.hpp"

namespace tp::symbols {

struct CodePlace {
  std::string_view function;  // empty when no function holds the address
  std::optional<SourceLine> line;
};

class Symbolizer {
 public:
  // Throws Error (not_found, bad_input) when the file cannot be read as an ELF.
  static Symbolizer load(const std::string& path);

  [[nodiscard]] CodePlace place(std::uint64_t pc) const;
  // The handler of exception `number`, or empty.
  [[nodiscard]] std::string_view handler(std::uint32_t number) const noexcept;
  [[nodiscard]] const std::map<std::uint32_t, std::string>& handlers() const noexcept { return handlers_; }
  [[nodiscard]] std::size_t function_count() const noexcept { return functions_.size(); }
  [[nodiscard]] bool has_lines() const noexcept { return lines_.present(); }
  // A word for the caller to say when the file is not for a Cortex-M (e_machine not ARM):
  // its addresses and vector table then mean nothing to an ITM trace. Empty when it is ARM.
  [[nodiscard]] const std::string& machine_warning() const noexcept { return machine_warning_; }

 private:
  Symbolizer(const elf::ElfFile& file, const std::string& path);

  FunctionMap functions_;
  LineTable lines_;
  std::map<std::uint32_t, std::string> handlers_;
  std::string machine_warning_;
};

}  // namespace tp::symbols
