// Boost.Asio for lib/serve. Boost 1.74's asio/awaitable.hpp uses std::exchange without
// including <utility>, so that comes first.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on
