// The streaming loop shared by decoding tools: read with a timeout, feed, flush on
// pause or staleness, stop cleanly on SIGINT/SIGTERM or end of input.
#pragma once

#include <cstdint>
#include <functional>

#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/progress.hpp"
#include "decode/itm_session.hpp"

namespace tp {

struct DecodeLoopOptions {
  int idle_poll_ms = 20;              // how long a pause must last before idle work
  std::uint64_t report_every_us = 0;  // periodic callback interval (0 = never)
  std::function<void()> on_report;    // e.g. -v statistics
};

// Returns when input ends or a stop signal arrives; everything decoded is written.
void run_decode_loop(ByteSource& source, ItmSession& session, BatchedWriter& writer, Progress& progress,
                     const DecodeLoopOptions& options);

}  // namespace tp
