// A tool's option documentation generated from its CLI11 definitions, the way ripgrep
// generates its own from its flag table: bash, zsh and fish completions, and the OPTIONS
// section of its man page (the rest of the page is prose, written by hand). Every tool
// prints them through two options run_tool handles before parsing and --help does not list:
//   TOOL --generate-completions bash|zsh|fish
//   TOOL --generate-man-options
// The build writes them next to the tools (what `cmake --install` and the .deb ship); the
// docs_generated test fails when a committed copy (completions/, man/) differs.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace tp {

inline constexpr std::string_view generate_completions_flag = "--generate-completions";
inline constexpr std::string_view generate_man_options_flag = "--generate-man-options";

// The completion script of `app` for `shell` (bash, zsh or fish); nothing for another shell.
std::optional<std::string> completion_script(const CLI::App& app, std::string_view shell);

// The man page's OPTIONS section (roff, from ".SH OPTIONS" on): every option of --help with
// its value, choices, default and environment variable, then each subcommand's.
std::string man_options(const CLI::App& app);

}  // namespace tp
