#include "symbols/function_map.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace tp::symbols {
namespace {

constexpr std::uint8_t stt_func = 2;
constexpr std::uint16_t em_arm = 40;

}  // namespace

std::string demangle(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  const std::string mangled(name);
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> plain(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && plain ? std::string(plain.get()) : mangled;
}

FunctionMap::FunctionMap(const elf::ElfFile& file) {
  // ARM ELF for the Arm Architecture 5.5.3: bit 0 of a Thumb function's address is set.
  const std::uint64_t address_mask = file.machine() == em_arm ? ~std::uint64_t{1} : ~std::uint64_t{0};
  for (const elf::Symbol& symbol : file.symbols()) {
    if (symbol.type != stt_func || symbol.dynamic) continue;
    functions_.push_back(Function{demangle(symbol.name), symbol.value & address_mask, symbol.size});
  }
  std::sort(functions_.begin(), functions_.end(), [](const Function& a, const Function& b) {
    return a.address != b.address ? a.address < b.address : a.size > b.size;
  });
  // One function per address: aliases (the larger first) stand for the same code.
  functions_.erase(std::unique(functions_.begin(), functions_.end(),
                               [](const Function& a, const Function& b) { return a.address == b.address; }),
                   functions_.end());
}

const Function* FunctionMap::containing(std::uint64_t address) const noexcept {
  auto after = std::upper_bound(functions_.begin(), functions_.end(), address,
                                [](std::uint64_t value, const Function& f) { return value < f.address; });
  if (after == functions_.begin()) return nullptr;
  const Function& candidate = *std::prev(after);
  const bool inside = candidate.size == 0 ? address == candidate.address : address - candidate.address < candidate.size;
  return inside ? &candidate : nullptr;
}

const Function* FunctionMap::at(std::uint64_t address) const noexcept {
  const Function* function = containing(address);
  return function != nullptr && function->address == address ? function : nullptr;
}

}  // namespace tp::symbols
