// The server's CPU load for Stats.cpu_load: process CPU time over wall time between two
// samples, as a fraction of all cores.
#pragma once

namespace tp::serve {

class CpuMeter {
 public:
  CpuMeter();
  // The load since the previous sample (or construction), 0-1.
  double sample();

 private:
  double last_cpu_s_ = 0;
  double last_wall_s_ = 0;
  double cores_ = 1;
};

}  // namespace tp::serve
