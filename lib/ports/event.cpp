#include "ports/event.hpp"

namespace tp {

std::string_view data_trace_type_name(DataTraceType type) noexcept {
  switch (type) {
    case DataTraceType::pc:
      return "pc";
    case DataTraceType::address:
      return "address";
    case DataTraceType::read:
      return "read";
    case DataTraceType::write:
      return "write";
  }
  return "pc";
}

}  // namespace tp
