#include "ekotrace/row_writer.hpp"

#include "core/json_writer.hpp"
#include "core/wall_clock.hpp"
#include "records/ekotrace_columns.hpp"
#include "records/record_line.hpp"

namespace tp::ekotrace {

RowWriter::RowWriter(const std::string& path, OutputFormat format, std::uint32_t session_id,
                     std::vector<std::string> labels)
    : out_(BatchedWriter::open(path, true)), format_(format), session_id_(session_id), labels_(std::move(labels)) {
  if (format_ == OutputFormat::csv && out_.starts_empty()) {
    out_.write(ekotrace_csv_header());
    out_.flush();
  }
}

void RowWriter::append_csv(const Row& row, std::string_view receive_time) {
  OutBuffer& out = out_.buffer();
  append_uint(out, session_id_);
  out.push_back(',');
  append_uint(out, row.segment_id);
  out.push_back(',');
  append_uint(out, row.segment_index);
  out.push_back(',');
  out.append(receive_time);
  out.push_back(',');
  append_uint(out, row.tracer_id);
  out.push_back(',');
  if (row.entry.is_clock) {
    out.append(",,");
    append_uint(out, row.entry.id);
    out.push_back(',');
    append_uint(out, row.entry.value);
  } else {
    append_uint(out, row.entry.id);
    out.push_back(',');
    if (row.entry.has_payload) append_uint(out, row.entry.value);
    out.append(",,");
  }
  out.push_back('\n');
}

void RowWriter::append_ndjson(const Row& row, std::string_view receive_time, std::uint64_t monotonic_us) {
  RecordLine record(
      out_.buffer(),
      {monotonic_us, clock_name(RecordClock::us), static_cast<std::uint32_t>(row.tracer_index % 256),
       row.entry.is_clock ? RecordKind::eko_clock : RecordKind::eko_event, source_name(RecordSource::ekotrace)});
  RecordData& data = record.data();
  data.uint("session_id", session_id_)
      .uint("segment_id", row.segment_id)
      .uint("segment_index", row.segment_index)
      .string("receive_time", receive_time)
      .uint("tracer_id", row.tracer_id);
  if (row.tracer_index < labels_.size()) data.string("tracer", labels_[row.tracer_index]);
  if (row.entry.is_clock) {
    data.uint("lc_tracer_id", row.entry.id).uint("lc_clock", row.entry.value);
  } else {
    data.uint("event_id", row.entry.id);
    if (row.entry.has_payload) data.uint("event_payload", row.entry.value);
    if (const auto reserved = reserved_event_name(row.entry.id); !reserved.empty()) data.string("reserved", reserved);
  }
  record.end();
}

void RowWriter::write(std::span<const Row> rows, std::int64_t receive_wall_us, std::uint64_t receive_monotonic_us) {
  if (rows.empty()) return;
  std::array<char, rfc3339_length> time{};
  write_rfc3339_utc(receive_wall_us, time);
  const std::string_view receive_time(time.data(), time.size());
  for (const auto& row : rows) {
    if (format_ == OutputFormat::csv) {
      append_csv(row, receive_time);
    } else {
      append_ndjson(row, receive_time, receive_monotonic_us);
    }
    out_.commit();
  }
  out_.flush();
  rows_written_ += rows.size();
}

}  // namespace tp::ekotrace
