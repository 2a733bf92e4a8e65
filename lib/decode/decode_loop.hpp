// itm-decode's streaming loop: an ItmSession driven by run_stream_loop.
#pragma once

#include "core/stream_loop.hpp"
#include "decode/itm_session.hpp"

namespace tp {

// Returns when input ends or a stop signal arrives; everything decoded is written.
void run_decode_loop(ByteSource& source, ItmSession& session, BatchedWriter& writer, Progress& progress,
                     const StreamLoopOptions& options = {});

}  // namespace tp
