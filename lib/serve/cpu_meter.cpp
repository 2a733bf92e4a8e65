#include "serve/cpu_meter.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "core/clock.hpp"

namespace tp::serve {
namespace {

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

CpuMeter::CpuMeter()
    : last_cpu_s_(process_cpu_seconds()),
      last_wall_s_(static_cast<double>(monotonic_us()) / 1e6),
      cores_(static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)))) {}

double CpuMeter::sample() {
  const double cpu = process_cpu_seconds();
  const double wall = static_cast<double>(monotonic_us()) / 1e6;
  const double load = wall > last_wall_s_ ? (cpu - last_cpu_s_) / (wall - last_wall_s_) / cores_ : 0.0;
  last_cpu_s_ = cpu;
  last_wall_s_ = wall;
  return std::clamp(load, 0.0, 1.0);
}

}  // namespace tp::serve
