// trace-lab's own pages (lib/lab/pages: lab.html and its modules), embedded at build time as
// the viewer is (cmake/EmbedFiles.cmake); the viewer's files are served beside them.
#pragma once

#include <span>

#include "serve/viewer_assets.hpp"

namespace tp::lab {

std::span<const serve::Asset> lab_page_assets() noexcept;

}  // namespace tp::lab
