#include "core/error_code.hpp"

#include <array>
#include <utility>

namespace tp {
namespace {

constexpr std::array<std::pair<ErrorCode, std::string_view>, 23> names = {{
    {ErrorCode::invalid_message, "INVALID_MESSAGE"},
    {ErrorCode::invalid_parameters, "INVALID_PARAMETERS"},
    {ErrorCode::not_connected, "NOT_CONNECTED"},
    {ErrorCode::already_tracing, "ALREADY_TRACING"},
    {ErrorCode::buffer_overflow, "BUFFER_OVERFLOW"},
    {ErrorCode::permission_denied, "PERMISSION_DENIED"},
    {ErrorCode::probe_not_found, "PROBE_NOT_FOUND"},
    {ErrorCode::probe_in_use, "PROBE_IN_USE"},
    {ErrorCode::target_not_responding, "TARGET_NOT_RESPONDING"},
    {ErrorCode::baud_rate_error, "BAUD_RATE_ERROR"},
    {ErrorCode::itm_not_enabled, "ITM_NOT_ENABLED"},
    {ErrorCode::port_not_available, "PORT_NOT_AVAILABLE"},
    {ErrorCode::ok, "OK"},
    {ErrorCode::failure, "FAILURE"},
    {ErrorCode::not_found, "NOT_FOUND"},
    {ErrorCode::busy, "BUSY"},
    {ErrorCode::bad_input, "BAD_INPUT"},
    {ErrorCode::io_error, "IO_ERROR"},
    {ErrorCode::unsupported, "UNSUPPORTED"},
    {ErrorCode::internal_error, "INTERNAL_ERROR"},
    {ErrorCode::target_not_found, "TARGET_NOT_FOUND"},
    {ErrorCode::target_disconnected, "TARGET_DISCONNECTED"},
    {ErrorCode::memory_access_error, "MEMORY_ACCESS_ERROR"},
}};

// The table is in the enum's order, so a code's name is at its index.
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (static_cast<std::size_t>(names[i].first) != i) return false;
  }
  return true;
}
static_assert(in_enum_order());

}  // namespace

std::string_view error_code_name(ErrorCode code) noexcept {
  const auto index = static_cast<std::size_t>(code);
  return index < names.size() ? names[index].second : "FAILURE";
}

std::optional<ErrorCode> parse_error_code(std::string_view name) noexcept {
  for (const auto& [code, text] : names) {
    if (text == name) return code;
  }
  return std::nullopt;
}

bool is_callisto_code(ErrorCode code) noexcept {
  return code <= ErrorCode::port_not_available;
}

}  // namespace tp
