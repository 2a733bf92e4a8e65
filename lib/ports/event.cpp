#include "ports/event.hpp"

namespace tp {

std::string_view event_kind_name(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::text:
      return "Text";
    case EventKind::marker:
      return "Marker";
    case EventKind::task_switch:
      return "TaskSwitch";
    case EventKind::isr_enter:
      return "IsrEnter";
    case EventKind::isr_exit:
      return "IsrExit";
    case EventKind::idle_enter:
      return "IdleEnter";
    case EventKind::idle_exit:
      return "IdleExit";
    case EventKind::counter:
      return "Counter";
    case EventKind::raw:
      return "Raw";
    case EventKind::exception:
      return "Exception";
    case EventKind::pc_sample:
      return "PcSample";
    case EventKind::data_trace:
      return "DataTrace";
    case EventKind::event_counter:
      return "EventCounter";
    case EventKind::overflow:
      return "Overflow";
    case EventKind::hardware:
      return "Hardware";
    case EventKind::extension:
      return "Extension";
    case EventKind::malformed:
      return "Malformed";
  }
  return "Raw";
}

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
