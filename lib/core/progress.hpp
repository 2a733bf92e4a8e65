// A progress line on stderr for long file jobs, only when stderr is a terminal.
#pragma once

#include <cstdint>
#include <optional>

namespace tp {

class Progress {
 public:
  // Active only when total is known, stderr is a terminal and enabled is true.
  Progress(std::optional<std::uint64_t> total, bool enabled);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  Progress(Progress&&) = delete;
  Progress& operator=(Progress&&) = delete;
  ~Progress();

  // Cheap to call often: redraws at most every 200 ms.
  void update(std::uint64_t done) {
    if (active_ && done - last_done_ >= redraw_bytes_) redraw(done);
  }
  void finish();

 private:
  void redraw(std::uint64_t done);
  std::uint64_t total_ = 0;
  std::uint64_t start_us_ = 0;
  std::uint64_t last_draw_us_ = 0;
  std::uint64_t last_done_ = 0;
  std::uint64_t redraw_bytes_ = 1U << 20U;
  bool active_ = false;
  bool drawn_ = false;
};

}  // namespace tp
