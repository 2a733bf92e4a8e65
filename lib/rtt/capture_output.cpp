#include "rtt/capture_output.hpp"

#include "records/record_line.hpp"

namespace tp::rtt {

void CaptureOutput::bytes(unsigned channel, std::span<const std::uint8_t> data, std::uint64_t now_us) {
  if (data.empty()) return;
  if (!ndjson_) {
    writer_.write(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
    return;
  }
  auto found = lines_.try_emplace(channel, channel, max_line_).first;
  found->second.add(data, now_us, writer_.buffer());
  writer_.commit();
}

void CaptureOutput::buffer_full(unsigned channel, std::uint64_t now_us) {
  if (!ndjson_) return;
  RecordLine record(writer_.buffer(), {now_us, clock_name(RecordClock::us), channel, RecordKind::overflow,
                                       source_name(RecordSource::rtt)});
  record.data().empty();
  record.end();
  writer_.commit();
}

void CaptureOutput::flush(std::uint64_t older_than_us) {
  for (auto& [channel, lines] : lines_) lines.flush_stale(older_than_us, writer_.buffer());
  writer_.commit();
  writer_.flush();
}

void CaptureOutput::finish() {
  for (auto& [channel, lines] : lines_) lines.finish(writer_.buffer());
  writer_.commit();
  writer_.flush();
}

}  // namespace tp::rtt
