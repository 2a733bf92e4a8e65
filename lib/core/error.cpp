#include "core/error.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace tp {

ErrorCode error_code_for_exit(ExitCode code) noexcept {
  switch (code) {
    case ExitCode::ok:
      return ErrorCode::ok;
    case ExitCode::failure:
      return ErrorCode::failure;
    case ExitCode::usage:
      return ErrorCode::invalid_parameters;
    case ExitCode::not_found:
      return ErrorCode::not_found;
    case ExitCode::permission_denied:
      return ErrorCode::permission_denied;
    case ExitCode::busy:
      return ErrorCode::busy;
    case ExitCode::bad_input:
      return ErrorCode::bad_input;
    case ExitCode::io_error:
      return ErrorCode::io_error;
    case ExitCode::timeout:
      return ErrorCode::target_not_responding;
    case ExitCode::unsupported:
      return ErrorCode::unsupported;
    case ExitCode::internal:
      return ErrorCode::internal_error;
  }
  return ErrorCode::failure;
}

void throw_system_error(int err, std::string_view what) {
  std::string message = fmt::format("{}: {}", what, std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENODEV:
    case ENXIO:
      throw Error(ExitCode::not_found, message);
    case EACCES:
    case EPERM:
      throw Error(ExitCode::permission_denied, message);
    case EBUSY:
      throw Error(ExitCode::busy, message);
    case ETIMEDOUT:
      throw Error(ExitCode::timeout, message);
    default:
      throw Error(ExitCode::io_error, message);
  }
}

}  // namespace tp
