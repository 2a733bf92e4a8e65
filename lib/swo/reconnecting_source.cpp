#include "swo/reconnecting_source.hpp"

#include <fmt/format.h>

#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace tp::swo {

ReconnectingSource::ReconnectingSource(Factory factory, Notice notice, int retry_ms)
    : factory_(std::move(factory)), notice_(std::move(notice)), retry_ms_(retry_ms), source_(factory_()) {
  last_description_ = source_->description();
  last_facts_ = source_->facts();
}

bool ReconnectingSource::recoverable(const std::exception& error) noexcept {
  const auto* e = dynamic_cast<const Error*>(&error);
  if (e == nullptr) return false;
  switch (e->code()) {
    case ExitCode::io_error:
    case ExitCode::not_found:
    case ExitCode::timeout:
      return true;
    default:
      return false;
  }
}

void ReconnectingSource::lose(const std::string& why) {
  finished_ += source_->counters();
  source_->close();
  source_.reset();
  ++finished_.gaps;  // whatever the target sent meanwhile is lost
  next_try_us_ = monotonic_us() + static_cast<std::uint64_t>(retry_ms_) * 1000U;
  notice_(fmt::format("{}; reconnecting every {} ms (Ctrl-C to stop)", why, retry_ms_));
}

PullResult ReconnectingSource::pull(std::span<std::uint8_t> buffer, int timeout_ms) {
  if (!source_) {
    const std::uint64_t now = monotonic_us();
    if (now < next_try_us_) {
      std::this_thread::sleep_for(std::chrono::microseconds(
          std::min<std::uint64_t>(next_try_us_ - now, static_cast<std::uint64_t>(timeout_ms) * 1000U)));
      return {Pull::timeout, 0};
    }
    try {
      source_ = factory_();
    } catch (const std::exception& error) {
      if (!recoverable(error)) throw;
      next_try_us_ = monotonic_us() + static_cast<std::uint64_t>(retry_ms_) * 1000U;
      return {Pull::timeout, 0};
    }
    ++finished_.reconnects;
    last_description_ = source_->description();
    last_facts_ = source_->facts();
    notice_(fmt::format("reconnected: {}", last_description_));
  }
  try {
    const PullResult result = source_->pull(buffer, timeout_ms);
    if (result.status == Pull::end) {
      lose(fmt::format("{} ended", last_description_));
      return {Pull::timeout, 0};
    }
    return result;
  } catch (const std::exception& error) {
    if (!recoverable(error)) throw;
    lose(error.what());
    return {Pull::timeout, 0};
  }
}

void ReconnectingSource::close() noexcept {
  if (source_) source_->close();
}

SourceCounters ReconnectingSource::counters() const noexcept {
  SourceCounters total = finished_;
  if (source_) total += source_->counters();
  return total;
}

std::string ReconnectingSource::description() const {
  return last_description_;
}

}  // namespace tp::swo
