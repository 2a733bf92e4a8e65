/* tracer.c: the rig's firmware body. N_TRACERS tracers log a deterministic sequence
 * forever, each step bracketed by in_use, so a collector's output can be checked
 * against the sequence itself:
 *   step n of a tracer: n % 8 == 0 -> its clock ticks (clock pair logged);
 *                       n % 3 == 0 -> event 100 with payload n; else event 1 + n % 5.
 *   TRACER_1 and TRACER_3..16 step every n; TRACER_2 steps on even n, and every 16th n
 *   merges TRACER_1's clock instead (two clock pairs: its own, then tracer 1's).
 * A full log restarts from the current clocks (ekotrace's behaviour) and counts it in
 * g_log_resets[tracer_id - 1]: a collector that keeps up never lets that happen. */
#include "tracer.h"

#define N_CLOCKS 4
#define LOG_CAP 256

static logical_clock clocks[N_TRACERS][N_CLOCKS];
static uint32_t logs[N_TRACERS][LOG_CAP];
static dynamic_history histories[N_TRACERS];
static ekotrace handles[N_TRACERS];

ekotrace *volatile TRACER_1, *volatile TRACER_2, *volatile TRACER_3, *volatile TRACER_4, *volatile TRACER_5,
    *volatile TRACER_6, *volatile TRACER_7, *volatile TRACER_8, *volatile TRACER_9, *volatile TRACER_10,
    *volatile TRACER_11, *volatile TRACER_12, *volatile TRACER_13, *volatile TRACER_14, *volatile TRACER_15,
    *volatile TRACER_16;
static ekotrace *volatile *const references[N_TRACERS] = {
    &TRACER_1, &TRACER_2, &TRACER_3, &TRACER_4, &TRACER_5, &TRACER_6, &TRACER_7, &TRACER_8,
    &TRACER_9, &TRACER_10, &TRACER_11, &TRACER_12, &TRACER_13, &TRACER_14, &TRACER_15, &TRACER_16};

volatile uint32_t g_counter;
volatile uint32_t g_log_resets[N_TRACERS];
volatile uint32_t g_hold_in_use = HOLD_IN_USE;
volatile uint32_t g_idle_loops = IDLE_LOOPS;

#define barrier() __asm__ volatile("" ::: "memory")

static void spin(uint32_t n) {
  for (volatile uint32_t i = 0; i < n; i++) {
  }
}

static void log_restart(dynamic_history *h) {
  uint32_t *log = (uint32_t *)h->compact_log.storage_ptr;
  logical_clock *c = (logical_clock *)h->clocks.storage_ptr;
  size_t n = 0;
  for (size_t i = 0; i < h->clocks.len; i++) {
    log[n++] = CLOCK_MASK | c[i].id;
    log[n++] = c[i].count;
  }
  h->compact_log.len = n;
  g_log_resets[h->tracer_id - 1]++;
}

static void log_push(dynamic_history *h, uint32_t a, uint32_t b, int pair) {
  size_t need = pair ? 2 : 1;
  if (h->compact_log.len + need > h->compact_log.storage_cap) log_restart(h);
  uint32_t *log = (uint32_t *)h->compact_log.storage_ptr;
  log[h->compact_log.len] = a;
  if (pair) log[h->compact_log.len + 1] = b;
  barrier();
  h->compact_log.len += need;
}

static void init_history(int k) {
  dynamic_history *h = &histories[k];
  h->tracer_id = (uint32_t)k + 1;
  clocks[k][0].id = h->tracer_id;
  h->clocks.storage_ptr = clocks[k];
  h->clocks.storage_cap = N_CLOCKS;
  h->clocks.len = 1;
  h->compact_log.storage_ptr = logs[k];
  h->compact_log.storage_cap = LOG_CAP;
  h->compact_log.len = 0;
  log_restart(h);
  handles[k].history = h;
}

static void step(dynamic_history *h, uint32_t n) {
  h->in_use = 1;
  barrier();
  logical_clock *c = (logical_clock *)h->clocks.storage_ptr;
  if (n % 8 == 0) {
    c[0].count++;
    h->event_count = 0;
    log_push(h, CLOCK_MASK | c[0].id, c[0].count, 1);
  } else if (n % 3 == 0) {
    log_push(h, PAYLOAD_MASK | 100u, n, 1);
    h->event_count++;
  } else {
    log_push(h, 1u + n % 5u, 0, 0);
    h->event_count++;
  }
  spin(g_hold_in_use);
  barrier();
  h->in_use = 0;
}

static void merge_1_into_2(void) {
  dynamic_history *h2 = &histories[1];
  logical_clock *c1 = clocks[0], *c2 = clocks[1];
  h2->in_use = 1;
  barrier();
  if (h2->clocks.len < 2) {
    c2[1].id = c1[0].id;
    h2->clocks.len = 2;
  }
  c2[1].count = c1[0].count;
  c2[0].count++;
  log_push(h2, CLOCK_MASK | c2[0].id, c2[0].count, 1);
  log_push(h2, CLOCK_MASK | c2[1].id, c2[1].count, 1);
  barrier();
  h2->in_use = 0;
}

void tracer_main(void) {
  for (int k = 0; k < N_TRACERS; k++) init_history(k);
  for (int k = 0; k < N_TRACERS; k++) *references[k] = &handles[k];
  for (int k = 0; k < N_TRACERS; k++) g_log_resets[k] = 0; /* the restarts of init_history do not count */
  for (uint32_t n = 1;; n++) {
    step(&histories[0], n);
    if (n % 16 == 0)
      merge_1_into_2();
    else if (n % 2 == 0)
      step(&histories[1], n);
    for (int k = 2; k < N_TRACERS; k++) step(&histories[k], n);
    g_counter = g_counter + 1;
    spin(g_idle_loops);
  }
}
