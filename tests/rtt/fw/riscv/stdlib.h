/* SEGGER_RTT.h and SEGGER_SYSVIEW.c include <stdlib.h> and use nothing of it (the RISC-V rig
 * is built without a C library). */
#ifndef RIG_STDLIB_H
#define RIG_STDLIB_H
#include <stddef.h>
#endif
