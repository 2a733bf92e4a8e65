/* Vector table and reset handler of the RTT rig (Cortex-M0 and M3): .data copied, .bss
 * zeroed, then rig_main. SysTick and IRQ 0 have handlers; the rest spin. */
#include <stdint.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
void rig_main(void);
void SysTick_Handler(void);
void IRQ0_Handler(void);
void Reset_Handler(void);

static void Default_Handler(void) {
  for (;;) {
  }
}

__attribute__((section(".isr_vector"), used)) void (*const vector_table[17])(void) = {
    (void (*)(void)) & _estack,
    Reset_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    Default_Handler,
    0,
    0,
    0,
    0,
    Default_Handler,
    Default_Handler,
    0,
    Default_Handler,
    SysTick_Handler,
    IRQ0_Handler,
};

void Reset_Handler(void) {
  uint32_t *src = &_sidata, *dst = &_sdata;
  while (dst < &_edata) *dst++ = *src++;
  for (dst = &_sbss; dst < &_ebss;) *dst++ = 0;
  rig_main();
  for (;;) {
  }
}
