/* The part of <string.h> SEGGER's RTT and SystemView code uses, for the RISC-V rig, which is
 * built without a C library (riscv_support.c implements them). */
#ifndef RIG_STRING_H
#define RIG_STRING_H
#include <stddef.h>
void* memcpy(void* to, const void* from, size_t count);
void* memset(void* to, int value, size_t count);
size_t strlen(const char* text);
int strcmp(const char* a, const char* b);
#endif
