#include "core/csv_field.hpp"

namespace tp {

namespace {
bool needs_csv_quotes(std::string_view text, char delimiter) noexcept {
  return text.find_first_of("\"\r\n") != std::string_view::npos || text.find(delimiter) != std::string_view::npos;
}
}  // namespace

void append_csv_field(std::string& out, std::string_view text, char delimiter) {
  if (!needs_csv_quotes(text, delimiter)) {
    out += text;
    return;
  }
  out += '"';
  for (const char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  out += '"';
}

void append_csv_field(OutBuffer& out, std::string_view text, bool quote, char delimiter) {
  quote = quote || needs_csv_quotes(text, delimiter);
  if (!quote) {
    out += text;
    return;
  }
  // RFC 4180 section 2: a quoted field doubles its quotes. Worst case: every byte a quote.
  char* p = out.ensure(text.size() * 2 + 2);
  *p++ = '"';
  for (const char c : text) {
    *p++ = c;
    if (c == '"') *p++ = '"';
  }
  *p++ = '"';
  out.commit_to(p);
}

}  // namespace tp
