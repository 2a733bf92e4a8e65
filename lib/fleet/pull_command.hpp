// trace-pull: records of one or more boards from JetStream to stdout (docs/design.md "The
// fleet"), in (board, run, seq) order within a small reorder window (chunk_order), from the
// start of the stream, a time, a stream sequence or only new ones, then live with follow.
// Without follow it ends once it has what the stream held when it started. A durable consumer
// (a cron job's) acknowledges each message only after its records were written, so a next run
// goes on where the last one ended and sees no record twice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"
#include "fleet/chunk_order.hpp"
#include "fleet/fleet_subject.hpp"
#include "nats/nats_link.hpp"
#include "nats/stream_check.hpp"

namespace tp {

struct PullOptions {
  NatsSettings nats;
  std::string stream{default_stream_name};
  std::string prefix{default_subject_prefix};
  std::vector<std::string> boards;         // names or globs; empty: every board
  std::optional<std::int64_t> since_us;    // wall-clock microseconds (core/wall_clock's parse_time_or_age)
  std::optional<std::uint64_t> start_seq;  // a stream sequence
  bool new_only = false;
  bool follow = false;
  std::string durable;
  ChunkOrder::Limits order;
  std::string output = "-";
  bool append = false;
  bool stats = false;
};

ExitCode pull(const PullOptions& options, const Logger& log);

}  // namespace tp
