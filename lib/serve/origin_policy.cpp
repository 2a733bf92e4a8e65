#include "serve/origin_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace tp::serve {

namespace {

constexpr std::string_view scheme_end = "://";
constexpr std::string_view file_origin = "file://";

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool all_of_chars(std::string_view text, std::string_view allowed) {
  return !text.empty() && text.find_first_not_of(allowed) == std::string_view::npos;
}

bool loopback_host(std::string_view host) {
  if (host == "localhost" || host == "[::1]") return true;
  // 127.0.0.0/8 (RFC 1122 3.2.1.3), written as a dotted quad.
  return host.starts_with("127.") && all_of_chars(host, "0123456789.") &&
         std::count(host.begin(), host.end(), '.') == 3;
}

// "http://host[:port]" or "https://..." on a loopback host, any port.
bool loopback_origin(std::string_view origin) {
  if (!origin.starts_with("http://") && !origin.starts_with("https://")) return false;
  const std::string_view authority = origin.substr(origin.find(scheme_end) + scheme_end.size());
  if (authority.find_first_of("/@ ") != std::string_view::npos) return false;  // an origin has no path
  const std::string host = host_of_header(authority);
  const std::string_view port = authority.substr(host.size());
  const bool port_ok =
      port.empty() || (port.size() <= 6 && port.starts_with(':') && all_of_chars(port.substr(1), "0123456789"));
  return port_ok && loopback_host(host);
}

std::string bracketed(std::string_view address) {
  return address.find(':') != std::string_view::npos && !address.starts_with('[') ? fmt::format("[{}]", address)
                                                                                  : std::string(address);
}

}  // namespace

std::string normalise_origin(std::string_view origin) {
  std::string out = lowered(origin);
  const std::size_t scheme = out.find(scheme_end);
  const std::size_t keep = scheme == std::string::npos ? 0 : scheme + scheme_end.size();
  while (out.size() > keep && out.back() == '/') out.pop_back();
  return out;
}

std::string host_of_header(std::string_view host_header) {
  std::string_view host = host_header;
  while (!host.empty() && host.front() == ' ') host.remove_prefix(1);
  while (!host.empty() && host.back() == ' ') host.remove_suffix(1);
  if (host.starts_with('[')) {
    const std::size_t close = host.find(']');
    return lowered(close == std::string_view::npos ? host : host.substr(0, close + 1));
  }
  return lowered(host.substr(0, host.find(':')));
}

std::string host_of_origin(std::string_view origin) {
  const std::size_t scheme = origin.find(scheme_end);
  if (scheme == std::string_view::npos) return {};
  std::string_view rest = origin.substr(scheme + scheme_end.size());
  rest = rest.substr(0, rest.find('/'));
  return host_of_header(rest);
}

OriginPolicy::OriginPolicy(OriginPolicyConfig config) {
  hosts_ = {"localhost", "[::1]"};
  const std::string& listen = config.listen_address;
  const bool wildcard_bind = listen == "0.0.0.0" || listen == "::" || listen.empty();
  if (!wildcard_bind) {
    hosts_.push_back(lowered(bracketed(listen)));
    if (!loopback_host(lowered(bracketed(listen)))) {
      origins_.push_back(fmt::format("http://{}:{}", lowered(bracketed(listen)), config.port));
    }
  }
  for (const std::string& name : config.host_names) {
    hosts_.push_back(lowered(bracketed(name)));
    if (config.host_names_are_origins)
      origins_.push_back(fmt::format("http://{}:{}", lowered(bracketed(name)), config.port));
  }
  for (const std::string& origin : config.extra) {
    if (origin == "*") any_ = true;
    origins_.push_back(normalise_origin(origin));
    if (std::string host = host_of_origin(origins_.back()); !host.empty()) hosts_.push_back(std::move(host));
  }
}

bool OriginPolicy::allows(std::optional<std::string_view> origin) const {
  if (!origin || any_) return true;
  const std::string normalised = normalise_origin(*origin);
  if (normalised == file_origin || loopback_origin(normalised)) return true;
  return std::find(origins_.begin(), origins_.end(), normalised) != origins_.end();
}

bool OriginPolicy::allows_host(std::optional<std::string_view> host_header) const {
  if (!host_header || any_) return true;
  const std::string host = host_of_header(*host_header);
  return loopback_host(host) || std::find(hosts_.begin(), hosts_.end(), host) != hosts_.end();
}

}  // namespace tp::serve
