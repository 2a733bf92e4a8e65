// The text of a JSON value as filters and CSV cells see it: strings unescaped, numbers,
// booleans and null as their JSON tokens, objects and arrays as their JSON text.
#pragma once

#include <simdjson.h>

#include <string_view>

namespace tp {

enum class ValueType : std::uint8_t { string, number, boolean, null, object, array };

struct ValueText {
  ValueType type = ValueType::null;
  std::string_view text;  // valid until the document is parsed or iterated again
};

simdjson::error_code value_text(simdjson::ondemand::value value, ValueText& out);

// Looks up a JSON Pointer; NO_SUCH_FIELD (and friends) when it is not there, TAPE_ERROR
// when an earlier error made simdjson abandon the document.
simdjson::error_code field_text(simdjson::ondemand::document& document, std::string_view pointer, ValueText& out);

// True for the errors that mean "the path is not in this record" rather than "bad JSON".
bool is_missing_field(simdjson::error_code error) noexcept;

}  // namespace tp
