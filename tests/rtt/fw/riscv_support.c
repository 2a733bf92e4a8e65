/* What a C library would give the RISC-V rig: the four string functions SEGGER's code and
 * the rig call, and the start (stack, .bss zeroed, then rig_main). QEMU's virt machine loads
 * the ELF into RAM, so .data is in place already. */
#include <stddef.h>
#include <stdint.h>

void rig_main(void);

void* memcpy(void* to, const void* from, size_t count) {
  unsigned char* d = to;
  const unsigned char* s = from;
  while (count-- > 0) *d++ = *s++;
  return to;
}

void* memset(void* to, int value, size_t count) {
  unsigned char* d = to;
  while (count-- > 0) *d++ = (unsigned char)value;
  return to;
}

size_t strlen(const char* text) {
  size_t n = 0;
  while (text[n] != 0) ++n;
  return n;
}

int strcmp(const char* a, const char* b) {
  while (*a != 0 && *a == *b) {
    ++a;
    ++b;
  }
  return (unsigned char)*a - (unsigned char)*b;
}

extern uint32_t _sbss, _ebss;

__attribute__((naked, section(".text.start"))) void _start(void) {
  __asm volatile(
      "la sp, _estack\n"
      "call rig_start\n"
      "1: j 1b\n");
}

void rig_start(void) {
  for (uint32_t* p = &_sbss; p < &_ebss;) *p++ = 0;
  rig_main();
  for (;;) {
  }
}
