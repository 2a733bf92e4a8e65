// trace-ship: NDJSON records in, into NATS JetStream (docs/design.md "The fleet").
//
//   input ──reader thread──> ChunkBuilder ──offer──> ShipQueue ──publisher──> cnats ──> JetStream
//         (stamps board, run, seq, host_us)          (window, buffer, back-off)   <── acks
//
// The reader never waits for the network: when the buffer is full, chunks are refused and
// told lost by a Loss record. SIGINT/SIGTERM and the end of input stop the reader; the
// publisher then waits for the acks up to the drain timeout and reports what was
// acknowledged and what was not.
#pragma once

#include <string>

#include "core/error.hpp"
#include "core/log.hpp"
#include "fleet/chunk_builder.hpp"
#include "fleet/ship_queue.hpp"
#include "nats/nats_link.hpp"
#include "nats/stream_check.hpp"

namespace tp {

// When a full buffer makes the reader wait for room instead of dropping records: never (a live
// capture cannot wait), for regular files only (the default), or always (a replay through a pipe).
enum class WaitPolicy : std::uint8_t { never, files, always };

struct ShipOptions {
  std::string input = "-";
  std::string board;
  std::string run;  // empty: a new one (or the journal's, with state)
  std::string prefix{default_subject_prefix};
  NatsSettings nats;
  StreamSettings stream;
  bool create_stream = false;
  ChunkLimits chunk;
  ShipLimits ship;
  WaitPolicy wait = WaitPolicy::files;
  std::string state;  // the journal (ship_journal.hpp), empty: none
  std::int64_t drain_timeout_ms = 30'000;
  bool stats = false;
};

void check_ship_options(const ShipOptions& options);
ExitCode ship(const ShipOptions& options, const Logger& log);

}  // namespace tp
