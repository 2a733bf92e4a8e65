#include "records/fleet_fields.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

namespace tp {

namespace {

constexpr std::array<bool, 256> fleet_name_chars = [] {
  std::array<bool, 256> allowed{};
  for (unsigned c = 0; c < 256; ++c) {
    allowed[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }
  return allowed;
}();

}  // namespace

bool is_fleet_name_char(char c) noexcept {
  return fleet_name_chars[static_cast<unsigned char>(c)];
}

bool is_fleet_name(std::string_view name) noexcept {
  return !name.empty() && name.size() <= fleet_name_max && std::all_of(name.begin(), name.end(), is_fleet_name_char);
}

void append_stamped(std::string& out, std::string_view record, const FleetStamp& stamp) {
  // The record's closing brace goes after the fleet fields. Written piece by piece (trace-ship
  // stamps millions of records a second; a format string's parsing was a sixth of its time).
  constexpr std::string_view board_key = R"(,"board":")";
  constexpr std::string_view run_key = R"(","run":")";
  constexpr std::string_view seq_key = R"(","seq":)";
  constexpr std::string_view host_us_key = R"(,"host_us":)";
  const std::size_t at = out.size();
  out.resize(at + record.size() - 1 + board_key.size() + stamp.board.size() + run_key.size() + stamp.run.size() +
             seq_key.size() + host_us_key.size() + std::size_t{2} * 20 + 2);
  char* p = out.data() + at;
  const auto put = [&p](std::string_view text) {
    std::memcpy(p, text.data(), text.size());
    p += text.size();
  };
  put(record.substr(0, record.size() - 1));
  put(board_key);
  put(stamp.board);
  put(run_key);
  put(stamp.run);
  put(seq_key);
  p = std::to_chars(p, p + 20, stamp.seq).ptr;
  put(host_us_key);
  p = std::to_chars(p, p + 20, stamp.host_us).ptr;
  *p++ = '}';
  *p++ = '\n';
  out.resize(static_cast<std::size_t>(p - out.data()));
}

}  // namespace tp
