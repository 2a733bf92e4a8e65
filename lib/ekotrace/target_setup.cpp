#include "ekotrace/target_setup.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/number.hpp"

namespace tp::ekotrace {
namespace {

std::string_view endian_name(elf::Endian endian) {
  return endian == elf::Endian::little ? "little endian" : "big endian";
}

std::uint64_t parse_address(std::string_view text) {
  const auto value = parse_whole_number<std::uint64_t>(text.substr(2), 16);
  if (!value) throw Error(ExitCode::usage, fmt::format("'{}' is not a hex address (e.g. 0x20001000)", text));
  return *value;
}

}  // namespace

TargetShape resolve_shape(const elf::ElfFile* elf, std::optional<unsigned> word_size_bits,
                          std::optional<elf::Endian> endian) {
  TargetShape shape;
  if (word_size_bits && *word_size_bits != 32 && *word_size_bits != 64) {
    throw Error(ExitCode::usage, fmt::format("--word-size {}: expected 32 or 64", *word_size_bits));
  }
  if (elf != nullptr) {
    shape.word_size = elf->word_size();
    shape.endian = elf->endian();
    shape.origin = fmt::format("{} (ELF{}, {}, {})", elf->name(), elf->word_size() * 8, endian_name(elf->endian()),
                               elf->machine_name());
    if (word_size_bits && *word_size_bits != shape.word_size * 8) {
      throw Error(ExitCode::usage, fmt::format("--word-size {} contradicts {}", *word_size_bits, shape.origin));
    }
    if (endian && *endian != shape.endian) {
      throw Error(ExitCode::usage,
                  fmt::format("--{} contradicts {}", endian == elf::Endian::little ? "little-endian" : "big-endian",
                              shape.origin));
    }
    return shape;
  }
  shape.origin = "flags";
  if (word_size_bits) {
    shape.word_size = *word_size_bits / 8;
  } else {
    shape.warnings.emplace_back("word size not given (--word-size or --elf): assuming 32 bits");
  }
  if (endian) {
    shape.endian = *endian;
  } else {
    shape.warnings.emplace_back("endianness not given (--little-endian/--big-endian or --elf): assuming little endian");
  }
  if (!word_size_bits && !endian) shape.origin = "defaults";
  return shape;
}

std::vector<TracerSpec> resolve_tracers(const std::vector<std::string>& arguments, const elf::ElfFile* elf) {
  std::vector<TracerSpec> tracers;
  for (const auto& argument : arguments) {
    if (argument.starts_with("0x") || argument.starts_with("0X")) {
      tracers.push_back({argument, parse_address(argument)});
      continue;
    }
    if (elf == nullptr) {
      throw Error(
          ExitCode::usage,
          fmt::format("tracer '{}' is a symbol: give the ELF file with --elf (or its address as 0x...)", argument));
    }
    const auto symbol = elf->find(argument);
    if (!symbol) {
      throw Error(ExitCode::not_found,
                  fmt::format("symbol '{}' is not in {} ({} symbols)", argument, elf->name(), elf->symbols().size()));
    }
    tracers.push_back({argument, symbol->value});
  }
  return tracers;
}

}  // namespace tp::ekotrace
