/* tracer.c: the rig's firmware body. Its tracers behave as ekotrace's do (history.rs,
 * mid-2020, the tree before the rename to modality-probe), so eko-collect meets the real
 * tracer's behaviour, not one shaped for the collector:
 *  - DynamicHistory::new: a region of B bytes holds max(2, B/64) clocks, the rest is the log;
 *    the log starts with the clocks. TRACER_16's region is 20 KiB: 320 clocks.
 *  - record_event / record_event_with_payload: a full log drops the event (ekotrace drops it
 *    silently; the rig counts it in g_dropped[tracer_id - 1]: a collector that keeps up
 *    never lets that happen).
 *  - produce_snapshot and merge_snapshot increment the local clock (clocks[0]) and write ALL
 *    current clocks to the log, a pair only while the log holds fewer than capacity - 2
 *    items, else a "log overflowed" event.
 *  - finished_report_logging, ekotrace's own end of a report: the log cleared, the local
 *    clock incremented, the clocks written, the "produced report" event recorded.
 * The sequence, step n of a tracer (each step inside in_use):
 *   n % 8 == 0 -> produce_snapshot; else n % 3 == 0 -> event 100 with payload n;
 *   else event 1 + n % 5.
 *   TRACER_1 and TRACER_3..16 step every n. TRACER_2 steps on even n; every 16th n it merges
 *   instead the snapshot TRACER_1 produced in the same round, and every 32nd n it produces
 *   its own snapshot right after the merge (two clock groups with no event between).
 * For tests that compare memory: g_pause = 1 parks the loop between rounds (g_paused = 1
 * says it is parked); while parked, g_report_request = k runs TRACER_k's own
 * finished_report_logging and is reset to 0.
 * Pace: the application runs at most ROUNDS_AHEAD_MAX rounds past the last time a collector
 * emptied one of its logs (a length below the one the tracer left at its last step), then
 * idles until one does. A round adds at most ~1.5 items to a small log on average (8 on a
 * merge round), so 200 rounds fill at most ~300 of its 448 items: the logs a collector
 * empties never fill, however slow the host or the collector (a sanitizer build on a loaded
 * machine); the ones nobody empties fill and drop. So the sequences a test compares do not
 * depend on timing, and a drop in a collected tracer means the collector lost track.
 * g_counter counts loop turns, rounds and idle turns alike: it advances while the CPU runs. */
#include "tracer.h"

#define SMALL_REGION 2048
#define BIG_REGION 20480
#define EVENT_MAX 0x3FFFFFFFu
#define EVENT_PRODUCED_REPORT (EVENT_MAX - 1)
#define EVENT_LOG_OVERFLOWED (EVENT_MAX - 2)
#define EVENT_CLOCKS_FULL (EVENT_MAX - 4)
#define ROUNDS_AHEAD_MAX 200u

static uint64_t small_regions[N_TRACERS - 1][SMALL_REGION / 8];
static uint64_t big_region[BIG_REGION / 8];
static dynamic_history histories[N_TRACERS];
static ekotrace handles[N_TRACERS];
static size_t left_len[N_TRACERS]; /* each log's length when its tracer last left in_use */

ekotrace *volatile TRACER_1, *volatile TRACER_2, *volatile TRACER_3, *volatile TRACER_4, *volatile TRACER_5,
    *volatile TRACER_6, *volatile TRACER_7, *volatile TRACER_8, *volatile TRACER_9, *volatile TRACER_10,
    *volatile TRACER_11, *volatile TRACER_12, *volatile TRACER_13, *volatile TRACER_14, *volatile TRACER_15,
    *volatile TRACER_16;
static ekotrace *volatile *const references[N_TRACERS] = {
    &TRACER_1, &TRACER_2, &TRACER_3, &TRACER_4, &TRACER_5, &TRACER_6, &TRACER_7, &TRACER_8,
    &TRACER_9, &TRACER_10, &TRACER_11, &TRACER_12, &TRACER_13, &TRACER_14, &TRACER_15, &TRACER_16};

volatile uint32_t g_counter;
volatile uint32_t g_waiting_turns; /* loop turns spent waiting for a collector (see Pace) */
volatile uint32_t g_dropped[N_TRACERS];
volatile uint32_t g_hold_in_use = HOLD_IN_USE;
volatile uint32_t g_idle_loops = IDLE_LOOPS;
volatile uint32_t g_pause;
volatile uint32_t g_paused;
volatile uint32_t g_report_request;

#define barrier() __asm__ volatile("" ::: "memory")

static void spin(uint32_t n) {
  for (volatile uint32_t i = 0; i < n; i++) {
  }
}

static logical_clock *clocks_of(dynamic_history *h) {
  return (logical_clock *)h->clocks.storage_ptr;
}

static void log_push(dynamic_history *h, uint32_t item) {
  ((uint32_t *)h->compact_log.storage_ptr)[h->compact_log.len] = item;
  barrier();
  h->compact_log.len++;
}

static void write_clocks_to_log(dynamic_history *h) {
  if (h->compact_log.len >= h->compact_log.storage_cap) return;
  int overflowed = 0;
  for (size_t i = 0; i < h->clocks.len; i++) {
    if (h->compact_log.len + 2 >= h->compact_log.storage_cap) { /* ekotrace: len < capacity - 2 */
      overflowed = 1;
      break;
    }
    log_push(h, CLOCK_MASK | clocks_of(h)[i].id);
    log_push(h, clocks_of(h)[i].count);
  }
  if (overflowed && h->compact_log.len < h->compact_log.storage_cap) log_push(h, EVENT_LOG_OVERFLOWED);
}

static void count_event(dynamic_history *h) {
  if (h->event_count != 0xFFFFFFFFu) h->event_count++;
}

static void record_event(dynamic_history *h, uint32_t id) {
  if (h->compact_log.len >= h->compact_log.storage_cap) {
    g_dropped[h->tracer_id - 1]++;
    return;
  }
  log_push(h, id);
  count_event(h);
}

static void record_event_with_payload(dynamic_history *h, uint32_t id, uint32_t payload) {
  if (h->compact_log.len + 1 >= h->compact_log.storage_cap) {
    g_dropped[h->tracer_id - 1]++;
    return;
  }
  log_push(h, PAYLOAD_MASK | id);
  log_push(h, payload);
  count_event(h);
}

static void increment_local_clock(dynamic_history *h) {
  if (clocks_of(h)[0].count != 0xFFFFFFFFu) clocks_of(h)[0].count++;
  h->event_count = 0;
}

static logical_clock produce_snapshot(dynamic_history *h) {
  increment_local_clock(h);
  write_clocks_to_log(h);
  return clocks_of(h)[0];
}

static void merge_snapshot(dynamic_history *h, logical_clock external) {
  size_t i = 0;
  while (i < h->clocks.len && clocks_of(h)[i].id != external.id) i++;
  if (i == h->clocks.len) {
    if (h->clocks.len == h->clocks.storage_cap) {
      if (h->compact_log.len < h->compact_log.storage_cap) log_push(h, EVENT_CLOCKS_FULL);
      return;
    }
    clocks_of(h)[i].id = external.id;
    clocks_of(h)[i].count = 0;
    h->clocks.len++;
  }
  if (external.count > clocks_of(h)[i].count) clocks_of(h)[i].count = external.count;
  increment_local_clock(h);
  write_clocks_to_log(h);
}

static void finished_report_logging(dynamic_history *h) {
  h->compact_log.len = 0;
  increment_local_clock(h);
  write_clocks_to_log(h);
  record_event(h, EVENT_PRODUCED_REPORT);
}

static void init_history(int k, void *region, size_t bytes) {
  dynamic_history *h = &histories[k];
  size_t n_clocks = bytes / 64 > 2 ? bytes / 64 : 2;
  h->tracer_id = (uint32_t)k + 1;
  h->event_count = 0;
  h->clocks.storage_ptr = region;
  h->clocks.storage_cap = n_clocks;
  h->clocks.len = 1;
  clocks_of(h)[0].id = h->tracer_id;
  clocks_of(h)[0].count = 0;
  h->compact_log.storage_ptr = (uint8_t *)region + n_clocks * sizeof(logical_clock);
  h->compact_log.storage_cap = (bytes - n_clocks * sizeof(logical_clock)) / sizeof(uint32_t);
  h->compact_log.len = 0;
  write_clocks_to_log(h);
  handles[k].history = h;
}

static void enter(dynamic_history *h) {
  h->in_use = 1;
  barrier();
}

static void leave(dynamic_history *h) {
  spin(g_hold_in_use);
  left_len[h->tracer_id - 1] = h->compact_log.len;
  barrier();
  h->in_use = 0;
}

/* A collector clears a log only while in_use is clear, so a shorter log than the tracer left
 * was emptied by it. */
static int collector_emptied_a_log(void) {
  int emptied = 0;
  for (int k = 0; k < N_TRACERS; k++) {
    size_t len = histories[k].compact_log.len;
    if (len < left_len[k]) emptied = 1;
    left_len[k] = len;
  }
  return emptied;
}

/* One step of the sequence; returns the snapshot when it produced one. */
static logical_clock step(dynamic_history *h, uint32_t n) {
  logical_clock snapshot = {0, 0};
  enter(h);
  if (n % 8 == 0)
    snapshot = produce_snapshot(h);
  else if (n % 3 == 0)
    record_event_with_payload(h, 100u, n);
  else
    record_event(h, 1u + n % 5u);
  leave(h);
  return snapshot;
}

static void merge_step(dynamic_history *h, logical_clock snapshot, uint32_t n) {
  enter(h);
  merge_snapshot(h, snapshot);
  if (n % 32 == 0) produce_snapshot(h);
  leave(h);
}

static void round_of_steps(uint32_t n) {
  logical_clock snapshot = step(&histories[0], n);
  if (n % 16 == 0)
    merge_step(&histories[1], snapshot, n);
  else if (n % 2 == 0)
    step(&histories[1], n);
  for (int k = 2; k < N_TRACERS; k++) step(&histories[k], n);
}

static void park(void) {
  while (g_pause) {
    g_paused = 1;
    uint32_t k = g_report_request;
    if (k >= 1 && k <= N_TRACERS) {
      enter(&histories[k - 1]);
      finished_report_logging(&histories[k - 1]);
      leave(&histories[k - 1]);
      g_report_request = 0;
    }
  }
  g_paused = 0;
}

void tracer_main(void) {
  for (int k = 0; k < N_TRACERS - 1; k++) init_history(k, small_regions[k], sizeof small_regions[k]);
  init_history(N_TRACERS - 1, big_region, sizeof big_region);
  for (int k = 0; k < N_TRACERS; k++) *references[k] = &handles[k];
  for (int k = 0; k < N_TRACERS; k++) left_len[k] = histories[k].compact_log.len;
  uint32_t n = 1, rounds_ahead = 0;
  for (;;) {
    park();
    if (collector_emptied_a_log()) rounds_ahead = 0;
    if (rounds_ahead < ROUNDS_AHEAD_MAX) {
      round_of_steps(n++);
      rounds_ahead++;
    } else {
      g_waiting_turns = g_waiting_turns + 1;
    }
    g_counter = g_counter + 1;
    spin(g_idle_loops);
  }
}
