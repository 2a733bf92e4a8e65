#include "json/raw_json.hpp"

namespace tp {
namespace {

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::size_t skip_spaces(std::string_view text, std::size_t at) noexcept {
  while (at < text.size() && is_space(text[at])) ++at;
  return at;
}

// From an opening quote to after the closing one.
std::size_t skip_string(std::string_view text, std::size_t at) noexcept {
  for (++at; at < text.size() && text[at] != '"'; ++at) {
    if (text[at] == '\\') ++at;
  }
  return at + 1;
}

// From a value's first character to after its last.
std::size_t skip_value(std::string_view text, std::size_t at) noexcept {
  if (at >= text.size()) return text.size();
  if (text[at] == '"') return skip_string(text, at);
  if (text[at] != '{' && text[at] != '[') {
    while (at < text.size() && !is_space(text[at]) && text[at] != ',' && text[at] != '}' && text[at] != ']') ++at;
    return at;
  }
  int depth = 0;
  while (at < text.size()) {
    const char c = text[at];
    if (c == '"') {
      at = skip_string(text, at);
      continue;
    }
    ++at;
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) break;
  }
  return at;
}

}  // namespace

RawMembers::RawMembers(std::string_view object) noexcept : text_(object), at_(skip_spaces(object, 0) + 1) {}

std::optional<std::string_view> RawMembers::next_value() noexcept {
  at_ = skip_spaces(text_, at_);
  if (at_ < text_.size() && text_[at_] == ',') at_ = skip_spaces(text_, at_ + 1);
  if (at_ >= text_.size() || text_[at_] != '"') return std::nullopt;  // '}': the end
  at_ = skip_spaces(text_, skip_string(text_, at_));
  const std::size_t start = skip_spaces(text_, at_ + 1);  // after ':'
  at_ = skip_value(text_, start);
  return text_.substr(start, at_ - start);
}

void append_minified(std::string& out, std::string_view value) {
  out.reserve(out.size() + value.size());
  for (std::size_t at = 0; at < value.size();) {
    if (value[at] == '"') {
      const std::size_t end = skip_string(value, at);
      out.append(value.substr(at, end - at));
      at = end;
      continue;
    }
    if (!is_space(value[at])) out += value[at];
    ++at;
  }
}

}  // namespace tp
