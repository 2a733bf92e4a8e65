#include "records/value_text.hpp"

namespace tp {
namespace {
std::string_view trim_token(std::string_view token) {
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' || token.back() == '\r')) {
    token.remove_suffix(1);
  }
  return token;
}
}  // namespace

simdjson::error_code value_text(simdjson::ondemand::value value, ValueText& out) {
  simdjson::ondemand::json_type type{};
  if (auto error = value.type().get(type); error != simdjson::SUCCESS) return error;
  switch (type) {
    case simdjson::ondemand::json_type::string:
      out.type = ValueType::string;
      return value.get_string().get(out.text);
    case simdjson::ondemand::json_type::object: {
      out.type = ValueType::object;
      simdjson::ondemand::object object;
      if (auto error = value.get_object().get(object); error != simdjson::SUCCESS) return error;
      return object.raw_json().get(out.text);
    }
    case simdjson::ondemand::json_type::array: {
      out.type = ValueType::array;
      simdjson::ondemand::array array;
      if (auto error = value.get_array().get(array); error != simdjson::SUCCESS) return error;
      return array.raw_json().get(out.text);
    }
    case simdjson::ondemand::json_type::number:
      out.type = ValueType::number;
      break;
    case simdjson::ondemand::json_type::boolean:
      out.type = ValueType::boolean;
      break;
    case simdjson::ondemand::json_type::null:
      out.type = ValueType::null;
      break;
  }
  out.text = trim_token(value.raw_json_token());
  return simdjson::SUCCESS;
}

simdjson::error_code field_text(simdjson::ondemand::document& document, std::string_view pointer, ValueText& out) {
  // After some errors simdjson abandons the document; looking again would dereference
  // its released parser. Such a line is bad, not merely missing the field.
  if (!document.is_alive()) return simdjson::TAPE_ERROR;
  simdjson::ondemand::value value;
  simdjson::error_code error = document.at_pointer(pointer).get(value);
  if (error == simdjson::SUCCESS) error = value_text(value, out);
  return error == simdjson::SUCCESS || document.is_alive() ? error : simdjson::TAPE_ERROR;
}

bool is_missing_field(simdjson::error_code error) noexcept {
  return error == simdjson::NO_SUCH_FIELD || error == simdjson::INDEX_OUT_OF_BOUNDS ||
         error == simdjson::INCORRECT_TYPE || error == simdjson::INVALID_JSON_POINTER;
}

}  // namespace tp
