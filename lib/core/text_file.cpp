#include "core/text_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace tp {

std::string read_text_file(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_system_error(errno != 0 ? errno : ENOENT, path);
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw Error(ExitCode::io_error, fmt::format("{}: read failed", path));
  return content.str();
}

void write_text_file(const std::string& path, std::string_view text) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw_system_error(errno != 0 ? errno : EIO, path);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw Error(ExitCode::io_error, fmt::format("{}: write failed", path));
}

}  // namespace tp
