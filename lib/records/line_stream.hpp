// The input side of the line tools (trace-filter, trace-csv): NDJSON from a byte
// stream, one handler call per line, bad lines counted and reported with their line
// numbers (the first few one by one, then only counted), fatal with --strict.
#pragma once

#include <cstdint>
#include <functional>

#include "core/log.hpp"
#include "core/stream_loop.hpp"
#include "json/ndjson_reader.hpp"

namespace tp {

class LineStream final : public StreamHandler {
 public:
  static constexpr std::uint64_t reported_bad_lines = 10;

  LineStream(NdjsonReader::LineHandler on_line, const Logger& logger, bool strict,
             std::size_t max_line = NdjsonReader::default_max_line);

  void on_data(std::span<const std::uint8_t> bytes, std::uint64_t now_us) override;
  void on_end(std::uint64_t now_us) override;
  [[nodiscard]] bool done() const override { return done_; }
  // No more input is wanted (e.g. --limit reached).
  void stop() noexcept {
    done_ = true;
    reader_.stop();
  }

  // A line found bad after its turn: counted and reported like the others.
  void report_bad_line(std::uint64_t number, std::string_view message) { reader_.report_bad_line(number, message); }

  [[nodiscard]] std::uint64_t lines() const noexcept { return reader_.lines(); }
  [[nodiscard]] std::uint64_t bad_lines() const noexcept { return reader_.bad_lines(); }
  // One warning summing up the bad lines, if there were any.
  void report_summary(std::string_view source_name) const;

 private:
  const Logger& logger_;
  NdjsonReader reader_;
  bool done_ = false;
};

}  // namespace tp
