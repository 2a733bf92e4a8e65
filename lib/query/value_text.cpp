#include "query/value_text.hpp"

#include <fmt/format.h>

namespace tp {
namespace {

void set_storage(ValueText& out, std::string_view text) {
  out.storage.assign(text);
  out.text = out.storage;
}

}  // namespace

simdjson::error_code value_text(simdjson::dom::element value, ValueText& out) {
  switch (value.type()) {
    case simdjson::dom::element_type::STRING:
      out.type = ValueType::string;
      return value.get_string().get(out.text);
    case simdjson::dom::element_type::INT64:
      out.type = ValueType::number;
      set_storage(out, fmt::format_int(value.get_int64().value_unsafe()).c_str());
      return simdjson::SUCCESS;
    case simdjson::dom::element_type::UINT64:
      out.type = ValueType::number;
      set_storage(out, fmt::format_int(value.get_uint64().value_unsafe()).c_str());
      return simdjson::SUCCESS;
    case simdjson::dom::element_type::DOUBLE:
      out.type = ValueType::number;
      break;
    case simdjson::dom::element_type::BOOL:
      out.type = ValueType::boolean;
      out.text = value.get_bool().value_unsafe() ? "true" : "false";
      return simdjson::SUCCESS;
    case simdjson::dom::element_type::NULL_VALUE:
      out.type = ValueType::null;
      out.text = "null";
      return simdjson::SUCCESS;
    case simdjson::dom::element_type::OBJECT:
      out.type = ValueType::object;
      break;
    case simdjson::dom::element_type::ARRAY:
      out.type = ValueType::array;
      break;
  }
  set_storage(out, simdjson::minify(value));
  return simdjson::SUCCESS;
}

simdjson::error_code field_text(simdjson::dom::object root, const FieldPath& path, ValueText& out) {
  simdjson::dom::element value;
  const simdjson::error_code error = path.find(root, value);
  return error == simdjson::SUCCESS ? value_text(value, out) : error;
}

bool is_missing_field(simdjson::error_code error) noexcept {
  return error == simdjson::NO_SUCH_FIELD || error == simdjson::INDEX_OUT_OF_BOUNDS ||
         error == simdjson::INCORRECT_TYPE || error == simdjson::INVALID_JSON_POINTER;
}

}  // namespace tp
