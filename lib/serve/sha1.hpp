// SHA-1 (FIPS 180-4), only for the WebSocket handshake's Sec-WebSocket-Accept (RFC 6455
// section 4.2.2). Not for anything that needs collision resistance.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace tp::serve {

using Sha1Digest = std::array<std::uint8_t, 20>;

Sha1Digest sha1(std::string_view data);

}  // namespace tp::serve
