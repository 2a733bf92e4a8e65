// --reconnect: wraps a source factory; when the source ends or fails in a way that
// passing time can cure (unplugged, connection closed or refused, no answer), it is
// closed and opened again every retry interval until it is back or a stop is requested.
// Configuration errors (permissions, busy, rate, usage) stay fatal.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "swo/swo_source.hpp"

namespace tp::swo {

class ReconnectingSource final : public SwoSource {
 public:
  using Factory = std::function<std::unique_ptr<SwoSource>()>;
  using Notice = std::function<void(const std::string&)>;  // "lost ...; waiting", "back"

  // Opens the first source at once (its errors propagate: nothing to reconnect to yet).
  ReconnectingSource(Factory factory, Notice notice, int retry_ms = 500);
  PullResult pull(std::span<std::uint8_t> buffer, int timeout_ms) override;
  void close() noexcept override;
  [[nodiscard]] SourceCounters counters() const noexcept override;
  [[nodiscard]] std::string description() const override;
  [[nodiscard]] SourceFacts facts() const override { return last_facts_; }

  // Whether an error is worth waiting out.
  static bool recoverable(const std::exception& error) noexcept;

 private:
  void lose(const std::string& why);

  Factory factory_;
  Notice notice_;
  int retry_ms_;
  std::unique_ptr<SwoSource> source_;
  std::string last_description_;
  SourceFacts last_facts_;
  std::uint64_t next_try_us_ = 0;
  SourceCounters finished_;  // of the sources already closed
};

}  // namespace tp::swo
