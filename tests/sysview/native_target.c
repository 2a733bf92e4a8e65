/* A target of SEGGER's own SystemView and RTT code (SEGGER_SYSVIEW.c, SEGGER_RTT.c, unmodified,
 * compiled for the host by the test), driven through a deterministic schedule; this program
 * also plays the host: it drains the SystemView channel's up buffer as a probe would (RdOff to
 * WrOff, RdOff written back) and writes host commands to its down buffer.
 *
 *   native_target STREAM_OUT CALLS_OUT [STEPS]
 *
 * STREAM_OUT gets the channel's bytes; CALLS_OUT one JSON line per SystemView call made, with
 * the timestamp the target gave it ("t", 64-bit: the 32-bit counter SystemView sees wraps
 * during the run) and whether its packet reached the buffer ("sent"; false: SystemView dropped
 * it, the buffer being full). The test turns the calls into the records it expects. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "SEGGER_RTT.h"
#include "SEGGER_SYSVIEW.h"

static uint64_t rig_time = 0xFFFFFFFFull - 400000; /* wraps 2^32 within the schedule */
static U32 rig_isr = 0;
static FILE* calls;
static FILE* stream;
static int channel;
static unsigned rig_random_state = 12345;

U32 SEGGER_SYSVIEW_X_GetTimestamp(void) {
  return (U32)rig_time;
}
U32 SEGGER_SYSVIEW_X_GetInterruptId(void) {
  return rig_isr;
}

static unsigned rig_random(unsigned below) {
  rig_random_state = rig_random_state * 1103515245u + 12345u;
  return (rig_random_state >> 8) % below;
}

/* The host: take what the target wrote, as a probe reads it. */
static void host_drain(void) {
  SEGGER_RTT_BUFFER_UP* up = &_SEGGER_RTT.aUp[channel];
  unsigned read = up->RdOff;
  const unsigned write = up->WrOff;
  while (read != write) {
    fputc((unsigned char)up->pBuffer[read], stream);
    read = read + 1 == up->SizeOfBuffer ? 0 : read + 1;
  }
  up->RdOff = read;
}

static void host_command(U8 command) {
  SEGGER_RTT_BUFFER_DOWN* down = &_SEGGER_RTT.aDown[channel];
  down->pBuffer[down->WrOff] = (char)command;
  down->WrOff = down->WrOff + 1 == down->SizeOfBuffer ? 0 : down->WrOff + 1;
}

/* The lengths of the packets SystemView tried to write since the call began. */
static unsigned attempts[8];
static unsigned attempt_count;

void rig_event_recorded(unsigned bytes) {
  if (attempt_count < 8) attempts[attempt_count] = bytes;
  ++attempt_count;
}

/* Where the up buffer's write offset is as a call begins. */
static unsigned written_so_far(void) {
  attempt_count = 0;
  return _SEGGER_RTT.aUp[channel].WrOff;
}

/* One call's line: its name, its fields (a printf fragment), whether its packet reached the
 * buffer ("sent") and whether an Overflow packet did first ("overflow"). RTT writes are all or
 * nothing; in the overflow state SystemView tries the Overflow packet first and the event only
 * when that one fit. */
static void log_call(unsigned before, const char* name, const char* fields, ...) {
  va_list args;
  const unsigned size = _SEGGER_RTT.aUp[channel].SizeOfBuffer;
  const unsigned grown = (_SEGGER_RTT.aUp[channel].WrOff + size - before) % size;
  const int overflow_sent = attempt_count == 2;
  const int sent = attempt_count == 2 ? grown == attempts[0] + attempts[1] : grown > 0;
  if (attempt_count > 2) {
    fprintf(stderr, "a call made %u packets\n", attempt_count);
    exit(1);
  }
  fprintf(calls, "{\"call\":\"%s\",\"t\":%llu,\"sent\":%s,\"overflow\":%s", name, (unsigned long long)rig_time,
          sent ? "true" : "false", overflow_sent ? "true" : "false");
  if (fields[0] != '\0') {
    fputc(',', calls);
    va_start(args, fields);
    vfprintf(calls, fields, args);
    va_end(args);
  }
  fputs("}\n", calls);
}

#define TASK_COUNT 3
static const U32 task_ids[TASK_COUNT] = {0x20000100, 0x20000200, 0x20000300};
static const char* const task_names[TASK_COUNT] = {"Main", "Sensor", "Comms"};

static void send_task_list(void) {
  for (int i = 0; i < TASK_COUNT; ++i) {
    SEGGER_SYSVIEW_TASKINFO info = {task_ids[i], task_names[i],      (U32)(10 + i), 0x20001000u + 0x400u * (U32)i,
                                    0x400,       (U32)(64 * (i + 1))};
    SEGGER_SYSVIEW_SendTaskInfo(&info);
    fprintf(calls,
            "{\"call\":\"task_info\",\"t\":%llu,\"task\":%u,\"name\":\"%s\",\"prio\":%u,\"base\":%u,\"size\":%u,"
            "\"used\":%u}\n",
            (unsigned long long)rig_time, (unsigned)(task_ids[i] - 0x20000000u), task_names[i], (unsigned)info.Prio,
            (unsigned)info.StackBase, (unsigned)info.StackSize, (unsigned)info.StackUsage);
  }
}

static void send_system_description(void) {
  static const char* const descriptions[] = {"N=tracepipe rig,D=native,O=NoOS", "I#15=SysTick,I#16=UART0"};
  for (int i = 0; i < 2; ++i) {
    SEGGER_SYSVIEW_SendSysDesc(descriptions[i]);
    fprintf(calls, "{\"call\":\"sysdesc\",\"t\":%llu,\"text\":\"%s\"}\n", (unsigned long long)rig_time,
            descriptions[i]);
  }
}

static const SEGGER_SYSVIEW_OS_API os_api = {NULL, send_task_list};

static int current = -1; /* the task running, -1: none */
static int isr_depth = 0;
static U32 isr_stack[4];
static int timer_open = 0;

static void step(int drain) {
  const unsigned before = written_so_far();
  rig_time += 1 + rig_random(3000);
  switch (rig_random(15)) {
    case 0:
    case 1: { /* a context switch: the running task stops, another starts */
      const int next = (int)rig_random(TASK_COUNT);
      if (current >= 0) {
        SEGGER_SYSVIEW_OnTaskStopExec();
        log_call(before, "stop_exec", "");
        if (drain) host_drain();
        const unsigned between = written_so_far();
        rig_time += 1 + rig_random(50);
        SEGGER_SYSVIEW_OnTaskStartExec(task_ids[next]);
        log_call(between, "start_exec", "\"task\":%u", (unsigned)(task_ids[next] - 0x20000000u));
      } else {
        SEGGER_SYSVIEW_OnTaskStartExec(task_ids[next]);
        log_call(before, "start_exec", "\"task\":%u", (unsigned)(task_ids[next] - 0x20000000u));
      }
      current = next;
      break;
    }
    case 2:
      if (isr_depth < 4) {
        rig_isr = isr_depth == 0 ? 15 : 16 + (U32)isr_depth;
        isr_stack[isr_depth++] = rig_isr;
        SEGGER_SYSVIEW_RecordEnterISR();
        log_call(before, "isr_enter", "\"isr\":%u", (unsigned)rig_isr);
        break;
      }
      /* fall through: nested deep enough */
    case 3:
      if (isr_depth > 0) {
        --isr_depth;
        if (rig_random(4) == 0) {
          SEGGER_SYSVIEW_RecordExitISRToScheduler();
          log_call(before, "isr_exit_scheduler", "\"isr\":%u", (unsigned)isr_stack[isr_depth]);
        } else {
          SEGGER_SYSVIEW_RecordExitISR();
          log_call(before, "isr_exit", "\"isr\":%u", (unsigned)isr_stack[isr_depth]);
        }
      }
      break;
    case 4:
      SEGGER_SYSVIEW_OnIdle();
      log_call(before, "idle", "");
      current = -1;
      break;
    case 5: {
      const unsigned marker = rig_random(3);
      if (rig_random(2) == 0) {
        SEGGER_SYSVIEW_MarkStart(marker);
        log_call(before, "mark_start", "\"id\":%u", marker);
      } else {
        SEGGER_SYSVIEW_MarkStop(marker);
        log_call(before, "mark_stop", "\"id\":%u", marker);
      }
      break;
    }
    case 6: {
      const unsigned marker = rig_random(3);
      SEGGER_SYSVIEW_Mark(marker);
      log_call(before, "mark", "\"id\":%u", marker);
      break;
    }
    case 7: {
      const int a = (int)rig_random(100000) - 50000;
      const unsigned b = rig_random(0x10000);
      const unsigned c = 'A' + rig_random(26);
      SEGGER_SYSVIEW_PrintfHost("a=%d b=0x%04x c=%c [%5u] [%-4d] 100%% %X", a, b, c, b, a % 100, b);
      log_call(before, "printf",
               "\"format\":\"a=%%d b=0x%%04x c=%%c [%%5u] [%%-4d] 100%%%% %%X\",\"args\":[%d,%u,%u,%u,%d,%u]", a, b, c,
               b, a % 100, b);
      break;
    }
    case 8: {
      static const char* const texts[] = {"plain text", "a warning", "an error"};
      const unsigned level = rig_random(3);
      if (level == 0) SEGGER_SYSVIEW_Print(texts[0]);
      if (level == 1) SEGGER_SYSVIEW_Warn(texts[1]);
      if (level == 2) SEGGER_SYSVIEW_Error(texts[2]);
      log_call(before, "print", "\"text\":\"%s\",\"level\":%u", texts[level], level);
      break;
    }
    case 9:
      if (!timer_open) {
        SEGGER_SYSVIEW_RecordEnterTimer(0x20000800u);
        log_call(before, "timer_enter", "\"timer\":%u", 0x800u);
      } else {
        SEGGER_SYSVIEW_RecordExitTimer();
        log_call(before, "timer_exit", "");
      }
      timer_open = !timer_open;
      break;
    case 10: {
      const unsigned task = rig_random(TASK_COUNT);
      if (rig_random(2) == 0) {
        SEGGER_SYSVIEW_OnTaskStartReady(task_ids[task]);
        log_call(before, "ready", "\"task\":%u", (unsigned)(task_ids[task] - 0x20000000u));
      } else {
        const unsigned cause = rig_random(8);
        SEGGER_SYSVIEW_OnTaskStopReady(task_ids[task], cause);
        log_call(before, "blocked", "\"task\":%u,\"cause\":%u", (unsigned)(task_ids[task] - 0x20000000u), cause);
      }
      break;
    }
    case 11: {
      float value = ((float)rig_random(100000) - 50000.0f) / 8.0f; /* negative ones too */
      U32 bits;
      memcpy(&bits, &value, sizeof bits);
      SEGGER_SYSVIEW_DATA_SAMPLE sample = {7, {.pFloat = &value}};
      SEGGER_SYSVIEW_SampleData(&sample);
      log_call(before, "sample", "\"id\":7,\"raw\":%u", (unsigned)bits);
      break;
    }
    case 12: {
      const U32 a = rig_random(1u << 30), b = rig_random(1000), id = 0x400 + rig_random(4);
      SEGGER_SYSVIEW_RecordU32x2(id, a, b);
      log_call(before, "user", "\"id\":%u,\"a\":%u,\"b\":%u", (unsigned)id, (unsigned)a, (unsigned)b);
      break;
    }
    case 13: {
      static U32 heap_block[8];
      const unsigned slot = rig_random(8);
      void* address = (void*)(uintptr_t)(0x20004000u + 0x40u * slot);
      if (heap_block[slot] == 0) {
        heap_block[slot] = 16 + rig_random(48);
        SEGGER_SYSVIEW_HeapAlloc((void*)(uintptr_t)0x20004000u, address, heap_block[slot]);
        log_call(before, "heap_alloc", "\"heap\":%u,\"address\":%u,\"size\":%u", 0x4000u, 0x4000u + 0x40u * slot,
                 (unsigned)heap_block[slot]);
      } else {
        heap_block[slot] = 0;
        SEGGER_SYSVIEW_HeapFree((void*)(uintptr_t)0x20004000u, address);
        log_call(before, "heap_free", "\"heap\":%u,\"address\":%u", 0x4000u, 0x4000u + 0x40u * slot);
      }
      break;
    }
    default:
      SEGGER_SYSVIEW_OnTaskCreate(task_ids[0]);
      log_call(before, "create", "\"task\":%u", (unsigned)(task_ids[0] - 0x20000000u));
      break;
  }
  if (drain) host_drain();
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: native_target STREAM_OUT CALLS_OUT [STEPS]\n");
    return 2;
  }
  stream = fopen(argv[1], "wb");
  calls = fopen(argv[2], "w");
  const int steps = argc > 3 ? atoi(argv[3]) : 5000;
  if (stream == NULL || calls == NULL) return 1;
  SEGGER_SYSVIEW_Init(1000000, 48000000, &os_api, send_system_description);
  SEGGER_SYSVIEW_SetRAMBase(0x20000000);
  channel = SEGGER_SYSVIEW_GetChannelID();
  fprintf(calls,
          "{\"call\":\"init\",\"t\":%llu,\"sys_hz\":1000000,\"cpu_hz\":48000000,\"ram_base\":%u,\"channel\":%d}\n",
          (unsigned long long)rig_time, 0x20000000u, channel);

  /* Nothing is recorded before the host's start command; a call made then sends nothing
   * but makes the target read the command (SEGGER_SYSVIEW.c _SendPacket, SendDone). */
  SEGGER_SYSVIEW_OnIdle();
  host_command(1); /* SEGGER_SYSVIEW_COMMAND_ID_START */
  fprintf(calls, "{\"call\":\"start\",\"t\":%llu}\n", (unsigned long long)rig_time);
  SEGGER_SYSVIEW_OnIdle();
  fprintf(calls, "{\"call\":\"start_done\",\"t\":%llu}\n", (unsigned long long)rig_time);
  host_drain();

  /* Names and the heap, once: what later records carry. */
  static const char* const marker_names[3] = {"frame", "filter", "send"};
  for (unsigned i = 0; i < 3; ++i) {
    const unsigned before = written_so_far();
    SEGGER_SYSVIEW_NameMarker(i, marker_names[i]);
    log_call(before, "name_marker", "\"id\":%u,\"text\":\"%s\"", i, marker_names[i]);
  }
  unsigned before = written_so_far();
  SEGGER_SYSVIEW_NameResource(0x20000800u, "BlinkTimer");
  log_call(before, "name_resource", "\"id\":%u,\"text\":\"BlinkTimer\"", 0x800u);
  before = written_so_far();
  SEGGER_SYSVIEW_HeapDefine((void*)(uintptr_t)0x20004000u, (void*)(uintptr_t)0x20004000u, 0x200, 8);
  log_call(before, "heap_define", "\"heap\":%u,\"address\":%u,\"size\":%u,\"metadata\":8", 0x4000u, 0x4000u, 0x200u);
  host_drain();

  for (int i = 0; i < steps; ++i) {
    /* The host looks away for a while twice: the buffer fills, SystemView drops packets
     * and reports them in an Overflow packet once there is room again. */
    const int drain = !((i >= steps / 3 && i < steps / 3 + 300) || (i >= 2 * steps / 3 && i < 2 * steps / 3 + 200));
    step(drain);
  }
  /* SEGGER_SYSVIEW_COMMAND_ID_STOP, taken after the next packet: the call writes its own
   * packet, then the TraceStop (the buffer drained first, both fit). */
  host_drain();
  host_command(2);
  rig_time += 10;
  SEGGER_SYSVIEW_OnIdle();
  fprintf(calls, "{\"call\":\"idle\",\"t\":%llu,\"sent\":true,\"overflow\":false}\n", (unsigned long long)rig_time);
  fprintf(calls, "{\"call\":\"stop\",\"t\":%llu}\n", (unsigned long long)rig_time);
  host_drain();
  fclose(stream);
  fclose(calls);
  return 0;
}
