/* cm3_startup.c: Cortex-M3 vector table and reset handler (.data copy, .bss zero). */
#include <stdint.h>

#include "tracer.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;

void Reset_Handler(void);
static void Default_Handler(void) {
  for (;;) {
  }
}

__attribute__((section(".isr_vector"), used)) void (*const vector_table[16])(void) = {
    (void (*)(void))&_estack, Reset_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, 0, 0, 0, 0, Default_Handler, Default_Handler, 0, Default_Handler, Default_Handler,
};

void Reset_Handler(void) {
  uint32_t *src = &_sidata, *dst = &_sdata;
  while (dst < &_edata) *dst++ = *src++;
  for (dst = &_sbss; dst < &_ebss;) *dst++ = 0;
  tracer_main();
  for (;;) {
  }
}
