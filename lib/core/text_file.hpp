// Whole small files (port maps, name lists, saved timelines, SVGs) read and written at once.
#pragma once

#include <string>
#include <string_view>

namespace tp {

// Throws tp::Error (not_found, permission_denied, io_error) naming the file.
std::string read_text_file(const std::string& path);
// Replaces the file. Throws tp::Error naming the file.
void write_text_file(const std::string& path, std::string_view text);

}  // namespace tp
