// The JetStream stream trace-ship publishes to: created with --create-stream, and checked so
// that publishing to it can neither double nor lose records without a word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "nats/nats_link.hpp"

namespace tp {

// The stream trace-ship, trace-pull and trace-store use unless told another (--stream).
inline constexpr std::string_view default_stream_name = "TRACE";

// A JetStream stream as trace-ship creates it (--create-stream) or checks it.
struct StreamSettings {
  std::string name{default_stream_name};
  std::string subjects;  // e.g. trace.>
  int replicas = 1;
  std::int64_t max_age_s = 0;   // 0: no limit
  std::int64_t max_bytes = -1;  // -1: no limit
  std::int64_t duplicate_window_s = 600;
};

// The smallest duplicate window trace-ship accepts: a resend later than this after the first
// send would be stored twice.
inline constexpr std::int64_t min_duplicate_window_s = 60;
// The shortest max_age trace-ship accepts (ensure_stream says why).
inline constexpr std::int64_t min_stream_max_age_s = 300;

// Creates the stream when `create` (an existing one with other settings is left as it is and
// checked), then checks that publishing `subject` in chunks of up to `chunk_bytes`, `window`
// of them in flight, to it can neither double nor lose records without a word (nor keep so
// little that what was just acknowledged is gone): throws Error naming the setting otherwise.
void ensure_stream(NatsLink& link, const StreamSettings& settings, bool create, std::string_view subject,
                   std::size_t chunk_bytes, std::size_t window, const std::function<void(std::string_view)>& warn);

// How often a running trace-ship checks its stream again.
inline constexpr std::int64_t stream_recheck_s = 5;
// The check of ensure_stream again, on a running trace-ship (a stream deleted and recreated,
// or updated, with limits that drop what it acknowledges): throws Error (unsupported) when
// the stream's settings are refused now. One request, not repeated: a server that does not
// answer (or no stream at all: publishes fail and are retried) is not a refusal.
void recheck_stream(NatsLink& link, const std::string& stream, std::string_view subject, std::size_t chunk_bytes,
                    std::size_t window);

// The subjects of `stream` that `filter` covers, with how many messages each holds (stream
// info with a subjects filter: one request, asked again while the cluster does not answer).
// Throws Error (not_found when there is no such stream).
struct StreamSubject {
  std::string subject;
  std::uint64_t messages = 0;
};
[[nodiscard]] std::vector<StreamSubject> stream_subjects(NatsLink& link, const std::string& stream,
                                                         const std::string& filter);

// Whether a NATS subject filter (tokens, '*' for one, '>' for the rest) covers `subject`.
[[nodiscard]] bool subject_matches(std::string_view filter, std::string_view subject) noexcept;

}  // namespace tp
