#include "records/ekotrace_columns.hpp"

#include <fmt/format.h>

namespace tp {

std::string ekotrace_csv_header() {
  return fmt::format("{}\n", fmt::join(ekotrace_columns, ","));
}

std::string ekotrace_preset_columns() {
  std::string list;
  for (const std::string_view column : ekotrace_columns) {
    fmt::format_to(std::back_inserter(list), "{}{}=event.data.{}", list.empty() ? "" : ",", column, column);
  }
  return list;
}

}  // namespace tp
