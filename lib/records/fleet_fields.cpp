#include "records/fleet_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace tp {

bool is_fleet_name(std::string_view name) noexcept {
  return !name.empty() && name.size() <= fleet_name_max && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

void append_stamped(std::string& out, std::string_view record, const FleetStamp& stamp) {
  // The record's closing brace goes after the fleet fields.
  out.append(record.data(), record.size() - 1);
  fmt::format_to(std::back_inserter(out), R"(,"board":"{}","run":"{}","seq":{},"host_us":{}}})", stamp.board, stamp.run,
                 stamp.seq, stamp.host_us);
  out += '\n';
}

}  // namespace tp
