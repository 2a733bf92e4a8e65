// Field paths of the command line ("event.data.message", aliases such as "message"):
// split once into their keys and looked up in each parsed record, as the JSON Pointer
// (RFC 6901) they stand for would be, without reading the pointer again for every line.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

namespace tp {

// "event.data.message" -> "/event/data/message"; '~' and '/' in names are escaped.
std::string dotted_to_pointer(std::string_view dotted);

class FieldPath {
 public:
  explicit FieldPath(std::string_view dotted);

  [[nodiscard]] const std::string& pointer() const noexcept { return pointer_; }
  // The value at this path: NO_SUCH_FIELD, INDEX_OUT_OF_BOUNDS or INCORRECT_TYPE when the
  // record has none. A key that is a number indexes an array, as in a pointer.
  simdjson::error_code find(simdjson::dom::object root, simdjson::dom::element& out) const;

 private:
  std::string pointer_;
  std::vector<std::string> keys_;
};

// Short names for the common record fields: time/ts -> timestamp, kind -> event.kind,
// message/msg -> event.data.message, data -> event.data. Other names are returned as is.
std::string_view resolve_field_alias(std::string_view name);

}  // namespace tp
