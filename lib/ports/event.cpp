#include "ports/event.hpp"

namespace tp {

// event_kind_names follows EventKind, kind by kind.
static_assert(
    event_kind_name(EventKind::text) == "Text" && event_kind_name(EventKind::marker) == "Marker" &&
    event_kind_name(EventKind::task_switch) == "TaskSwitch" && event_kind_name(EventKind::isr_enter) == "IsrEnter" &&
    event_kind_name(EventKind::isr_exit) == "IsrExit" && event_kind_name(EventKind::idle_enter) == "IdleEnter" &&
    event_kind_name(EventKind::idle_exit) == "IdleExit" && event_kind_name(EventKind::counter) == "Counter" &&
    event_kind_name(EventKind::raw) == "Raw" && event_kind_name(EventKind::exception) == "Exception" &&
    event_kind_name(EventKind::pc_sample) == "PcSample" && event_kind_name(EventKind::data_trace) == "DataTrace" &&
    event_kind_name(EventKind::event_counter) == "EventCounter" && event_kind_name(EventKind::overflow) == "Overflow" &&
    event_kind_name(EventKind::hardware) == "Hardware" && event_kind_name(EventKind::extension) == "Extension" &&
    event_kind_name(EventKind::malformed) == "Malformed");

std::string_view data_trace_type_name(DataTraceType type) noexcept {
  switch (type) {
    case DataTraceType::pc:
      return "pc";
    case DataTraceType::address:
      return "address";
    case DataTraceType::read:
      return "read";
    case DataTraceType::write:
      return "write";
  }
  return "pc";
}

}  // namespace tp
