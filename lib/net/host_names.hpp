// The names a browser on another machine may use to reach this host: its interface
// addresses (IPv6 in brackets, link-local ones left out: an origin cannot carry a zone)
// and its host name (with the mDNS form NAME.local). Loopback is not included.
#pragma once

#include <string>
#include <vector>

namespace tp::net {

std::vector<std::string> host_names_for_origins();

}  // namespace tp::net
