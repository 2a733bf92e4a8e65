#include "ekotrace/layout.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/json_writer.hpp"

namespace tp::ekotrace {
namespace {

constexpr std::uint64_t largest_offset = 4096;  // a history larger than this is not an ekotrace history

[[noreturn]] void bad(std::string_view file, const std::string& why) {
  throw Error(ExitCode::bad_input, fmt::format("layout file {}: {}", file, why));
}

}  // namespace

Layout Layout::standard(unsigned word_size) {
  Layout layout;
  layout.word_size = word_size;
  if (word_size == 8) {
    layout.compact_log = 40;
    layout.in_use = 64;
  }
  return layout;
}

std::uint64_t Layout::history_size() const noexcept {
  auto end = std::max<std::uint64_t>(
      {tracer_id + 4, event_count + 4, clocks + 3ULL * word_size, compact_log + 3ULL * word_size});
  if (in_use) end = std::max(end, *in_use + 1);
  return end;
}

std::string Layout::to_json() const {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("word_size").uint(word_size);
  w.key("handle_history").uint(handle_history);
  w.key("tracer_id").uint(tracer_id);
  w.key("event_count").uint(event_count);
  w.key("clocks").uint(clocks);
  w.key("compact_log").uint(compact_log);
  w.key("in_use");
  if (in_use) {
    w.uint(*in_use);
  } else {
    w.null();
  }
  w.key("max_log_items").uint(max_log_items);
  w.key("max_clocks");
  if (max_clocks) {
    w.uint(*max_clocks);
  } else {
    w.null();
  }
  w.end_object();
  return out;
}

std::uint64_t plausible_max_clocks(const Layout& layout, std::uint64_t log_capacity) noexcept {
  if (layout.max_clocks) return *layout.max_clocks;
  constexpr std::uint64_t clock_bytes_beyond_share = 64 - 8;  // each clock takes 64 bytes of region, 8 of them its own
  constexpr std::uint64_t alignment = 64;
  const std::uint64_t log_bytes = std::min<std::uint64_t>(log_capacity, std::uint64_t{1} << 40U) * 4;
  return std::max<std::uint64_t>(2, (layout.history_size() + log_bytes + alignment) / clock_bytes_beyond_share);
}

Layout apply_layout_file(const Layout& base, std::string_view json, std::string_view file_name) {
  Layout layout = base;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const auto error = parser.parse(json.data(), json.size()).get(root); error) {
    bad(file_name, fmt::format("not JSON ({})", simdjson::error_message(error)));
  }
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) bad(file_name, "expected a JSON object");
  for (const auto field : object) {
    const std::string_view key = field.key;
    if (key == "in_use" && field.value.is_null()) {
      layout.in_use.reset();
      continue;
    }
    if (key == "max_clocks" && field.value.is_null()) {
      layout.max_clocks.reset();
      continue;
    }
    std::uint64_t value = 0;
    if (field.value.get(value) != simdjson::SUCCESS) {
      bad(file_name, fmt::format("\"{}\" must be a non-negative integer", key));
    }
    if (key == "word_size") {
      if (value != base.word_size) {
        bad(file_name, fmt::format("written for {}-bit targets, this target is {}-bit", value * 8, base.word_size * 8));
      }
      continue;
    }
    if (key == "max_log_items") {
      layout.max_log_items = value;
      continue;
    }
    if (key == "max_clocks") {
      layout.max_clocks = value;
      continue;
    }
    if (value > largest_offset) bad(file_name, fmt::format("\"{}\" = {} is not a plausible offset", key, value));
    if (key == "handle_history") {
      layout.handle_history = value;
    } else if (key == "tracer_id") {
      layout.tracer_id = value;
    } else if (key == "event_count") {
      layout.event_count = value;
    } else if (key == "clocks") {
      layout.clocks = value;
    } else if (key == "compact_log") {
      layout.compact_log = value;
    } else if (key == "in_use") {
      layout.in_use = value;
    } else {
      bad(file_name, fmt::format("unknown field \"{}\" (known: handle_history, tracer_id, event_count, clocks, "
                                 "compact_log, in_use, max_log_items, max_clocks, word_size)",
                                 key));
    }
  }
  return layout;
}

}  // namespace tp::ekotrace
