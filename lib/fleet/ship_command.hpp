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

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

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
// Their names (--wait), in the enum's order.
inline const std::vector<std::string> wait_policy_names{"never", "files", "always"};
[[nodiscard]] inline std::string_view wait_policy_name(WaitPolicy policy) {
  return wait_policy_names.at(static_cast<std::size_t>(policy));
}
// The policy of a name of wait_policy_names (files for another).
[[nodiscard]] inline WaitPolicy wait_policy_named(std::string_view name) {
  for (std::size_t i = 0; i < wait_policy_names.size(); ++i) {
    if (wait_policy_names[i] == name) return static_cast<WaitPolicy>(i);
  }
  return WaitPolicy::files;
}

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
