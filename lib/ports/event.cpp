#include "ports/event.hpp"

namespace tp {

// Each EventKind is the RecordKind of the same name.
static_assert(record_kind(EventKind::text) == RecordKind::text &&
              record_kind(EventKind::marker) == RecordKind::marker &&
              record_kind(EventKind::task_switch) == RecordKind::task_switch &&
              record_kind(EventKind::isr_enter) == RecordKind::isr_enter &&
              record_kind(EventKind::isr_exit) == RecordKind::isr_exit &&
              record_kind(EventKind::idle_enter) == RecordKind::idle_enter &&
              record_kind(EventKind::idle_exit) == RecordKind::idle_exit &&
              record_kind(EventKind::counter) == RecordKind::counter &&
              record_kind(EventKind::raw) == RecordKind::raw &&
              record_kind(EventKind::exception) == RecordKind::exception &&
              record_kind(EventKind::pc_sample) == RecordKind::pc_sample &&
              record_kind(EventKind::data_trace) == RecordKind::data_trace &&
              record_kind(EventKind::event_counter) == RecordKind::event_counter &&
              record_kind(EventKind::overflow) == RecordKind::overflow &&
              record_kind(EventKind::hardware) == RecordKind::hardware &&
              record_kind(EventKind::extension) == RecordKind::extension &&
              record_kind(EventKind::malformed) == RecordKind::malformed);

}  // namespace tp
