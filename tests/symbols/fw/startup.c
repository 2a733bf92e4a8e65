/* startup.c: a Cortex-M3 firmware for the symbol tests: a vector table with named system
 * and interrupt handlers (as vendor startup files name them), and code in C and C++ whose
 * addresses the test samples. Built with -g (DWARF line tables) and -fno-inline so that
 * addr2line -f and the ELF symbols name the same function at every address. */
#include <stdint.h>

extern uint32_t _estack;
int app_main(void);

void Reset_Handler(void);
void NMI_Handler(void);
void HardFault_Handler(void);
void SVC_Handler(void);
void PendSV_Handler(void);
void SysTick_Handler(void);
void WWDG_IRQHandler(void);
void TIM1_IRQHandler(void);
void USART1_IRQHandler(void);
void DMA1_Channel1_IRQHandler(void);

volatile uint32_t ticks;
volatile uint32_t events[8];

__attribute__((section(".isr_vector"), used)) void (*const vector_table[16 + 8])(void) = {
    (void (*)(void))&_estack, Reset_Handler, NMI_Handler, HardFault_Handler, 0, 0, 0, 0, 0, 0, 0,
    SVC_Handler, 0, 0, PendSV_Handler, SysTick_Handler,
    /* IRQ0..7 (exception numbers 16..23) */
    WWDG_IRQHandler, 0, 0, TIM1_IRQHandler, 0, USART1_IRQHandler, DMA1_Channel1_IRQHandler, 0,
};

void NMI_Handler(void) { events[0]++; }
void HardFault_Handler(void) {
  for (;;) {
  }
}
void SVC_Handler(void) { events[1]++; }
void PendSV_Handler(void) { events[2]++; }
void SysTick_Handler(void) { ticks++; }
void WWDG_IRQHandler(void) { events[3]++; }
void TIM1_IRQHandler(void) { events[4] += ticks; }
void USART1_IRQHandler(void) { events[5] ^= ticks; }
void DMA1_Channel1_IRQHandler(void) { events[6] = ticks * 3u; }

void Reset_Handler(void) {
  app_main();
  for (;;) {
  }
}
