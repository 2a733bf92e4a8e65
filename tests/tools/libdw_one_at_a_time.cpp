// LD_PRELOAD probe for the --elf tests: libdw is not thread-safe per Dwfl, so tracepipe must
// never be inside its line lookups on two threads at once. This library stands in for
// dwfl_getsrc and dwfl_lineinfo, calls the real ones, and aborts the process (with a line on
// stderr) when a second thread enters while one is inside. One call in 64 lingers a little
// inside, so that two unguarded threads meet within a few thousand lookups, not only where
// libdw's own lazy loading happens to be.
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <ctime>

namespace {

std::atomic<int> inside{0};

void enter() {
  if (inside.fetch_add(1) != 0) {
    static constexpr char message[] = "libdw_one_at_a_time: two threads inside libdw at once\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, message, sizeof message - 1);
    std::abort();
  }
  static std::atomic<unsigned> calls{0};
  if (calls.fetch_add(1) % 64 == 0) {
    const timespec linger{0, 20'000};
    ::nanosleep(&linger, nullptr);  // pace: a longer stay inside libdw, so a second thread is caught
  }
}

void leave() {
  inside.fetch_sub(1);
}

template <typename Function>
Function* real(const char* name) {
  return reinterpret_cast<Function*>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" Dwfl_Line* dwfl_getsrc(Dwfl* dwfl, Dwarf_Addr address) {
  static auto* const next = real<Dwfl_Line*(Dwfl*, Dwarf_Addr)>("dwfl_getsrc");
  enter();
  Dwfl_Line* line = next(dwfl, address);
  leave();
  return line;
}

extern "C" const char* dwfl_lineinfo(Dwfl_Line* line, Dwarf_Addr* address, int* linep, int* colp, Dwarf_Word* mtime,
                                     Dwarf_Word* length) {
  static auto* const next =
      real<const char*(Dwfl_Line*, Dwarf_Addr*, int*, int*, Dwarf_Word*, Dwarf_Word*)>("dwfl_lineinfo");
  enter();
  const char* file = next(line, address, linep, colp, mtime, length);
  leave();
  return file;
}
