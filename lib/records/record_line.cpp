#include "records/record_line.hpp"

#include <cstring>

#include "core/json_writer.hpp"

namespace tp {

using namespace std::string_view_literals;

RecordData& RecordData::number(std::string_view name, double value) {
  out_->commit_to(key(name, 0));
  append_double(*out_, value);
  return *this;
}

RecordData& RecordData::null(std::string_view name) {
  out_->commit_to(key(name, 0));
  *out_ += "null"sv;
  return *this;
}

RecordData& RecordData::bytes(std::string_view name, std::span<const std::uint8_t> value) {
  out_->commit_to(key(name, 0));
  append_byte_array(*out_, value);
  return *this;
}

RecordData& RecordData::uints(std::string_view name, std::span<const std::uint64_t> values) {
  out_->commit_to(key(name, 0));
  *out_ += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) *out_ += ',';
    append_uint(*out_, values[i]);
  }
  *out_ += ']';
  return *this;
}

RecordData& RecordData::empty() {
  if (!open_) *out_ += ",\"data\":{"sv;
  open_ = true;
  return *this;
}

void RecordStamp::set(std::uint64_t timestamp, std::string_view clock, bool exact) {
  prefix.clear();
  prefix += "{\"timestamp\":"sv;
  append_uint(prefix, timestamp);
  prefix += ',';
  suffix.clear();
  if (!clock.empty()) {
    suffix += ",\"clock\":\""sv;
    suffix += clock;
    suffix += '"';
  }
  if (!exact) suffix += ",\"time_exact\":false"sv;
  suffix += "}\n"sv;
}

void RecordStamp::line(OutBuffer& out, std::string_view body) const {
  char* p = out.ensure(prefix.size() + body.size() + suffix.size());
  std::memcpy(p, prefix.data(), prefix.size());
  p += prefix.size();
  std::memcpy(p, body.data(), body.size());
  p += body.size();
  std::memcpy(p, suffix.data(), suffix.size());
  out.commit_to(p + suffix.size());
}

namespace {

// One check for room, then writes through a pointer (as RecordBody does): every producer's
// records start here.
OutBuffer& start_line(OutBuffer& out, std::uint64_t timestamp) {
  char* p = out.ensure(max_uint_digits + 16);
  p = OutBuffer::put(p, "{\"timestamp\":"sv);
  p = write_uint(p, timestamp);
  *p++ = ',';
  out.commit_to(p);
  return out;
}

}  // namespace

RecordLine::RecordLine(OutBuffer& out, const RecordHead& head)
    : out_(out),
      body_(start_line(out, head.timestamp), head.port, head.kind),
      source_(head.source),
      clock_(head.clock) {}

void RecordLine::close_head() {
  if (head_closed_) return;
  head_closed_ = true;
  body_.end(source_);
  if (!clock_.empty()) {
    char* p = out_.ensure(clock_.size() + 16);
    p = OutBuffer::put(p, ",\"clock\":\""sv);
    p = OutBuffer::put(p, clock_);
    *p++ = '"';
    out_.commit_to(p);
  }
}

void RecordLine::meta_key(std::string_view key) {
  close_head();
  out_ += ",\""sv;
  out_ += key;
  out_ += "\":"sv;
}

RecordLine& RecordLine::meta(std::string_view key, std::uint64_t value) {
  meta_key(key);
  append_uint(out_, value);
  return *this;
}

RecordLine& RecordLine::meta(std::string_view key, std::string_view value) {
  meta_key(key);
  append_json_string(out_, value);
  return *this;
}

void RecordLine::end() {
  close_head();
  char* p = out_.ensure(2);
  p = OutBuffer::put(p, "}\n"sv);
  out_.commit_to(p);
}

void write_stored_record(OutBuffer& out, const StoredRecord& record) {
  start_line(out, record.timestamp);
  out += "\"port\":"sv;
  append_uint(out, record.port);
  out += ",\"event\":{\"kind\":"sv;
  append_json_string(out, record.kind);
  if (!record.data.empty()) {
    out += ",\"data\":"sv;
    out += record.data;
  }
  if (!record.event_members.empty()) {
    out += ',';
    out += record.event_members;
  }
  out += '}';
  if (!record.source.empty()) {
    out += ",\"source\":"sv;
    append_json_string(out, record.source);
  }
  if (!record.clock.empty()) {
    out += ",\"clock\":"sv;
    append_json_string(out, record.clock);
  }
  if (!record.exact) out += ",\"time_exact\":false"sv;
  if (!record.members.empty()) {
    out += ',';
    out += record.members;
  }
  out += "}\n"sv;
}

void write_frames_line(OutBuffer& out, std::uint64_t timestamp, std::span<const ItmFrame> frames,
                       std::string_view clock, bool exact) {
  out += "{\"timestamp\":"sv;
  append_uint(out, timestamp);
  out += ",\"frames\":["sv;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (i != 0) out += ',';
    out += "{\"port\":"sv;
    append_uint(out, frames[i].port);
    out += ",\"data\":["sv;
    for (std::uint8_t k = 0; k < frames[i].size; ++k) {
      if (k != 0) out += ',';
      append_uint(out, (frames[i].value >> (8U * k)) & 0xFFU);
    }
    out += "],\"timestamp\":"sv;
    append_uint(out, timestamp);
    out += '}';
  }
  out += "],\"clock\":\""sv;
  out += clock;
  out += exact ? "\"}\n"sv : "\",\"time_exact\":false}\n"sv;
}

}  // namespace tp
