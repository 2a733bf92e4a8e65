/* tracer.h: ekotrace tracers as they sit in RAM (#[repr(C)] layout, see
 * lib/ekotrace/layout.hpp), for eko-collect's QEMU rig.
 *
 *   ekotrace *TRACER_k --> ekotrace { dynamic_history *history; }
 *   dynamic_history (offsets 32-bit / 64-bit):
 *     0/0 tracer_id, 4/4 event_count, 8/8 chunked_report_state,
 *     16/16 clocks {ptr, cap, len}, 28/40 compact_log {ptr, cap, len}, 40/64 in_use
 */
#ifndef TRACER_H
#define TRACER_H
#include <stddef.h>
#include <stdint.h>

#define CLOCK_MASK 0x80000000u
#define PAYLOAD_MASK 0x40000000u
#define N_TRACERS 16

typedef struct logical_clock {
  uint32_t id;
  uint32_t count;
} logical_clock;

typedef struct chunked_report_state {
  uint8_t is_report_in_progress;
  uint16_t most_recent_group_id;
  uint16_t n_written_chunks;
} chunked_report_state;

typedef struct fixed_slice_vec {
  void *storage_ptr;
  size_t storage_cap;
  size_t len;
} fixed_slice_vec;

typedef struct dynamic_history {
  uint32_t tracer_id;
  uint32_t event_count;
  chunked_report_state chunked_report_state;
  fixed_slice_vec clocks;
  fixed_slice_vec compact_log;
  volatile uint8_t in_use;
} dynamic_history;

typedef struct ekotrace {
  dynamic_history *history;
} ekotrace;

void tracer_main(void);
#endif
