// Fuzz target: the Origin and Host checks of trace-serve (serve/origin_policy) on arbitrary
// header values. Input: ORIGIN '\n' HOST. Properties: normalising is idempotent and what
// allows() decides on; with no --allow-origin only file:// and http(s) origins whose host is
// a loopback name are admitted, and only loopback names or the listen address as Host.
#include <cstdlib>
#include <string>
#include <string_view>

#include "serve/origin_policy.hpp"

namespace {

bool loopback_name(std::string_view host) {
  return host == "localhost" || host == "[::1]" || host.starts_with("127.");
}

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view origin = input.substr(0, newline);
  const std::string_view host = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);

  const tp::serve::OriginPolicy policy(tp::serve::OriginPolicyConfig{"10.1.2.3", 9229, {}, {}, false});
  const std::string normalised = tp::serve::normalise_origin(origin);
  check(tp::serve::normalise_origin(normalised) == normalised);
  check(policy.allows(origin) == policy.allows(normalised));
  if (policy.allows(origin)) {
    const bool web = normalised.starts_with("http://") || normalised.starts_with("https://");
    check(normalised == "file://" || normalised == "http://10.1.2.3:9229" ||
          (web && loopback_name(tp::serve::host_of_origin(normalised))));
  }
  if (policy.allows_host(host)) {
    const std::string name = tp::serve::host_of_header(host);
    check(loopback_name(name) || name == "10.1.2.3");
  }
  return 0;
}
