// The web pages' files, embedded at build time (cmake/EmbedFiles.cmake) so a binary serves
// them offline with no CDN: the viewer's (lib/serve/viewer) and trace-lab's front page's
// (lib/serve/lab: lab.html and its modules, which link to the viewer under /board/).
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
std::span<const Asset> lab_assets() noexcept;

}  // namespace tp::serve
