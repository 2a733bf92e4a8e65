// The web viewer's files, embedded at build time (cmake/EmbedFiles.cmake) so the binary
// serves it offline with no CDN.
#pragma once

#include <span>
#include <string_view>

namespace tp::serve {

struct Asset {
  std::string_view path;  // e.g. "/viewer.js"
  std::string_view content_type;
  std::string_view body;
};

std::span<const Asset> viewer_assets() noexcept;

}  // namespace tp::serve
