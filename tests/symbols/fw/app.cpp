// app.cpp: C++ code for the symbol tests: names in namespaces and overloads, so the
// decoder's names must be demangled to match nm -C.
#include <stdint.h>

extern "C" volatile uint32_t ticks;

namespace app {

struct Filter {
  uint32_t state = 0;
  uint32_t step(uint32_t sample);
  uint32_t step(uint32_t sample, uint32_t weight);
};

uint32_t Filter::step(uint32_t sample) {
  state = (state * 7u + sample) / 8u;
  return state;
}

uint32_t Filter::step(uint32_t sample, uint32_t weight) {
  for (uint32_t i = 0; i < weight; ++i) state = (state + sample) / 2u;
  return state;
}

uint32_t checksum(const volatile uint32_t* words, uint32_t count) {
  uint32_t sum = 0;
  for (uint32_t i = 0; i < count; ++i) sum = (sum << 1u | sum >> 31u) ^ words[i];
  return sum;
}

}  // namespace app

extern "C" int app_main(void) {
  app::Filter filter;
  uint32_t total = 0;
  for (;;) {
    total += filter.step(ticks);
    total += filter.step(ticks, 3u);
    total ^= app::checksum(&ticks, 1u);
    if (total == 0xFFFFFFFFu) return 1;
  }
}
