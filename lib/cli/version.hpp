// The project's version, defined in one generated source file (lib/cli/version.cpp.in,
// filled in from CMakeLists.txt's project() by configure_file): bumping it rebuilds that
// one file, not every unit.
#pragma once

#include <string_view>

namespace tp {

[[nodiscard]] std::string_view tracepipe_version() noexcept;

}  // namespace tp
