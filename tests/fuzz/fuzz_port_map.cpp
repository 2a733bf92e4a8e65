// Fuzz target: port map JSON; bad input must be a tp::Error, never a crash.
#include <string_view>

#include "core/error.hpp"
#include "ports/port_map.hpp"
#include "ports/port_router.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const tp::PortMap map = tp::PortMap::parse(std::string_view(reinterpret_cast<const char*>(data), size));
    (void)tp::PortMap::parse(map.to_json());
    tp::PortRouter router(map);
  } catch (const tp::Error&) {
  }
  return 0;
}
