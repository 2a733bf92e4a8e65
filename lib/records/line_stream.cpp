#include "records/line_stream.hpp"

#include <fmt/format.h>

#include "core/signals.hpp"

namespace tp {

LineStream::LineStream(NdjsonReader::LineHandler on_line, const Logger& logger, bool strict, std::size_t max_line)
    : logger_(logger),
      reader_(
          std::move(on_line),
          [this](std::uint64_t number, std::string_view message) {
            const std::uint64_t bad = reader_.bad_lines();
            if (bad <= reported_bad_lines) logger_.warn(fmt::format("line {}: {} (skipped)", number, message));
            if (bad == reported_bad_lines) logger_.warn("further bad lines are counted, not shown");
          },
          strict, max_line) {}

void LineStream::on_data(std::span<const std::uint8_t> bytes, std::uint64_t /*now_us*/) {
  reader_.feed(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

void LineStream::on_end(std::uint64_t /*now_us*/) {
  // Stopped by SIGINT/SIGTERM: the input did not end, so a line not yet complete was cut by
  // the signal, not written that way. It is left out (whole lines only), not reported.
  if (stop_requested() != 0) return reader_.stop();
  reader_.finish();
}

void LineStream::report_summary(std::string_view source_name) const {
  if (reader_.bad_lines() == 0) return;
  logger_.warn(
      fmt::format("{}: {} of {} lines were bad (not records, or a field that could not be judged) and were skipped",
                  source_name, reader_.bad_lines(), reader_.lines()));
}

}  // namespace tp
