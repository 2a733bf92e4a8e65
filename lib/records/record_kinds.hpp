// The event kinds a record may carry (record.schema.json: the Callisto core kinds and the
// project's own), so a tool can tell a user that a name selects nothing.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace tp {

// Every kind of record.schema.json, in its order, then "Itm" (trace-filter's name for raw
// frame lines, which have no event).
std::span<const std::string_view> known_record_kinds();

[[nodiscard]] bool is_known_record_kind(std::string_view name);

// A known kind that differs from `name` only in letter case (`text` -> Text), if any.
std::optional<std::string_view> kind_spelled_differently(std::string_view name);

}  // namespace tp
