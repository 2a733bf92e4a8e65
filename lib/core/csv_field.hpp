// One CSV field as RFC 4180 (section 2) writes it: quoted when it holds the delimiter, a
// quote, CR or LF (or when asked), its quotes doubled. The one home of the rule, for
// trace-csv's rows and the tools' own tables (chibi-pull --format csv).
#pragma once

#include <string>
#include <string_view>

#include "core/out_buffer.hpp"

namespace tp {

// One field, quoted when `quote` or when it needs it (delimiter, quote, CR, LF).
void append_csv_field(OutBuffer& out, std::string_view text, bool quote, char delimiter);
// The same rule into a std::string, quoting only when needed (for tools' own tables).
void append_csv_field(std::string& out, std::string_view text, char delimiter = ',');

}  // namespace tp
