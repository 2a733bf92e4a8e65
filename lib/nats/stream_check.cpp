#include "nats/stream_check.hpp"

#include <fmt/format.h>
#include <nats/nats.h>

#include <memory>
#include <string>

#include "core/error.hpp"
#include "nats/cnats_glue.hpp"

namespace tp {

bool subject_matches(std::string_view filter, std::string_view subject) noexcept {
  for (;;) {
    const std::size_t f_dot = filter.find('.');
    const std::size_t s_dot = subject.find('.');
    const std::string_view f = filter.substr(0, f_dot);
    const std::string_view s = subject.substr(0, s_dot);
    if (f == ">") return !subject.empty();
    if (f != "*" && f != s) return false;
    if (f_dot == std::string_view::npos || s_dot == std::string_view::npos) {
      return f_dot == std::string_view::npos && s_dot == std::string_view::npos;
    }
    filter.remove_prefix(f_dot + 1);
    subject.remove_prefix(s_dot + 1);
  }
}

namespace {

// A stream that keeps less than what one trace-ship has in flight drops records it has just
// acknowledged, before any reader could fetch them (with discard new: refuses all but the
// first few, for good): refused, not warned about. The bounds are the least a stream must
// hold: the window of chunks in flight (a board's chunks all go on one subject, so a
// per-subject limit counts them too) and as many bytes as that window at full chunks; and a
// few minutes of age, so that a reader away for a short while (a restart, an election) still
// finds what was acknowledged. Larger limits are the operator's retention.
void refuse_small_limits(const jsStreamConfig& config, std::size_t chunk_bytes, std::size_t window,
                         const std::function<void(const std::string&)>& refuse) {
  const auto least_messages = static_cast<std::int64_t>(window);
  const auto least_bytes = static_cast<std::int64_t>(window * chunk_bytes);
  const std::string_view how = config.Discard == js_DiscardNew ? "refuses new messages" : "drops acknowledged messages";
  if (config.MaxMsgsPerSubject > 0 && config.MaxMsgsPerSubject < least_messages) {
    refuse(
        fmt::format("it keeps {} messages per subject and {} beyond them: a board's chunks all go on one subject, "
                    "and the {} in flight (--window) need room (at least {})",
                    config.MaxMsgsPerSubject, how, window, least_messages));
  }
  if (config.MaxMsgs > 0 && config.MaxMsgs < least_messages) {
    refuse(
        fmt::format("it keeps {} messages and {} beyond them: the {} chunks in flight (--window) need room (at "
                    "least {})",
                    config.MaxMsgs, how, window, least_messages));
  }
  if (config.MaxBytes > 0 && config.MaxBytes < least_bytes) {
    refuse(
        fmt::format("it keeps {} bytes and {} beyond them: the {} chunks in flight of up to {} bytes need room "
                    "(at least {}; or lower --window or --chunk-bytes)",
                    config.MaxBytes, how, window, chunk_bytes, least_bytes));
  }
  if (config.MaxAge > 0 && config.MaxAge < min_stream_max_age_s * 1'000'000'000) {
    refuse(
        fmt::format("it keeps a message {} s: a reader away for a few minutes would find acknowledged records "
                    "gone (at least {} s)",
                    config.MaxAge / 1'000'000'000, min_stream_max_age_s));
  }
}

// What ensure_stream refuses in a stream's settings: `refuse` throws with the reason.
void check_stream_config(const jsStreamConfig& config, std::string_view subject, std::size_t chunk_bytes,
                         std::size_t window, const std::function<void(const std::string&)>& refuse) {
  bool covered = false;
  for (int i = 0; i < config.SubjectsLen; ++i) covered = covered || subject_matches(config.Subjects[i], subject);
  if (!covered && config.SubjectsLen > 0) refuse(fmt::format("its subjects do not cover {}", subject));
  if (config.NoAck) refuse("it does not acknowledge publishes (no_ack): nothing could be accounted for");
  if (config.Retention != js_LimitsPolicy) {
    refuse("its retention is work-queue or interest: a record one reader takes would be gone for the others");
  }
  const std::int64_t window_s = config.Duplicates / 1'000'000'000;
  if (window_s < min_duplicate_window_s) {
    refuse(
        fmt::format("its duplicate window is {} s: a chunk resent after a longer outage would be stored twice "
                    "(at least {} s; trace-ship creates streams with 600)",
                    window_s, min_duplicate_window_s));
  }
  if (config.MaxMsgSize > 0 && static_cast<std::size_t>(config.MaxMsgSize) < chunk_bytes) {
    refuse(fmt::format("its largest message is {} bytes, smaller than a chunk ({} bytes): lower --chunk-bytes",
                       config.MaxMsgSize, chunk_bytes));
  }
  refuse_small_limits(config, chunk_bytes, window, refuse);
}

// The stream's info, the stream created first when it is missing and `create`: read again
// when another trace-ship created it in between.
jsStreamInfo* read_or_create_stream(jsCtx* jetstream, const StreamSettings& settings, bool create,
                                    std::string_view subject, const std::function<void(std::string_view)>& warn) {
  jsStreamInfo* info = nullptr;
  auto code = static_cast<jsErrCode>(0);
  natsStatus status = ask_jetstream(
      "reading the stream " + settings.name,
      [&] {
        code = static_cast<jsErrCode>(0);
        return js_GetStreamInfo(&info, jetstream, settings.name.c_str(), nullptr, &code);
      },
      warn);
  if (status == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
    if (!create) {
      throw Error(ExitCode::not_found, fmt::format("no JetStream stream {}: create it with --create-stream (or give "
                                                   "the right --stream)",
                                                   settings.name));
    }
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    config.Name = settings.name.c_str();
    const std::string subjects = settings.subjects.empty() ? std::string(subject) : settings.subjects;
    const char* subject_list[] = {subjects.c_str()};
    config.Subjects = subject_list;
    config.SubjectsLen = 1;
    config.Storage = js_FileStorage;
    config.Replicas = settings.replicas;
    config.MaxAge = settings.max_age_s * 1'000'000'000;
    config.MaxBytes = settings.max_bytes;
    config.Duplicates = settings.duplicate_window_s * 1'000'000'000;
    config.Discard = js_DiscardOld;
    status = ask_jetstream(
        "creating the stream " + settings.name,
        [&] {
          code = static_cast<jsErrCode>(0);
          return js_AddStream(&info, jetstream, &config, nullptr, &code);
        },
        warn);
    if (status != NATS_OK && code != JSStreamNameExistErr) {
      check_nats(status, fmt::format("creating the stream {} (subjects {}, {} replicas)", settings.name, subjects,
                                     settings.replicas));
    }
    if (status != NATS_OK) status = js_GetStreamInfo(&info, jetstream, settings.name.c_str(), nullptr, &code);
  }
  check_nats(status, "reading the stream " + settings.name);
  return info;
}

}  // namespace

void ensure_stream(NatsLink& link, const StreamSettings& settings, bool create, std::string_view subject,
                   std::size_t chunk_bytes, std::size_t window, const std::function<void(std::string_view)>& warn) {
  const std::unique_ptr<jsStreamInfo, void (*)(jsStreamInfo*)> owned(
      read_or_create_stream(jetstream_of(link), settings, create, subject, warn), jsStreamInfo_Destroy);
  const jsStreamConfig& config = *owned->Config;
  check_stream_config(config, subject, chunk_bytes, window, [&](const std::string& why) {
    throw Error(ExitCode::unsupported, fmt::format("stream {}: {}", settings.name, why));
  });
  if (config.Discard == js_DiscardNew && (config.MaxBytes > 0 || config.MaxMsgs > 0)) {
    warn(fmt::format("stream {} refuses new messages when full (discard new): chunks will wait, then be told lost",
                     settings.name));
  }
}

void recheck_stream(NatsLink& link, const std::string& stream, std::string_view subject, std::size_t chunk_bytes,
                    std::size_t window) {
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = 2000;  // the publisher waits on it: a server away is not waited for here
  jsStreamInfo* info = nullptr;
  if (js_GetStreamInfo(&info, jetstream_of(link), stream.c_str(), &options, nullptr) != NATS_OK) return;
  const std::unique_ptr<jsStreamInfo, void (*)(jsStreamInfo*)> owned(info, jsStreamInfo_Destroy);
  check_stream_config(*info->Config, subject, chunk_bytes, window, [&](const std::string& why) {
    throw Error(ExitCode::unsupported,
                fmt::format("stream {} changed under trace-ship (recreated or updated): {}; what it acknowledged "
                            "since the last check (up to {} s before) may be gone",
                            stream, why, stream_recheck_s));
  });
}

std::vector<StreamSubject> stream_subjects(NatsLink& link, const std::string& stream, const std::string& filter) {
  jsOptions options;
  jsOptions_Init(&options);
  options.Stream.Info.SubjectsFilter = filter.c_str();
  jsStreamInfo* info = nullptr;
  auto code = static_cast<jsErrCode>(0);
  const natsStatus status = ask_jetstream(
      "reading the subjects of the stream " + stream,
      [&] {
        code = static_cast<jsErrCode>(0);
        return js_GetStreamInfo(&info, jetstream_of(link), stream.c_str(), &options, &code);
      },
      [](std::string_view) {});
  if (status == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
    throw Error(ExitCode::not_found, fmt::format("no JetStream stream {} (--stream)", stream));
  }
  check_nats(status, "reading the subjects of the stream " + stream);
  const std::unique_ptr<jsStreamInfo, void (*)(jsStreamInfo*)> owned(info, jsStreamInfo_Destroy);
  std::vector<StreamSubject> subjects;
  if (const jsStreamStateSubjects* list = owned->State.Subjects) {
    for (int i = 0; i < list->Count; ++i) subjects.push_back({list->List[i].Subject, list->List[i].Msgs});
  }
  return subjects;
}

}  // namespace tp
