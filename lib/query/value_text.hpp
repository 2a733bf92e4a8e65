// The text of a JSON value as filters and CSV cells see it: strings unescaped; integers,
// booleans and null as their JSON tokens; other numbers, objects and arrays as minified JSON
// (the parsed line keeps no raw text of them).
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

#include "query/field_path.hpp"

namespace tp {

enum class ValueType : std::uint8_t { string, number, boolean, null, object, array };

struct ValueText {
  ValueType type = ValueType::null;
  std::string_view text;  // valid until the next line is parsed, and while this is not reused
  std::string storage;    // holds the text of what is written out rather than pointed at
};

simdjson::error_code value_text(simdjson::dom::element value, ValueText& out);

// Looks up a field; NO_SUCH_FIELD (and friends) when it is not there.
simdjson::error_code field_text(simdjson::dom::object root, const FieldPath& path, ValueText& out);

// True for the errors that mean "the path is not in this record" rather than "bad JSON".
bool is_missing_field(simdjson::error_code error) noexcept;

}  // namespace tp
