// Turning eko-collect's command line into what the collector needs: the target's word
// size and byte order (from the ELF when given, else the flags, else 32-bit little endian
// with a warning: docs/design.md "Peers and their protocols"), and the tracer
// arguments (`0x...` = address of a tracer reference, anything else a symbol of --elf).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ekotrace/collector.hpp"
#include "elf/elf_file.hpp"

namespace tp::ekotrace {

struct TargetShape {
  unsigned word_size = 4;
  elf::Endian endian = elf::Endian::little;
  std::vector<std::string> warnings;  // defaults taken
  std::string origin;                 // "fw.elf (ELF32, big endian, ARM)", "flags", "default"
};

// word_size_bits: 32 or 64 from --word-size. A flag that contradicts the ELF is a usage error.
TargetShape resolve_shape(const elf::ElfFile* elf, std::optional<unsigned> word_size_bits,
                          std::optional<elf::Endian> endian);

// Throws Error(usage) for a symbol without --elf or a malformed address, Error(not_found)
// for a symbol the ELF does not have.
std::vector<TracerSpec> resolve_tracers(const std::vector<std::string>& arguments, const elf::ElfFile* elf);

}  // namespace tp::ekotrace
