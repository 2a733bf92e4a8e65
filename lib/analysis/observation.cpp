#include "analysis/observation.hpp"

namespace tp::analysis {
namespace {

ObservationKind kind_of(std::string_view name) noexcept {
  const std::optional<RecordKind> kind = record_kind_named(name);
  if (!kind) return ObservationKind::other;
  switch (*kind) {
    case RecordKind::pc_sample:
      return ObservationKind::pc_sample;
    case RecordKind::exception:
      return ObservationKind::exception;
    case RecordKind::isr_enter:
      return ObservationKind::isr_enter;
    case RecordKind::isr_exit:
      return ObservationKind::isr_exit;
    case RecordKind::task_switch:
      return ObservationKind::task_switch;
    case RecordKind::idle_enter:
      return ObservationKind::idle_enter;
    case RecordKind::idle_exit:
      return ObservationKind::idle_exit;
    case RecordKind::overflow:
      return ObservationKind::overflow;
    case RecordKind::marker:
      return ObservationKind::marker;
    case RecordKind::text:
      return ObservationKind::text;
    case RecordKind::counter:
      return ObservationKind::counter;
    case RecordKind::malformed:
      return ObservationKind::malformed;
    default:
      return ObservationKind::other;
  }
}

std::uint32_t u32(simdjson::dom::object data, std::string_view key) {
  std::uint64_t value = 0;
  if (data[key].get_uint64().get(value) != simdjson::SUCCESS) return 0;
  return static_cast<std::uint32_t>(value);
}

std::string_view text(simdjson::dom::object data, std::string_view key) {
  std::string_view value;
  if (data[key].get_string().get(value) != simdjson::SUCCESS) return {};
  return value;
}

// The fields of event.data each kind's statistics use.
bool read_data(simdjson::dom::object data, Observation& o) {
  switch (o.kind) {
    case ObservationKind::pc_sample:
      if (data["pc"].get_uint64().get(o.pc) != simdjson::SUCCESS) return false;
      if (data["sleep"].get_bool().get(o.sleep) != simdjson::SUCCESS) o.sleep = false;
      o.name = text(data, "function");
      o.file = text(data, "file");
      o.line = u32(data, "line");
      return true;
    case ObservationKind::exception:
      o.number = u32(data, "number");
      o.action = exception_action_named(text(data, "action")).value_or(ExceptionAction::reserved);
      o.name = text(data, "handler");
      if (o.name.empty()) o.name = text(data, "name");
      return true;
    case ObservationKind::isr_enter:
    case ObservationKind::isr_exit:
      o.number = u32(data, "isr_id");
      o.name = text(data, "name");
      return true;
    case ObservationKind::task_switch:
      o.from_task = u32(data, "from_task");
      o.number = u32(data, "to_task");
      o.name = text(data, "to_name");
      return true;
    case ObservationKind::marker:
      o.number = u32(data, "id");
      o.name = text(data, "name");
      return true;
    case ObservationKind::text:
      o.text = text(data, "message");
      return true;
    case ObservationKind::counter:
      o.number = u32(data, "counter_id");
      return data["value"].get_uint64().get(o.value) == simdjson::SUCCESS;
    case ObservationKind::malformed:
      o.text = text(data, "reason");
      return true;
    default:
      return true;
  }
}

}  // namespace

std::optional<Observation> observe(simdjson::dom::object record) {
  Observation o;
  if (record["timestamp"].get_uint64().get(o.timestamp) != simdjson::SUCCESS) return std::nullopt;
  if (record["clock"].get_string().get(o.clock) != simdjson::SUCCESS) o.clock = {};
  std::uint64_t port = 0;
  if (record["port"].get_uint64().get(port) == simdjson::SUCCESS) o.port = static_cast<std::uint32_t>(port);
  simdjson::dom::object event;
  if (record["event"].get_object().get(event) != simdjson::SUCCESS) return std::nullopt;
  std::string_view kind;
  if (event["kind"].get_string().get(kind) != simdjson::SUCCESS) return std::nullopt;
  o.kind = kind_of(kind);
  simdjson::dom::object data;
  if (event["data"].get_object().get(data) != simdjson::SUCCESS) {
    const bool needs_data = o.kind == ObservationKind::pc_sample || o.kind == ObservationKind::counter;
    return needs_data ? std::nullopt : std::optional<Observation>(o);
  }
  if (!read_data(data, o)) return std::nullopt;
  return o;
}

}  // namespace tp::analysis
