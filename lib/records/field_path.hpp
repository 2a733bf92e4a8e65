// Field paths of the command line ("event.data.message", aliases such as "message")
// as JSON Pointers (RFC 6901) for simdjson's at_pointer.
#pragma once

#include <string>
#include <string_view>

namespace tp {

// "event.data.message" -> "/event/data/message"; '~' and '/' in names are escaped.
std::string dotted_to_pointer(std::string_view dotted);

// Short names for the common record fields: time/ts -> timestamp, kind -> event.kind,
// message/msg -> event.data.message, data -> event.data. Other names are returned as is.
std::string_view resolve_field_alias(std::string_view name);

}  // namespace tp
