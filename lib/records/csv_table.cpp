#include "records/csv_table.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

#include "core/error.hpp"
#include "core/wall_clock.hpp"
#include "records/ekotrace_columns.hpp"
#include "records/field_path.hpp"
#include "records/value_text.hpp"

namespace tp {
namespace {

using namespace std::string_view_literals;

struct Preset {
  std::string_view name;
  std::string_view columns;
};

// ekotrace: eko-collect's CSV columns (ekotrace's own reporting format), read from the
// fields of its records' event data (records/ekotrace_columns: built, not listed here).
constexpr std::array<Preset, 4> presets{{
    {"basic", "time,port,kind,message"},
    {"counters", "time,port,counter_id=event.data.counter_id,value=event.data.value"},
    {"exceptions", "time,number=event.data.number,name=event.data.name,action=event.data.action"},
    {"ekotrace", ""},
}};

}  // namespace

std::vector<CsvColumn> parse_columns(std::string_view list) {
  std::vector<CsvColumn> columns;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string_view item = list.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    std::string_view header = item;
    std::string_view path = item;
    if (const std::size_t eq = item.find('='); eq != std::string_view::npos) {
      header = item.substr(0, eq);
      path = item.substr(eq + 1);
    }
    if (header.empty() || path.empty()) throw Error(ExitCode::usage, fmt::format("--columns: bad column '{}'", item));
    columns.push_back(CsvColumn{std::string(header), dotted_to_pointer(resolve_field_alias(path))});
  }
  if (columns.empty()) throw Error(ExitCode::usage, "--columns needs at least one column");
  return columns;
}

std::vector<std::string_view> preset_names() {
  std::vector<std::string_view> names;
  names.reserve(presets.size());
  for (const Preset& preset : presets) names.push_back(preset.name);
  return names;
}

std::vector<CsvColumn> preset_columns(std::string_view name) {
  for (const Preset& preset : presets) {
    if (preset.name == name) return parse_columns(name == "ekotrace" ? ekotrace_preset_columns() : preset.columns);
  }
  throw Error(ExitCode::usage, fmt::format("unknown preset '{}' (known: {})", name, fmt::join(preset_names(), ", ")));
}

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

CsvRowWriter::CsvRowWriter(std::vector<CsvColumn> columns, char delimiter, TimeFormat time, std::uint64_t cpu_hz,
                           bool crlf)
    : columns_(std::move(columns)),
      delimiter_(delimiter),
      line_end_(crlf ? "\r\n" : "\n"),
      time_(time),
      cpu_hz_(cpu_hz),
      realtime_minus_monotonic_us_(realtime_minus_monotonic_us()) {}

void CsvRowWriter::header(OutBuffer& out) const {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (i != 0) out += delimiter_;
    append_csv_field(out, columns_[i].header, false, delimiter_);
  }
  out += line_end_;
}

bool CsvRowWriter::append_time(OutBuffer& out, std::string_view timestamp, std::string_view clock) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), value);
  if (ec != std::errc{} || end != timestamp.data() + timestamp.size()) return false;
  if (time_ == TimeFormat::rfc3339) {
    if (clock != "us") return false;  // only host monotonic time can be placed on the wall clock
    std::array<char, rfc3339_length> text{};
    write_rfc3339_utc(static_cast<std::int64_t>(value) + realtime_minus_monotonic_us_, text);
    out.append(text.data(), text.size());
    return true;
  }
  std::uint64_t per_second = 0;
  if (clock == "ns") per_second = 1'000'000'000;
  if (clock == "us") per_second = 1'000'000;
  if (clock == "cycles") per_second = cpu_hz_;
  if (per_second == 0) return false;
  // Whole seconds and the fraction apart, so large cycle counts keep their precision.
  const std::uint64_t whole = value / per_second;
  const std::uint64_t fraction = value % per_second;
  const double seconds = static_cast<double>(whole) + static_cast<double>(fraction) / static_cast<double>(per_second);
  fmt::format_to(std::back_inserter(out), "{:.9f}", seconds);
  return true;
}

simdjson::error_code CsvRowWriter::row(simdjson::ondemand::document& document, OutBuffer& out) {
  const std::size_t start = out.size();
  simdjson::ondemand::json_type type{};
  if (auto error = document.type().get(type); error != simdjson::SUCCESS) return error;
  if (type != simdjson::ondemand::json_type::object) return simdjson::INCORRECT_TYPE;
  if (time_ != TimeFormat::raw) {
    ValueText clock;
    clock_.clear();
    if (field_text(document, "/clock", clock) == simdjson::SUCCESS) clock_ = clock.text;
  }
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (i != 0) out += delimiter_;
    ValueText value;
    const simdjson::error_code error = field_text(document, columns_[i].pointer, value);
    if (error != simdjson::SUCCESS && !is_missing_field(error)) {
      out.commit_to(out.data() + start);
      return error;
    }
    if (error != simdjson::SUCCESS || value.type == ValueType::null) continue;  // an empty cell
    if (time_ != TimeFormat::raw && columns_[i].pointer == "/timestamp" && value.type == ValueType::number) {
      if (append_time(out, value.text, clock_)) continue;
      ++unconverted_times_;
    }
    const bool quote =
        value.type == ValueType::string || value.type == ValueType::object || value.type == ValueType::array;
    append_csv_field(out, value.text, quote, delimiter_);
  }
  out += line_end_;
  return simdjson::SUCCESS;
}

void ColumnInference::add_path(const std::string& path) {
  if (seen_.insert(path).second) paths_.push_back(path);
}

simdjson::error_code ColumnInference::walk(simdjson::ondemand::value value, std::string& path) {
  simdjson::ondemand::json_type type{};
  if (auto error = value.type().get(type); error != simdjson::SUCCESS) return error;
  if (type != simdjson::ondemand::json_type::object) {
    add_path(path);
    return simdjson::SUCCESS;
  }
  simdjson::ondemand::object object;
  if (auto error = value.get_object().get(object); error != simdjson::SUCCESS) return error;
  for (auto field : object) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key); error != simdjson::SUCCESS) return error;
    const std::size_t length = path.size();
    if (!path.empty()) path += '.';
    path += key;
    simdjson::ondemand::value child;
    if (auto error = field.value().get(child); error != simdjson::SUCCESS) return error;
    if (auto error = walk(child, path); error != simdjson::SUCCESS) return error;
    path.resize(length);
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ColumnInference::add(simdjson::ondemand::document& document) {
  simdjson::ondemand::object object;
  if (auto error = document.get_object().get(object); error != simdjson::SUCCESS) return error;
  std::string path;
  for (auto field : object) {
    std::string_view key;
    if (auto error = field.unescaped_key().get(key); error != simdjson::SUCCESS) return error;
    path.assign(key);
    simdjson::ondemand::value child;
    if (auto error = field.value().get(child); error != simdjson::SUCCESS) return error;
    if (auto error = walk(child, path); error != simdjson::SUCCESS) return error;
  }
  return simdjson::SUCCESS;
}

std::vector<CsvColumn> ColumnInference::columns() const {
  std::vector<CsvColumn> columns;
  columns.reserve(paths_.size());
  for (const std::string& path : paths_) columns.push_back(CsvColumn{path, dotted_to_pointer(path)});
  return columns;
}

}  // namespace tp
