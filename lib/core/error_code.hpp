// The machine-readable error codes of every tool, with their one name table: the "code" of
// --log-format json lines and of trace-serve's Error messages. Callisto's codes (its
// protocol's Error.code, schemas/server-message.schema.json) come first; the
// project's own cover what Callisto has no code for.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tp {

enum class ErrorCode : std::uint8_t {
  // Callisto's, in its schema's order.
  invalid_message,
  invalid_parameters,
  not_connected,
  already_tracing,
  buffer_overflow,
  permission_denied,
  probe_not_found,
  probe_in_use,
  target_not_responding,
  baud_rate_error,
  itm_not_enabled,
  port_not_available,
  // tracepipe's.
  ok,
  failure,
  not_found,
  busy,
  bad_input,
  io_error,
  unsupported,
  internal_error,
  target_not_found,
  target_disconnected,
  memory_access_error,
};

// "INVALID_MESSAGE", "PROBE_NOT_FOUND", ... as on the wire.
[[nodiscard]] std::string_view error_code_name(ErrorCode code) noexcept;
// The code of a wire name; nothing for a name that is not one.
[[nodiscard]] std::optional<ErrorCode> parse_error_code(std::string_view name) noexcept;
// One of the codes a Callisto client knows (the only ones trace-serve may send it).
[[nodiscard]] bool is_callisto_code(ErrorCode code) noexcept;

}  // namespace tp
