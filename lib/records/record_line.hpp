// The one writer of the lines the tools pass each other (docs/design.md "The record"): the
// record, and itm-decode's frames line. A producer names the head (timestamp and its clock,
// port, kind, source) and writes only the members of event.data and, for some sources,
// metadata members after the head; the order and shape of everything else are fixed here:
//
//   {"timestamp":T,"port":P,"event":{"kind":"K"[,"data":{...}]},"source":"S"[,"clock":"C"][,meta]}
//   {"timestamp":T,"frames":[{"port":P,"data":[B,...],"timestamp":T},...],"clock":"C"[,"time_exact":false]}
//
// RecordLine writes a whole record; write_stored_record one read back from a store (its
// parts kept as JSON text). itm-decode writes the bodies of records before it knows
// their timestamp (it comes with a later packet): RecordBody writes the middle part and
// RecordStamp what goes around the bodies of one timestamp. write_frames_line writes a
// frames line (the raw ITM writes for Callisto's Itm message).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/json_writer.hpp"
#include "core/out_buffer.hpp"
#include "records/vocabulary.hpp"

namespace tp {

// event.data's members, in the order they are added. The object opens with the first
// member (or empty(), for a kind whose data has no members: Overflow's {}); a kind without
// data (IdleEnter) adds none.
class RecordData {
 public:
  explicit RecordData(OutBuffer& out) noexcept : out_(&out) {}

  // uint, string and boolean are inline, and so is key(): itm-decode writes millions of them a
  // second. Each member is written through one pointer after one check for room (writes
  // through a char pointer would otherwise make the buffer's size be reloaded every time).
  [[gnu::always_inline]] RecordData& uint(std::string_view name, std::uint64_t value) {
    out_->commit_to(write_uint(key(name, max_uint_digits), value));
    return *this;
  }
  [[gnu::always_inline]] RecordData& string(std::string_view name, std::string_view value) {
    out_->commit_to(key(name, 0));
    append_json_string(*out_, value);
    return *this;
  }
  // A string from tracepipe's own tables (a name of the schema, an exception's name):
  // printable ASCII with nothing to escape, so it is copied as it is.
  [[gnu::always_inline]] RecordData& name(std::string_view key_name, std::string_view value) {
    char* p = key(key_name, value.size() + 2);
    *p++ = '"';
    p = OutBuffer::put(p, value);
    *p++ = '"';
    out_->commit_to(p);
    return *this;
  }
  [[gnu::always_inline]] RecordData& boolean(std::string_view name, bool value) {
    char* p = key(name, 5);
    out_->commit_to(value ? OutBuffer::put(p, std::string_view("true")) : OutBuffer::put(p, std::string_view("false")));
    return *this;
  }
  RecordData& number(std::string_view name, double value);  // null when not finite
  RecordData& null(std::string_view name);
  RecordData& bytes(std::string_view name, std::span<const std::uint8_t> value);    // [b0,b1,...]
  RecordData& uints(std::string_view name, std::span<const std::uint64_t> values);  // [v0,v1,...]
  RecordData& empty();

  // Closes the data (when it was opened) and the event.
  void close() {
    *out_ += open_ ? std::string_view("}}") : std::string_view("}");
    open_ = false;
  }
  [[nodiscard]] bool is_open() const noexcept { return open_; }
  void close_silently() noexcept { open_ = false; }  // RecordBody::end() wrote the braces

 private:
  // Writes the member's name (opening the data with the first) with room for `value_room`
  // more bytes after it; returns where the value goes.
  [[gnu::always_inline]] char* key(std::string_view name, std::size_t value_room) {
    char* p = out_->ensure(name.size() + value_room + 12);
    p = open_ ? OutBuffer::put(p, std::string_view(",\"")) : OutBuffer::put(p, std::string_view(",\"data\":{\""));
    open_ = true;
    p = OutBuffer::put(p, name);
    return OutBuffer::put(p, std::string_view("\":"));
  }
  OutBuffer* out_;
  bool open_ = false;
};

// "port":P,"event":{"kind":"K"[,"data":{...}]},"source":"S"
class RecordBody {
 public:
  // Inline, as RecordData's members: one check for room, then writes through a pointer.
  RecordBody(OutBuffer& out, std::uint32_t port, RecordKind record_kind) : out_(out), data_(out) {
    const std::string_view kind = kind_name(record_kind);
    char* p = out.ensure(kind.size() + max_uint_digits + 24);
    p = OutBuffer::put(p, std::string_view("\"port\":"));
    p = write_uint(p, port);
    p = OutBuffer::put(p, std::string_view(",\"event\":{\"kind\":\""));
    p = OutBuffer::put(p, kind);  // a kind is a name of the schema: nothing to escape
    *p++ = '"';
    out.commit_to(p);
  }
  [[nodiscard]] RecordData& data() noexcept { return data_; }
  void end(std::string_view source) {
    char* p = out_.ensure(source.size() + 16);
    p = data_.is_open() ? OutBuffer::put(p, std::string_view("}}")) : OutBuffer::put(p, std::string_view("}"));
    p = OutBuffer::put(p, std::string_view(",\"source\":\""));
    p = OutBuffer::put(p, source);
    *p++ = '"';
    out_.commit_to(p);
    data_.close_silently();
  }

 private:
  OutBuffer& out_;
  RecordData data_;
};

// {"timestamp":T,   and   ,"clock":"C"[,"time_exact":false]}\n   around the bodies of records
// stamped T. `exact` false: T is not when the records happened, only the best time known
// (an ITM timestamp flagged delayed, or records released before their timestamp came).
struct RecordStamp {
  OutBuffer prefix;
  OutBuffer suffix;

  void set(std::uint64_t timestamp, std::string_view clock, bool exact = true);
  // A whole line: the prefix, `body`, the suffix.
  void line(OutBuffer& out, std::string_view body) const;
};

struct RecordHead {
  std::uint64_t timestamp = 0;
  std::string_view clock;  // the unit of timestamp: cycles, us, ticks; empty: none given
  std::uint32_t port = 0;
  RecordKind kind = RecordKind::raw;
  std::string_view source;  // itm, dwt, palm, chibios, ekotrace, sim
};

// One whole record line: the head, then data(), then meta() members, then end().
class RecordLine {
 public:
  RecordLine(OutBuffer& out, const RecordHead& head);
  [[nodiscard]] RecordData& data() noexcept { return body_.data(); }
  // Source metadata after the head (palm-recv's connection and peer), in the order added.
  RecordLine& meta(std::string_view key, std::uint64_t value);
  RecordLine& meta(std::string_view key, std::string_view value);
  void end();

 private:
  void close_head();
  void meta_key(std::string_view key);
  OutBuffer& out_;
  RecordBody body_;
  std::string_view source_;
  std::string_view clock_;
  bool head_closed_ = false;
};

// A record as a store keeps it (trace-query reads it back from ClickHouse): the head, and the
// rest as JSON text the store checked. Written in RecordLine's order, time_exact after clock
// (as RecordStamp writes it), then the other members:
//   {"timestamp":T,"port":P,"event":{"kind":"K"[,"data":D][,event_members]}[,"source":"S"]
//    [,"clock":"C"][,"time_exact":false][,members]}
struct StoredRecord {
  std::uint64_t timestamp = 0;
  std::uint32_t port = 0;
  std::string_view kind;           // any kind (another producer's too): escaped here
  std::string_view data;           // event.data, a minified JSON object; empty: none
  std::string_view event_members;  // event's members beside kind and data, minified "k":v,... ; empty: none
  std::string_view source;         // empty: none
  std::string_view clock;          // empty: none
  bool exact = true;
  std::string_view members;  // the record's other members, minified "k":v,... ; empty: none
};

// Writes the line (with its newline). The caller vouches for data, event_members and members
// being minified JSON (no newline): they are copied as they are.
void write_stored_record(OutBuffer& out, const StoredRecord& record);

// One ITM stimulus write, for a frames line: its port and its 1, 2 or 4 bytes (little-endian).
struct ItmFrame {
  std::uint16_t port = 0;
  std::uint8_t size = 0;
  std::uint32_t value = 0;
};

// A whole frames line: the writes that one timestamp dates, each with that timestamp.
void write_frames_line(OutBuffer& out, std::uint64_t timestamp, std::span<const ItmFrame> frames,
                       std::string_view clock, bool exact);

}  // namespace tp
