// Fuzz target: port map JSON; bad input must be a tp::Error, never a crash. A map that parses
// writes JSON that parses back to the same map (its JSON again equal), and routes.
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "ports/port_map.hpp"
#include "ports/port_router.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<tp::PortMap> map;
  try {
    map = tp::PortMap::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const tp::Error&) {
    return 0;  // bad input, said as an error
  }
  // No catch from here: a map's own JSON that fails to parse or to round-trip is a bug.
  const std::string json = map->to_json();
  if (tp::PortMap::parse(json).to_json() != json) std::abort();
  const tp::PortRouter router(*map);
  return 0;
}
