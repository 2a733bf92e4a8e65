#include "records/record_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "records/fleet_fields.hpp"
#include "records/vocabulary.hpp"

namespace tp {
namespace {

using simdjson::dom::element_type;

// Whether `key` (already known to have N - 1 bytes) is `name`: a fixed-size compare the
// compiler inlines (std::string_view's == called memcmp, 6% of trace-filter's time).
template <std::size_t N>
bool key_is(std::string_view key, const char (&name)[N]) noexcept {
  return std::memcmp(key.data(), name, N - 1) == 0;
}

constexpr std::uint64_t no_max = ~std::uint64_t{0};
constexpr std::uint64_t u32_max = 0xFFFFFFFFU;

// The data rules of every kind of record.schema.json (Callisto's core kinds first, in its
// order); tests/unit keeps them equal to the schema.
constexpr std::array<std::uint64_t, 3> data_trace_size_values = {1, 2, 4};
constexpr std::array<std::uint64_t, 3> hardware_size_values = {1, 2, 4};
constexpr std::array<std::uint64_t, 2> extension_sh_values = {0, 1};

constexpr std::array<std::string_view, 3> text_levels = {"log", "warning", "error"};
constexpr std::array<FieldRule, 2> text_fields = {{
    {"message", FieldType::string, true, false},
    {"level", FieldType::string_enum, false, false, no_max, text_levels},
}};
constexpr std::array<std::string_view, 2> marker_phases = {"start", "stop"};
constexpr std::array<FieldRule, 3> marker_fields = {{
    {"id", FieldType::u64, true, false, u32_max},
    {"name", FieldType::string, false, true},
    {"phase", FieldType::string_enum, false, false, no_max, marker_phases},
}};
constexpr std::array<FieldRule, 4> task_switch_fields = {{
    {"from_task", FieldType::u64, true, false, u32_max},
    {"to_task", FieldType::u64, true, false, u32_max},
    {"from_name", FieldType::string, false, false},
    {"to_name", FieldType::string, false, false},
}};
constexpr std::array<FieldRule, 2> isr_enter_fields = {{
    {"isr_id", FieldType::u64, true, false, u32_max},
    {"name", FieldType::string, false, true},
}};
constexpr std::array<FieldRule, 2> isr_exit_fields = {{
    {"isr_id", FieldType::u64, true, false, u32_max},
    {"to_scheduler", FieldType::boolean, false, false},
}};
constexpr std::array<FieldRule, 2> overflow_fields = {{
    {"dropped", FieldType::u64, false, false, no_max},
    {"target_count", FieldType::u64, false, false, u32_max},
}};
constexpr std::array<FieldRule, 2> counter_fields = {{
    {"counter_id", FieldType::u64, true, false, u32_max},
    {"value", FieldType::u64, true, false, no_max},
}};
constexpr std::array<FieldRule, 1> raw_fields = {{
    {"data", FieldType::bytes, true, false},
}};
constexpr std::array<FieldRule, 4> exception_fields = {{
    {"number", FieldType::u64, true, false, 511},
    {"name", FieldType::string, true, false},
    {"action", FieldType::string_enum, true, false, no_max, exception_action_names},
    {"handler", FieldType::string, false, false},
}};
constexpr std::array<FieldRule, 5> pc_sample_fields = {{
    {"pc", FieldType::u64, true, false, u32_max},
    {"sleep", FieldType::boolean, true, false},
    {"function", FieldType::string, false, false},
    {"file", FieldType::string, false, false},
    {"line", FieldType::u64, false, false, u32_max},
}};
constexpr std::array<FieldRule, 4> data_trace_fields = {{
    {"comparator", FieldType::u64, true, false, 3},
    {"type", FieldType::string_enum, true, false, no_max, data_trace_type_names},
    {"value", FieldType::u64, true, false, u32_max},
    {"size", FieldType::integer_enum, true, false, no_max, {}, data_trace_size_values},
}};
constexpr std::array<FieldRule, 6> event_counter_fields = {{
    {"cpi", FieldType::boolean, true, false},
    {"exc", FieldType::boolean, true, false},
    {"sleep", FieldType::boolean, true, false},
    {"lsu", FieldType::boolean, true, false},
    {"fold", FieldType::boolean, true, false},
    {"cyc", FieldType::boolean, true, false},
}};
constexpr std::array<FieldRule, 3> hardware_fields = {{
    {"discriminator", FieldType::u64, true, false, 31},
    {"value", FieldType::u64, true, false, u32_max},
    {"size", FieldType::integer_enum, true, false, no_max, {}, hardware_size_values},
}};
constexpr std::array<FieldRule, 2> extension_fields = {{
    {"sh", FieldType::integer_enum, true, false, no_max, {}, extension_sh_values},
    {"value", FieldType::u64, true, false, no_max},
}};
constexpr std::array<FieldRule, 3> malformed_fields = {{
    {"reason", FieldType::string, true, false},
    {"bytes", FieldType::u64, true, false, no_max},
    {"data", FieldType::bytes, false, false},
}};
constexpr std::array<FieldRule, 2> thread_exit_fields = {{
    {"thread", FieldType::u64, true, false, u32_max},
    {"name", FieldType::string, false, false},
}};
constexpr std::array<FieldRule, 8> thread_stat_fields = {{
    {"name", FieldType::string, true, false},
    {"prio", FieldType::u64, true, false, u32_max},
    {"state", FieldType::string, true, false},
    {"stack_begin", FieldType::u64, true, false, u32_max},
    {"stack_end", FieldType::u64, true, false, u32_max},
    {"stack_size", FieldType::u64, true, true, no_max},
    {"stack_used", FieldType::u64, true, true, no_max},
    {"stack_percent", FieldType::u64, true, true, no_max},
}};
constexpr std::array<FieldRule, 2> thread_usage_fields = {{
    {"name", FieldType::string, true, false},
    {"percent", FieldType::number, true, false},
}};
constexpr std::array<FieldRule, 2> critical_usage_fields = {{
    {"thread_percent", FieldType::number, true, false},
    {"isr_percent", FieldType::number, true, false},
}};
constexpr std::array<FieldRule, 5> thread_info_fields = {{
    {"number", FieldType::u64, true, false, u32_max},
    {"name", FieldType::string, true, false},
    {"prio", FieldType::u64, true, false, u32_max},
    {"logged", FieldType::boolean, true, false},
    {"deleted", FieldType::boolean, true, false},
}};
constexpr std::array<FieldRule, 3> switch_record_fields = {{
    {"out", FieldType::u64, true, false, u32_max},
    {"in", FieldType::u64, true, false, u32_max},
    {"tick", FieldType::u64, true, false, u32_max},
}};
constexpr std::array<FieldRule, 2> trigger_fields = {{
    {"name", FieldType::string, true, false},
    {"tick", FieldType::u64, true, false, u32_max},
}};
constexpr std::array<FieldRule, 9> eko_event_fields = {{
    {"session_id", FieldType::u64, true, false, no_max},
    {"segment_id", FieldType::u64, true, false, no_max},
    {"segment_index", FieldType::u64, true, false, u32_max},
    {"receive_time", FieldType::string, true, false},
    {"tracer_id", FieldType::u64, true, false, u32_max},
    {"tracer", FieldType::string, false, false},
    {"event_id", FieldType::u64, true, false, u32_max},
    {"event_payload", FieldType::u64, false, false, u32_max},
    {"reserved", FieldType::string, false, false},
}};
constexpr std::array<FieldRule, 8> eko_clock_fields = {{
    {"session_id", FieldType::u64, true, false, no_max},
    {"segment_id", FieldType::u64, true, false, no_max},
    {"segment_index", FieldType::u64, true, false, u32_max},
    {"receive_time", FieldType::string, true, false},
    {"tracer_id", FieldType::u64, true, false, u32_max},
    {"tracer", FieldType::string, false, false},
    {"lc_tracer_id", FieldType::u64, true, false, u32_max},
    {"lc_clock", FieldType::u64, true, false, u32_max},
}};

constexpr std::array<std::string_view, 2> top_handler_source_values = {"exception", "isr"};
constexpr std::array<FieldRule, 10> top_summary_fields = {{
    {"records", FieldType::u64, true, false},
    {"span", FieldType::u64, true, false},
    {"pc_samples", FieldType::u64, true, false},
    {"sleep_samples", FieldType::u64, true, false},
    {"overflows", FieldType::u64, true, false},
    {"resyncs", FieldType::u64, true, false},
    {"time_anomalies", FieldType::u64, true, false},
    {"other_clock_records", FieldType::u64, true, false},
    {"uncertain", FieldType::u64, true, false},
    {"final", FieldType::boolean, true, false},
}};
constexpr std::array<FieldRule, 4> top_function_fields = {{
    {"rank", FieldType::u64, true, false, u32_max},
    {"function", FieldType::string, true, false},
    {"samples", FieldType::u64, true, false},
    {"share", FieldType::number, true, false},
}};
// trace-serve --top-interval's load series and durations histogram (lib/analysis LoadSeries,
// DurationHistogram).
constexpr std::size_t load_bins_max = 1024;
constexpr std::size_t hist_buckets = 496;
constexpr FieldRule load_series_field = {"load", FieldType::u64_array, false, false, no_max, {}, {}, load_bins_max};
constexpr std::array<FieldRule, 20> top_handler_fields = {{
    {"source", FieldType::string_enum, true, false, no_max, top_handler_source_values},
    {"number", FieldType::u64, true, false, u32_max},
    {"name", FieldType::string, true, true},
    {"count", FieldType::u64, true, false},
    {"total", FieldType::u64, true, false},
    {"min", FieldType::u64, true, true},
    {"avg", FieldType::number, true, false},
    {"max", FieldType::u64, true, true},
    {"max_nesting", FieldType::u64, true, false, u32_max},
    {"share", FieldType::number, true, false},
    {"uncertain", FieldType::u64, true, false},
    {"load_width", FieldType::u64, false, false},
    {"load_first", FieldType::u64, false, false},
    load_series_field,
    {"hist_first", FieldType::u64, false, false, hist_buckets - 1},
    {"hist", FieldType::u64_array, false, false, no_max, {}, {}, hist_buckets},
    {"p50", FieldType::u64, false, false},
    {"p99", FieldType::u64, false, false},
    {"worst_start", FieldType::u64, false, false},
    {"worst_end", FieldType::u64, false, false},
}};
constexpr std::array<FieldRule, 8> top_task_fields = {{
    {"task", FieldType::u64, true, true, u32_max},
    {"name", FieldType::string, true, true},
    {"time", FieldType::u64, true, false},
    {"share", FieldType::number, true, false},
    {"uncertain_time", FieldType::u64, true, false},
    {"load_width", FieldType::u64, false, false},
    {"load_first", FieldType::u64, false, false},
    load_series_field,
}};
constexpr std::array<std::string_view, 2> loss_reasons = {"buffer_full", "too_large"};
constexpr std::array<FieldRule, 4> loss_fields = {{
    {"first_seq", FieldType::u64, true, false},
    {"last_seq", FieldType::u64, true, false},
    {"records", FieldType::u64, true, false},
    {"reason", FieldType::string_enum, true, false, no_max, loss_reasons},
}};

// SystemView's (lib/sysview/records.hpp).
constexpr std::array<FieldRule, 3> task_info_fields = {{
    {"task", FieldType::u64, true, false, u32_max},
    {"name", FieldType::string, true, false},
    {"prio", FieldType::u64, true, false, u32_max},
}};
constexpr std::array<std::string_view, 4> task_states = {"created", "ready", "blocked", "terminated"};
constexpr std::array<FieldRule, 4> task_state_fields = {{
    {"task", FieldType::u64, true, false, u32_max},
    {"state", FieldType::string_enum, true, false, no_max, task_states},
    {"cause", FieldType::u64, false, false, u32_max},
    {"name", FieldType::string, false, false},
}};
constexpr std::array<FieldRule, 5> stack_info_fields = {{
    {"task", FieldType::u64, true, false, u32_max},
    {"base", FieldType::u64, true, false, u32_max},
    {"size", FieldType::u64, true, false, u32_max},
    {"used", FieldType::u64, true, false, u32_max},
    {"name", FieldType::string, false, false},
}};
constexpr std::array<FieldRule, 2> timer_enter_fields = {{
    {"timer", FieldType::u64, true, false, u32_max},
    {"name", FieldType::string, false, false},
}};
constexpr std::array<FieldRule, 3> data_sample_fields = {{
    {"id", FieldType::u64, true, false, u32_max},
    {"raw", FieldType::u64, true, false, u32_max},
    {"value", FieldType::real, true, true},
}};
constexpr std::array<std::string_view, 3> heap_actions = {"define", "alloc", "free"};
constexpr std::array<FieldRule, 6> heap_event_fields = {{
    {"action", FieldType::string_enum, true, false, no_max, heap_actions},
    {"heap", FieldType::u64, true, false, u32_max},
    {"address", FieldType::u64, true, false, u32_max},
    {"size", FieldType::u64, false, false, u32_max},
    {"metadata", FieldType::u64, false, false, u32_max},
    {"tag", FieldType::u64, false, false, u32_max},
}};
constexpr std::array<std::string_view, 10> system_info_items = {
    "trace_start", "trace_stop", "init", "systime", "description", "module", "modules", "resource", "marker", "data"};
constexpr std::array<FieldRule, 13> system_info_fields = {{
    {"item", FieldType::string_enum, true, false, no_max, system_info_items},
    {"text", FieldType::string, false, false},
    {"sys_hz", FieldType::u64, false, false, u32_max},
    {"cpu_hz", FieldType::u64, false, false, u32_max},
    {"ram_base", FieldType::u64, false, false, u32_max},
    {"id_shift", FieldType::u64, false, false, u32_max},
    {"cycles", FieldType::u64, false, false, u32_max},
    {"us", FieldType::u64, false, false, no_max},
    {"id", FieldType::u64, false, false, u32_max},
    {"module", FieldType::u64, false, false, u32_max},
    {"event_offset", FieldType::u64, false, false, u32_max},
    {"count", FieldType::u64, false, false, u32_max},
    {"unit", FieldType::string, false, false},
}};
constexpr std::array<FieldRule, 3> user_event_fields = {{
    {"event_id", FieldType::u64, true, false, u32_max},
    {"extended_id", FieldType::u64, false, false, u32_max},
    {"data", FieldType::bytes, true, false},
}};

// Indexed by RecordKind: a rule's kind is record_kind_names' at its index.
constexpr std::array<KindRule, record_kind_names.size()> kind_rules = {{
    {kind_name(RecordKind::text), true, text_fields},
    {kind_name(RecordKind::marker), true, marker_fields},
    {kind_name(RecordKind::task_switch), true, task_switch_fields},
    {kind_name(RecordKind::isr_enter), true, isr_enter_fields},
    {kind_name(RecordKind::isr_exit), true, isr_exit_fields},
    {kind_name(RecordKind::idle_enter), false, {}},
    {kind_name(RecordKind::idle_exit), false, {}},
    {kind_name(RecordKind::counter), true, counter_fields},
    {kind_name(RecordKind::raw), true, raw_fields},
    {kind_name(RecordKind::exception), true, exception_fields},
    {kind_name(RecordKind::pc_sample), true, pc_sample_fields},
    {kind_name(RecordKind::data_trace), true, data_trace_fields},
    {kind_name(RecordKind::event_counter), true, event_counter_fields},
    {kind_name(RecordKind::overflow), true, overflow_fields},
    {kind_name(RecordKind::hardware), true, hardware_fields},
    {kind_name(RecordKind::extension), true, extension_fields},
    {kind_name(RecordKind::malformed), true, malformed_fields},
    {kind_name(RecordKind::thread_exit), true, thread_exit_fields},
    {kind_name(RecordKind::thread_stat), true, thread_stat_fields},
    {kind_name(RecordKind::thread_usage), true, thread_usage_fields},
    {kind_name(RecordKind::critical_usage), true, critical_usage_fields},
    {kind_name(RecordKind::thread_info), true, thread_info_fields},
    {kind_name(RecordKind::switch_record), true, switch_record_fields},
    {kind_name(RecordKind::trigger), true, trigger_fields},
    {kind_name(RecordKind::eko_event), true, eko_event_fields},
    {kind_name(RecordKind::eko_clock), true, eko_clock_fields},
    {kind_name(RecordKind::top_summary), true, top_summary_fields},
    {kind_name(RecordKind::top_function), true, top_function_fields},
    {kind_name(RecordKind::top_handler), true, top_handler_fields},
    {kind_name(RecordKind::top_task), true, top_task_fields},
    {kind_name(RecordKind::loss), true, loss_fields},
    {kind_name(RecordKind::task_info), true, task_info_fields},
    {kind_name(RecordKind::task_state), true, task_state_fields},
    {kind_name(RecordKind::stack_info), true, stack_info_fields},
    {kind_name(RecordKind::timer_enter), true, timer_enter_fields},
    {kind_name(RecordKind::timer_exit), true, {}},
    {kind_name(RecordKind::data_sample), true, data_sample_fields},
    {kind_name(RecordKind::heap_event), true, heap_event_fields},
    {kind_name(RecordKind::system_info), true, system_info_fields},
    {kind_name(RecordKind::user_event), true, user_event_fields},
}};

static_assert([] {
  for (std::size_t i = 0; i < kind_rules.size(); ++i) {
    if (kind_rules[i].kind != record_kind_names[i]) return false;
  }
  return true;
}());

const KindRule* rule_for(std::string_view kind) noexcept {
  for (const KindRule& rule : kind_rules) {
    if (same_text(rule.kind, kind)) return &rule;
  }
  return nullptr;
}

// An array of unsigned integers each at most `max`, of min_items to max_items items.
bool is_uint_array(simdjson::dom::element value, std::uint64_t max, std::size_t min_items = 0,
                   std::size_t max_items = ~std::size_t{0}) {
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) return false;
  std::size_t items = 0;
  for (const simdjson::dom::element item : array) {
    std::uint64_t number = 0;
    if (item.get_uint64().get(number) != simdjson::SUCCESS || number > max) return false;
    ++items;
  }
  return items >= min_items && items <= max_items;
}

bool is_byte_array(simdjson::dom::element value, std::size_t min_items = 0, std::size_t max_items = ~std::size_t{0}) {
  return is_uint_array(value, 255, min_items, max_items);
}

// Whether `value` is what `rule` allows.
bool field_valid(const FieldRule& rule, simdjson::dom::element value) {
  if (value.type() == element_type::NULL_VALUE) return rule.nullable;
  switch (rule.type) {
    case FieldType::u64: {
      std::uint64_t number = 0;
      return value.get_uint64().get(number) == simdjson::SUCCESS && number <= rule.max;
    }
    case FieldType::string:
      return value.is_string();
    case FieldType::boolean:
      return value.is_bool();
    case FieldType::number: {
      double number = 0;
      return value.get_double().get(number) == simdjson::SUCCESS && number >= 0;
    }
    case FieldType::real: {
      double number = 0;
      return value.get_double().get(number) == simdjson::SUCCESS;
    }
    case FieldType::bytes:
      return is_byte_array(value);
    case FieldType::u64_array:
      return is_uint_array(value, rule.max, 0, rule.max_items);
    case FieldType::string_enum: {
      std::string_view text;
      return value.get_string().get(text) == simdjson::SUCCESS &&
             std::any_of(rule.strings.begin(), rule.strings.end(),
                         [&](std::string_view allowed) { return same_text(allowed, text); });
    }
    case FieldType::integer_enum: {
      std::uint64_t number = 0;
      return value.get_uint64().get(number) == simdjson::SUCCESS &&
             std::find(rule.integers.begin(), rule.integers.end(), number) != rule.integers.end();
    }
  }
  return false;
}

// event.data checked against the kind's rule, in one pass over its members.
bool check_data(const KindRule& rule, simdjson::dom::object fields, std::string_view kind, std::string& problem) {
  std::uint64_t seen = 0;  // bit i: the rule's field i was present
  for (const simdjson::dom::key_value_pair field : fields) {
    for (std::size_t i = 0; i < rule.fields.size(); ++i) {
      if (!same_text(rule.fields[i].name, field.key)) continue;
      if ((seen & (std::uint64_t{1} << i)) != 0) {
        problem = fmt::format("a {} event whose \"{}\" appears twice", kind, field.key);
        return false;
      }
      if (!field_valid(rule.fields[i], field.value)) {
        problem = fmt::format("a {} event whose \"{}\" is not what the record schema says", kind, field.key);
        return false;
      }
      seen |= std::uint64_t{1} << i;
    }
  }
  for (std::size_t i = 0; i < rule.fields.size(); ++i) {
    if (rule.fields[i].required && (seen & (std::uint64_t{1} << i)) == 0) {
      problem = fmt::format("a {} event without \"{}\" (record schema)", kind, rule.fields[i].name);
      return false;
    }
  }
  return true;
}

// event: {"kind":K, "data":{...}}, the data as the kind's rule says.
bool check_event(simdjson::dom::element event, CheckedLine& line, std::string& problem) {
  simdjson::dom::object object;
  if (event.get_object().get(object) != simdjson::SUCCESS) {
    problem = "\"event\" is not an object";
    return false;
  }
  // One pass for both fields. Either given twice means two things: consumers take one or
  // the other (simdjson the first, JSON.parse and jq the last), so it is no record.
  std::optional<simdjson::dom::element> kind_value;
  std::optional<simdjson::dom::element> data;
  for (const simdjson::dom::key_value_pair member : object) {
    if (member.key.size() != 4) continue;
    std::optional<simdjson::dom::element>* field = key_is(member.key, "kind")   ? &kind_value
                                                   : key_is(member.key, "data") ? &data
                                                                                : nullptr;
    if (field == nullptr) continue;
    if (field->has_value()) {
      problem = fmt::format("\"event\".\"{}\" appears twice", member.key);
      return false;
    }
    *field = member.value;
  }
  std::string_view kind;
  if (!kind_value || kind_value->get_string().get(kind) != simdjson::SUCCESS) {
    problem = "\"event\" has no \"kind\" string";
    return false;
  }
  line.kind = kind;
  if (same_text(line.kind, frames_kind_name)) {
    problem = "kind \"Itm\" is reserved for frames lines";
    return false;
  }
  const KindRule* rule = rule_for(line.kind);
  if (!data) {
    if (rule == nullptr || !rule->has_data) return true;
    problem = fmt::format("a {} event without \"data\" (record schema)", line.kind);
    return false;
  }
  simdjson::dom::object fields;
  if (data->get_object().get(fields) != simdjson::SUCCESS) {
    problem = "\"event\".\"data\" is not an object";
    return false;
  }
  // A kind the schema does not know (another producer's): its data is its own.
  return rule == nullptr || check_data(*rule, fields, line.kind, problem);
}

// frames: [{"port":0-255,"data":[1-4 bytes],"timestamp":T}, ...]
bool check_frames(simdjson::dom::element value, CheckedLine& line, std::string& problem) {
  simdjson::dom::array frames;
  if (value.get_array().get(frames) != simdjson::SUCCESS) {
    problem = "\"frames\" is not an array";
    return false;
  }
  for (const simdjson::dom::element item : frames) {
    simdjson::dom::object frame;
    std::uint64_t port = 0;
    if (item.get_object().get(frame) != simdjson::SUCCESS ||
        frame["port"].get_uint64().get(port) != simdjson::SUCCESS || port > 255) {
      problem = "a frame without a port 0-255";
      return false;
    }
    simdjson::dom::element bytes;
    if (frame["data"].get(bytes) != simdjson::SUCCESS || !is_byte_array(bytes, 1, 4)) {
      problem = "a frame without 1 to 4 data bytes";
      return false;
    }
    std::uint64_t timestamp = 0;
    if (frame["timestamp"].get_uint64().get(timestamp) != simdjson::SUCCESS) {
      problem = "a frame without a timestamp";
      return false;
    }
    if (port < 32) {
      line.frame_port_bits |= 1U << port;
    } else {
      line.frame_high_port = true;
    }
  }
  return true;
}

// The top-level fields the record defines, in record.schema.json's order.
enum class TopField : std::uint8_t {
  timestamp,
  port,
  event,
  frames,
  source,
  clock,
  time_exact,
  board,
  run,
  seq,
  host_us,
  other
};

// One length test and one comparison per key (every line has five or six of them).
TopField top_field(std::string_view key) noexcept {
  switch (key.size()) {
    case 3:
      return key_is(key, "seq") ? TopField::seq : key_is(key, "run") ? TopField::run : TopField::other;
    case 4:
      return key_is(key, "port") ? TopField::port : TopField::other;
    case 5:
      return key_is(key, "event")   ? TopField::event
             : key_is(key, "clock") ? TopField::clock
             : key_is(key, "board") ? TopField::board
                                    : TopField::other;
    case 6:
      return key_is(key, "source") ? TopField::source : key_is(key, "frames") ? TopField::frames : TopField::other;
    case 7:
      return key_is(key, "host_us") ? TopField::host_us : TopField::other;
    case 9:
      return key_is(key, "timestamp") ? TopField::timestamp : TopField::other;
    case 10:
      return key_is(key, "time_exact") ? TopField::time_exact : TopField::other;
    default:
      return TopField::other;
  }
}

struct TopLevel {
  CheckedLine& line;
  bool has_timestamp = false;
  bool has_port = false;
  bool has_event = false;
};

bool check_port(simdjson::dom::element value, TopLevel& top, std::string& problem) {
  std::uint64_t port = 0;
  top.has_port = value.get_uint64().get(port) == simdjson::SUCCESS && port <= 255;
  if (!top.has_port) problem = "\"port\" is not a port number 0-255";
  top.line.port = static_cast<std::uint32_t>(port);
  return top.has_port;
}

bool check_clock(simdjson::dom::element value, CheckedLine& line, std::string& problem) {
  std::string_view clock;
  if (value.get_string().get(clock) == simdjson::SUCCESS &&
      std::any_of(record_clock_names.begin(), record_clock_names.end(),
                  [&](std::string_view known) { return same_text(known, clock); })) {
    line.clock = clock;
    return true;
  }
  problem = "\"clock\" is not one of cycles, ns, us, ticks, none";
  return false;
}

// One member of the top level; false (with the problem) when it breaks a rule.
bool check_member(TopField field, simdjson::dom::element value, TopLevel& top, std::string& problem) {
  CheckedLine& line = top.line;
  switch (field) {
    case TopField::timestamp:
      top.has_timestamp = value.get_uint64().get(line.timestamp) == simdjson::SUCCESS;
      if (!top.has_timestamp) problem = "\"timestamp\" is not an unsigned integer";
      return top.has_timestamp;
    case TopField::port:
      return check_port(value, top, problem);
    case TopField::event:
      top.has_event = true;
      return check_event(value, line, problem);
    case TopField::frames:
      line.frames = true;
      return check_frames(value, line, problem);
    case TopField::source: {
      std::string_view source;
      if (value.get_string().get(source) == simdjson::SUCCESS) {
        line.source.emplace(source);
        return true;
      }
      problem = "\"source\" is not a string";
      return false;
    }
    case TopField::clock:
      return check_clock(value, line, problem);
    case TopField::time_exact: {
      bool exact = true;
      if (value.get_bool().get(exact) == simdjson::SUCCESS && !exact) return true;
      problem = "\"time_exact\" is not false (it is present only when the time is not exact)";
      return false;
    }
    case TopField::board:
    case TopField::run: {
      line.has_fleet_fields = true;
      std::string_view name;
      if (value.get_string().get(name) == simdjson::SUCCESS && is_fleet_name(name)) return true;
      problem = fmt::format("\"{}\" is not a fleet name (1-{} of A-Z a-z 0-9 _ -)",
                            field == TopField::board ? "board" : "run", fleet_name_max);
      return false;
    }
    case TopField::seq:
    case TopField::host_us: {
      line.has_fleet_fields = true;
      std::uint64_t number = 0;
      if (value.get_uint64().get(number) == simdjson::SUCCESS) return true;
      problem = fmt::format("\"{}\" is not an unsigned integer", field == TopField::seq ? "seq" : "host_us");
      return false;
    }
    case TopField::other:
      break;
  }
  return true;  // a field this validator does not know: ignored
}

// What the members together must be: a record or a frames line.
bool check_whole(const TopLevel& top, std::string& problem) {
  if (!top.has_timestamp) {
    problem = "no \"timestamp\"";
  } else if (top.has_event && top.line.frames) {
    problem = "both \"event\" and \"frames\": neither a record nor a frames line";
  } else if (!top.has_event && !top.line.frames) {
    problem = "neither a record (\"event\") nor a frames line (\"frames\")";
  } else if (top.has_event && !top.has_port) {
    problem = "a record without \"port\"";
  } else {
    return true;
  }
  return false;
}

}  // namespace

std::optional<CheckedLine> check_record_line(simdjson::dom::object root, std::string& problem) {
  // Built in place and returned by name: copying the finished line out of a local, one
  // small field after another just written, stalled on store forwarding (half of this
  // function's time in perf).
  std::optional<CheckedLine> result(std::in_place);
  TopLevel top{*result};
  std::uint16_t seen = 0;  // the fields the record defines, each at most once
  for (const simdjson::dom::key_value_pair member : root) {
    const TopField field = top_field(member.key);
    // A field given twice means two things: consumers (jq, simdjson, a browser) take one or
    // the other, so the line could be judged as one record and read as another.
    if (field != TopField::other) {
      const auto bit = static_cast<std::uint16_t>(1U << static_cast<unsigned>(field));
      if ((seen & bit) != 0) {
        problem = fmt::format("\"{}\" appears twice", member.key);
        result.reset();
        return result;
      }
      seen |= bit;
    }
    if (!check_member(field, member.value, top, problem)) {
      result.reset();
      return result;
    }
  }
  if (!check_whole(top, problem)) result.reset();
  return result;
}

std::span<const KindRule> record_kind_rules() noexcept {
  return kind_rules;
}

}  // namespace tp
