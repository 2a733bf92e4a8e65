// trace-serve --elf: names from the firmware for records that come without them, as
// itm-decode --elf gives them: a PcSample's function (and, with DWARF, file and line), an
// Exception's handler and an IsrEnter's name (its isr_id read as the exception number) from
// the vector table. A record that already has them, or that the ELF cannot name, passes as
// it came, byte for byte.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>

#include "symbols/symbolizer.hpp"

namespace tp::serve {

class RecordSymbols {
 public:
  explicit RecordSymbols(symbols::Symbolizer symbolizer) : symbolizer_(std::move(symbolizer)) {}

  // The record rewritten with the names added to its event.data, or nothing to add.
  [[nodiscard]] std::optional<std::string> named(simdjson::dom::object record) const;

 private:
  symbols::Symbolizer symbolizer_;
};

}  // namespace tp::serve
