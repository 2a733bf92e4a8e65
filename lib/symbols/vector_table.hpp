// The handlers of a Cortex-M vector table, named from the ELF (ARMv7-M B1.5.3: word N of
// the table is the address of exception N's handler; word 0 is the initial stack pointer).
// The table is the section .isr_vector, .vectors or .vector_table (the names the common
// startup files use), else the data at a symbol with one of the common table names.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "elf/elf_file.hpp"
#include "symbols/function_map.hpp"

namespace tp::symbols {

// Exception number -> the name of the function its vector points at, for every vector
// that points at a function (reserved and unused words are left out). Empty when the ELF
// has no vector table.
std::map<std::uint32_t, std::string> vector_handler_names(const elf::ElfFile& file, const FunctionMap& functions);

}  // namespace tp::symbols
