#include "symbols/line_table.hpp"

#include <elfutils/libdwfl.h>
#include <fmt/format.h>

#include "core/error.hpp"

namespace tp::symbols {
namespace {

// Offline: the file alone, no running process, debuginfo found beside it if split.
const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

}  // namespace

void LineTable::DwflEnd::operator()(Dwfl* dwfl) const noexcept {
  dwfl_end(dwfl);
}

LineTable::LineTable(const std::string& path) : dwfl_(dwfl_begin(&offline_callbacks)) {
  if (!dwfl_) throw Error(ExitCode::internal, fmt::format("libdw: {}", dwfl_errmsg(-1)));
  Dwfl_Module* module = dwfl_report_offline(dwfl_.get(), "", path.c_str(), -1);
  if (module == nullptr) {
    throw Error(ExitCode::bad_input, fmt::format("{}: libdw cannot read it: {}", path, dwfl_errmsg(-1)));
  }
  dwfl_report_end(dwfl_.get(), nullptr, nullptr);
  Dwarf_Addr bias = 0;
  present_ = module != nullptr && dwfl_module_getdwarf(module, &bias) != nullptr;
}

std::optional<SourceLine> LineTable::at(std::uint64_t address) const {
  if (!present_) return std::nullopt;
  const std::scoped_lock hold(*lock_);
  Dwfl_Line* row = dwfl_getsrc(dwfl_.get(), address);
  if (row == nullptr) return std::nullopt;
  int line = 0;
  const char* file = dwfl_lineinfo(row, nullptr, &line, nullptr, nullptr, nullptr);
  if (file == nullptr || line <= 0) return std::nullopt;
  return SourceLine{file, static_cast<std::uint32_t>(line)};
}

}  // namespace tp::symbols
