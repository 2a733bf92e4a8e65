#include "net/host_names.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>

namespace tp::net {
namespace {

struct IfaddrsDeleter {
  void operator()(ifaddrs* list) const noexcept { ::freeifaddrs(list); }
};

std::string address_text(const sockaddr* address) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    if ((ntohl(v4->sin_addr.s_addr) >> 24U) == 127U) return {};
    ::inet_ntop(AF_INET, &v4->sin_addr, text.data(), text.size());
    return text.data();
  }
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
  if (IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr)) return {};
  ::inet_ntop(AF_INET6, &v6->sin6_addr, text.data(), text.size());
  return fmt::format("[{}]", text.data());
}

}  // namespace

std::vector<std::string> host_names_for_origins() {
  std::vector<std::string> names;
  ifaddrs* raw = nullptr;
  if (::getifaddrs(&raw) == 0) {
    const std::unique_ptr<ifaddrs, IfaddrsDeleter> list(raw);
    for (const ifaddrs* entry = list.get(); entry != nullptr; entry = entry->ifa_next) {
      if (entry->ifa_addr == nullptr) continue;
      if (entry->ifa_addr->sa_family != AF_INET && entry->ifa_addr->sa_family != AF_INET6) continue;
      if (std::string text = address_text(entry->ifa_addr); !text.empty()) names.push_back(std::move(text));
    }
  }
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0 && host[0] != '\0') {
    const std::string name = host.data();
    if (name != "localhost") {
      names.push_back(name);
      if (name.find('.') == std::string::npos) names.push_back(fmt::format("{}.local", name));
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace tp::net
