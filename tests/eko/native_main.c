/* native_main.c: the rig firmware as a host program, for GNU gdbserver (RLE replies and no-ack mode). */
#include "tracer.h"

int main(void) {
  tracer_main();
  return 0;
}
