// Boost.Asio for the servers (lib/net, lib/serve, lib/palm). Boost 1.74's asio/awaitable.hpp uses std::exchange without
// including <utility>, so that comes first.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on
