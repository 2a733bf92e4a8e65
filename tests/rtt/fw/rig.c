/* The RTT and SystemView test rig: SEGGER's own SEGGER_RTT.c, SEGGER_RTT_printf.c and
 * SEGGER_SYSVIEW.c (unmodified, from ../shared) on QEMU's Cortex-M3 (lm3s6965evb),
 * Cortex-M0 (microbit) and RV32 (virt, no interrupts there), driven by the host:
 *
 * - at boot, "rig boot\n" on channel 0 (Terminal, NO_BLOCK_SKIP until the host asks for text);
 * - "text\n" on down channel 0: channel 0 becomes BLOCK_IF_FIFO_FULL, RIG_LINES lines go out
 *   through SEGGER_RTT_printf (rig_text_bytes counts what it stored), then a burst of
 *   RIG_BURST bytes on channel 2 ("Skip", 256 bytes, NO_BLOCK_SKIP) that cannot all fit
 *   (rig_skip_accepted counts what did); "flood\n": 20000 lines of 72 bytes as fast as the host
 *   reads them (the benchmark); any other line comes back as "echo: LINE";
 * - SystemView's start command (down channel 1): a schedule of SystemView calls, paced so the
 *   host keeps up, except for a stretch that overflows the buffer on purpose; SysTick and
 *   IRQ 0 (pended from SysTick, preempting it) record ISR enter/exit from their handlers.
 *   rig_log holds every call, its timestamp and whether its packet reached the buffer: the
 *   ground truth gdb reads back.
 * rig_ticks advances forever: the test sees the firmware running. */
#include <stdint.h>
#include <string.h>

#include "SEGGER_RTT.h"
#include "SEGGER_SYSVIEW.h"

#ifndef RIG_STEPS
#define RIG_STEPS 600
#endif
#define RIG_LINES 200
#define RIG_BURST 1000
#define RIG_FLOOD_LINES 20000
#define RIG_LOG_SIZE 1400

enum {
  CALL_START_EXEC = 1,
  CALL_STOP_EXEC,
  CALL_ISR_ENTER,
  CALL_ISR_EXIT,
  CALL_IDLE,
  CALL_MARK_START,
  CALL_MARK_STOP,
  CALL_MARK,
  CALL_PRINTF,
  CALL_PRINT,
  CALL_TIMER_ENTER,
  CALL_TIMER_EXIT,
  CALL_READY,
  CALL_BLOCKED,
  CALL_CREATE,
  CALL_SYSDESC,
  CALL_TASK_INFO,
  CALL_START_DONE
};

struct rig_entry {
  uint8_t call;
  uint8_t flags; /* bit 0: the packet reached the buffer; bit 1: an Overflow packet did first */
  uint16_t arg;
  uint32_t time;
};

volatile uint32_t rig_ticks;
volatile uint32_t rig_time = 1000;
struct rig_entry rig_log[RIG_LOG_SIZE];
volatile uint32_t rig_log_count;
volatile uint32_t rig_log_lost; /* entries that did not fit: the test fails on any */
volatile uint32_t rig_text_bytes;
volatile uint32_t rig_skip_accepted;
volatile uint32_t rig_sysview_running;                        /* the schedule runs: the ISRs record too */
__attribute__((unused)) static uint32_t rig_isr_budget = 160; /* ISR records at most (a bounded log) */
volatile uint32_t rig_sysview_done;
volatile uint32_t rig_sysview_stopped;
volatile uint32_t rig_boots;

static char skip_buffer[256];
static unsigned attempts[4];
static volatile unsigned attempt_count;
static unsigned random_state = 4242;
static int paced = 1;

unsigned rig_timestamp(void) {
  return rig_time;
}

void rig_event_recorded(unsigned bytes) {
  if (attempt_count < 4) attempts[attempt_count] = bytes;
  ++attempt_count;
}

static unsigned rig_random(unsigned below) {
  random_state = random_state * 1103515245u + 12345u;
  return (random_state >> 8) % below;
}

#if defined(__arm__)
static inline uint32_t irq_save(void) {
  uint32_t primask;
  __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
  return primask;
}
static inline void irq_restore(uint32_t primask) {
  __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
}
#else /* RISC-V: mstatus.MIE */
static inline uint32_t irq_save(void) {
  uint32_t mstatus;
  __asm volatile("csrrci %0, mstatus, 8" : "=r"(mstatus)::"memory");
  return mstatus;
}
static inline void irq_restore(uint32_t mstatus) {
  if (mstatus & 8u) __asm volatile("csrsi mstatus, 8" ::: "memory");
}
/* SystemView asks the core which interrupt runs (SEGGER_SYSVIEW_ConfDefaults.h, for a core it
 * does not know): the RISC-V rig takes none. */
U32 SEGGER_SYSVIEW_X_GetInterruptId(void) {
  return 0;
}
#endif

static unsigned sysview_write_offset(void) {
  return _SEGGER_RTT.aUp[1].WrOff;
}

/* Appends the call's entry; `before` is WrOff before the call (attempts were reset then). */
static void log_call(unsigned before, uint8_t call, uint16_t arg) {
  const unsigned size = _SEGGER_RTT.aUp[1].SizeOfBuffer;
  const unsigned grown = (sysview_write_offset() + size - before) % size;
  uint8_t flags = 0;
  if (attempt_count == 2)
    flags = (grown == attempts[0] + attempts[1] ? 1u : 0u) | 2u;
  else if (grown > 0)
    flags = 1;
  if (rig_log_count < RIG_LOG_SIZE) {
    rig_log[rig_log_count].call = call;
    rig_log[rig_log_count].flags = flags;
    rig_log[rig_log_count].arg = arg;
    rig_log[rig_log_count].time = rig_time;
    ++rig_log_count;
  } else {
    ++rig_log_lost;
  }
}

static unsigned begin_call(void) {
  attempt_count = 0;
  return sysview_write_offset();
}

#if defined(__arm__)
static int isr_depth;

/* SysTick and IRQ 0: their SystemView calls and log entries, with interrupts masked so that
 * the log's order is the packets' order. */
static void record_isr(uint16_t number, int enter) {
  const uint32_t mask = irq_save();
  if (rig_sysview_running && rig_isr_budget > 0) {
    --rig_isr_budget;
    rig_time += 3;
    const unsigned before = begin_call();
    if (enter) {
      SEGGER_SYSVIEW_RecordEnterISR();
      log_call(before, CALL_ISR_ENTER, number);
    } else {
      SEGGER_SYSVIEW_RecordExitISR();
      log_call(before, CALL_ISR_EXIT, number);
    }
  }
  irq_restore(mask);
}

void SysTick_Handler(void) {
  ++isr_depth;
  record_isr(15, 1);
  ++rig_ticks;
  if ((rig_ticks & 7u) == 0) *(volatile uint32_t*)0xE000E200u = 1u; /* NVIC_ISPR0: pend IRQ 0 */
  record_isr(15, 0);
  --isr_depth;
}

void IRQ0_Handler(void) {
  record_isr(16, 1);
  record_isr(16, 0);
}
#endif

static void send_task_list(void);
static void send_system_description(void);
static const SEGGER_SYSVIEW_OS_API os_api = {0, send_task_list};
static const uint32_t task_ids[3] = {0x20000100u, 0x20000200u, 0x20000300u};
static const char* const task_names[3] = {"Main", "Sensor", "Comms"};

static void send_task_list(void) {
  for (unsigned i = 0; i < 3; ++i) {
    SEGGER_SYSVIEW_TASKINFO info = {task_ids[i], task_names[i], 10 + i, 0x20001000u + 0x400u * i, 0x400, 64 * (i + 1)};
    SEGGER_SYSVIEW_SendTaskInfo(&info);
    log_call(sysview_write_offset(), CALL_TASK_INFO, (uint16_t)i);
  }
}

static void send_system_description(void) {
  SEGGER_SYSVIEW_SendSysDesc("N=tracepipe rig,O=NoOS");
  log_call(sysview_write_offset(), CALL_SYSDESC, 0);
  SEGGER_SYSVIEW_SendSysDesc("I#15=SysTick,I#16=IRQ0");
  log_call(sysview_write_offset(), CALL_SYSDESC, 1);
}

/* Waits until the SystemView buffer has room for a few packets (the host reads it). */
static void wait_room(void) {
  while (paced && SEGGER_RTT_GetAvailWriteSpace(1) < 200) ++rig_ticks;
}

static int current = -1;
static int timer_open;

static void sysview_step(void) {
  wait_room();
  const uint32_t mask = irq_save();
  rig_time += 1 + rig_random(2000);
  unsigned before = begin_call();
  /* Unpaced, every step prints: far more than the buffer holds, whatever the host does. */
  switch (paced ? rig_random(12) : 4) {
    case 0:
    case 1: {
      const unsigned next = rig_random(3);
      if (current >= 0) {
        SEGGER_SYSVIEW_OnTaskStopExec();
        log_call(before, CALL_STOP_EXEC, 0);
        rig_time += 1 + rig_random(40);
        before = begin_call();
      }
      SEGGER_SYSVIEW_OnTaskStartExec(task_ids[next]);
      log_call(before, CALL_START_EXEC, (uint16_t)next);
      current = (int)next;
      break;
    }
    case 2:
      SEGGER_SYSVIEW_OnIdle();
      log_call(before, CALL_IDLE, 0);
      current = -1;
      break;
    case 3: {
      const unsigned id = rig_random(3);
      const unsigned kind = rig_random(3);
      if (kind == 0) SEGGER_SYSVIEW_MarkStart(id);
      if (kind == 1) SEGGER_SYSVIEW_MarkStop(id);
      if (kind == 2) SEGGER_SYSVIEW_Mark(id);
      log_call(before, (uint8_t)(CALL_MARK_START + kind), (uint16_t)id);
      break;
    }
    case 4: {
      const unsigned value = rig_random(60000);
      SEGGER_SYSVIEW_PrintfHost("value=%u hex=%04X", value, value);
      log_call(before, CALL_PRINTF, (uint16_t)value);
      break;
    }
    case 5: {
      const unsigned level = rig_random(3);
      if (level == 0) SEGGER_SYSVIEW_Print("plain text");
      if (level == 1) SEGGER_SYSVIEW_Warn("a warning");
      if (level == 2) SEGGER_SYSVIEW_Error("an error");
      log_call(before, CALL_PRINT, (uint16_t)level);
      break;
    }
    case 6:
      if (!timer_open) {
        SEGGER_SYSVIEW_RecordEnterTimer(0x20000800u);
        log_call(before, CALL_TIMER_ENTER, 0);
      } else {
        SEGGER_SYSVIEW_RecordExitTimer();
        log_call(before, CALL_TIMER_EXIT, 0);
      }
      timer_open = !timer_open;
      break;
    case 7: {
      const unsigned task = rig_random(3);
      SEGGER_SYSVIEW_OnTaskStartReady(task_ids[task]);
      log_call(before, CALL_READY, (uint16_t)task);
      break;
    }
    case 8: {
      const unsigned task = rig_random(3), cause = rig_random(8);
      SEGGER_SYSVIEW_OnTaskStopReady(task_ids[task], cause);
      log_call(before, CALL_BLOCKED, (uint16_t)(task | (cause << 8)));
      break;
    }
    case 9:
      SEGGER_SYSVIEW_OnTaskCreate(task_ids[0]);
      log_call(before, CALL_CREATE, 0);
      break;
    default: { /* a busy stretch: SysTick gets to interrupt it */
      irq_restore(mask);
      for (volatile unsigned i = 0; i < 20000; ++i) ++rig_ticks;
      return;
    }
  }
  irq_restore(mask);
}

static void run_sysview(void) {
  {
    const uint32_t mask = irq_save();
    const unsigned before = begin_call();
    log_call(before, CALL_START_DONE, 0);
    rig_sysview_running = 1;
    irq_restore(mask);
  }
  for (unsigned i = 0; i < RIG_STEPS; ++i) {
    paced = !(i >= RIG_STEPS / 3 && i < RIG_STEPS / 3 + 150); /* 150 steps without waiting */
    sysview_step();
  }
  paced = 1;
  rig_sysview_running = 0;
  rig_sysview_done = 1;
}

/* What channel 0's write offset moved by (SEGGER_RTT_printf's return value is not it: V8.56a
 * counts a line shorter than its 64-byte buffer twice). */
static unsigned text_offset(void) {
  return _SEGGER_RTT.aUp[0].WrOff;
}
static void count_text(unsigned before) {
  const unsigned size = _SEGGER_RTT.aUp[0].SizeOfBuffer;
  rig_text_bytes += (text_offset() + size - before) % size;
}

static void run_text(void) {
  SEGGER_RTT_ConfigUpBuffer(0, "Terminal", NULL, 0, SEGGER_RTT_MODE_BLOCK_IF_FIFO_FULL);
  for (unsigned i = 0; i < RIG_LINES; ++i) {
    const unsigned before = text_offset();
    SEGGER_RTT_printf(0, "line %u of the rig: %u\n", i, i * i);
    count_text(before);
  }
  char burst[50];
  memset(burst, 'S', sizeof burst);
  for (unsigned sent = 0; sent < RIG_BURST; sent += sizeof burst) {
    rig_skip_accepted += SEGGER_RTT_Write(2, burst, sizeof burst);
  }
}

/* Lines from down channel 0: "text" prints the text; anything else is echoed. */
static void serve_terminal(void) {
  static char line[32];
  static unsigned length;
  char c;
  while (SEGGER_RTT_Read(0, &c, 1) == 1) {
    if (c != '\n') {
      if (length < sizeof line - 1) line[length++] = c;
      continue;
    }
    line[length] = 0;
    if (strcmp(line, "text") == 0) {
      run_text();
    } else if (strcmp(line, "flood") == 0) { /* for the benchmark: as fast as the host reads */
      SEGGER_RTT_ConfigUpBuffer(0, "Terminal", NULL, 0, SEGGER_RTT_MODE_BLOCK_IF_FIFO_FULL);
      for (unsigned i = 0; i < RIG_FLOOD_LINES; ++i) {
        SEGGER_RTT_printf(0, "flood %6u: the quick brown fox jumps over the lazy dog 0123456789\n", i);
      }
    } else {
      const unsigned before = text_offset();
      SEGGER_RTT_printf(0, "echo: %s\n", line);
      count_text(before);
    }
    length = 0;
  }
}

void rig_main(void) {
  ++rig_boots;
  SEGGER_RTT_Init();
  SEGGER_RTT_ConfigUpBuffer(2, "Skip", skip_buffer, sizeof skip_buffer, SEGGER_RTT_MODE_NO_BLOCK_SKIP);
  SEGGER_SYSVIEW_Init(1000000, 1000000, &os_api, send_system_description);
  SEGGER_SYSVIEW_SetRAMBase(0x20000000u);
  SEGGER_RTT_WriteString(0, "rig boot\n");
#if defined(__arm__)
  /* SysTick every 50000 cycles, lowest priority; IRQ 0 above it (it preempts SysTick). */
  *(volatile uint32_t*)0xE000ED20u = 0xC0000000u; /* SHPR3: SysTick priority */
  *(volatile uint32_t*)0xE000E400u = 0x40u;       /* NVIC_IPR0: IRQ 0 priority */
  *(volatile uint32_t*)0xE000E100u = 1u;          /* NVIC_ISER0: enable IRQ 0 */
  *(volatile uint32_t*)0xE000E014u = 50000u - 1u; /* SYST_RVR */
  *(volatile uint32_t*)0xE000E018u = 0u;          /* SYST_CVR */
  *(volatile uint32_t*)0xE000E010u = 7u;          /* SYST_CSR: enable, interrupt, CPU clock */
#endif
  for (;;) {
    ++rig_ticks;
    serve_terminal();
    /* SEGGER_SYSVIEW_IsStarted() takes the host's commands (start, stop), so it runs with
     * interrupts masked, as every SystemView call of the rig does: the log's order stays the
     * packets' order. */
    const uint32_t mask = irq_save();
    const int started = SEGGER_SYSVIEW_IsStarted();
    irq_restore(mask);
    if (started && !rig_sysview_done) run_sysview();
    if (!started && rig_sysview_done) rig_sysview_stopped = 1;
  }
}
