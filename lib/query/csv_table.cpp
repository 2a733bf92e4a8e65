#include "query/csv_table.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

#include "core/error.hpp"
#include "core/wall_clock.hpp"
#include "query/field_path.hpp"
#include "query/value_text.hpp"
#include "records/ekotrace_columns.hpp"
#include "records/vocabulary.hpp"

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
    columns.push_back(CsvColumn{std::string(header), FieldPath(resolve_field_alias(path))});
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
    if (clock != clock_name(RecordClock::us)) return false;  // only host monotonic time can be placed on the wall clock
    std::array<char, rfc3339_length> text{};
    write_rfc3339_utc(static_cast<std::int64_t>(value) + realtime_minus_monotonic_us_, text);
    out.append(text.data(), text.size());
    return true;
  }
  std::uint64_t per_second = 0;
  if (clock == clock_name(RecordClock::ns)) per_second = 1'000'000'000;
  if (clock == clock_name(RecordClock::us)) per_second = 1'000'000;
  if (clock == clock_name(RecordClock::cycles)) per_second = cpu_hz_;
  if (per_second == 0) return false;
  // Whole seconds and the fraction apart, so large cycle counts keep their precision.
  const std::uint64_t whole = value / per_second;
  const std::uint64_t fraction = value % per_second;
  const double seconds = static_cast<double>(whole) + static_cast<double>(fraction) / static_cast<double>(per_second);
  fmt::format_to(std::back_inserter(out), "{:.9f}", seconds);
  return true;
}

simdjson::error_code CsvRowWriter::row(simdjson::dom::object root, OutBuffer& out) {
  const std::size_t start = out.size();
  if (time_ != TimeFormat::raw) {
    clock_.clear();
    std::string_view clock;
    if (root["clock"].get_string().get(clock) == simdjson::SUCCESS) clock_ = clock;
  }
  ValueText value;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (i != 0) out += delimiter_;
    const simdjson::error_code error = field_text(root, columns_[i].field, value);
    if (error != simdjson::SUCCESS && !is_missing_field(error)) {
      out.commit_to(out.data() + start);
      return error;
    }
    if (error != simdjson::SUCCESS || value.type == ValueType::null) continue;  // an empty cell
    if (time_ != TimeFormat::raw && value.type == ValueType::number && columns_[i].field.pointer() == "/timestamp") {
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

void ColumnInference::walk(simdjson::dom::element value, std::string& path) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    add_path(path);
    return;
  }
  for (const simdjson::dom::key_value_pair field : object) {
    const std::size_t length = path.size();
    if (!path.empty()) path += '.';
    path += field.key;
    walk(field.value, path);
    path.resize(length);
  }
}

void ColumnInference::add(simdjson::dom::object root) {
  std::string path;
  for (const simdjson::dom::key_value_pair field : root) {
    path.assign(field.key);
    walk(field.value, path);
  }
}

std::vector<CsvColumn> ColumnInference::columns() const {
  std::vector<CsvColumn> columns;
  columns.reserve(paths_.size());
  for (const std::string& path : paths_) columns.push_back(CsvColumn{path, FieldPath(path)});
  return columns;
}

}  // namespace tp
