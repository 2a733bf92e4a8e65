// Records on their way from the decoding session to the thread that formats them.
//
// itm-decode's records outweigh its input 3-30x, and formatting them cost as much as decoding
// did: the session hands them over decoded (an Event and its stamp, copied into a batch), and
// BatchedWriter's thread formats each batch (EntryFormatter) and writes it, on a second core.
// A record is staged as an entry before its time is known and stamped in place when it is,
// so the records of a timestamp go to the batch in one copy. Entries are in the host's byte
// order and live only inside one process.
//
//   record: 'R', time u64, exact u8, clock u8 (cycles, ns, us, none), then the event:
//           kind u8, source u8, port u16, c u8, d u8, a u64, b u64,
//           text length u32, bytes length u32, text, bytes
//   line:   'L', length u32, a line formatted already (the frames lines)
#pragma once

#include <cstdint>
#include <string_view>

#include "core/batched_writer.hpp"
#include "core/out_buffer.hpp"
#include "decode/record_writer.hpp"
#include "ports/event.hpp"
#include "ports/port_map.hpp"

namespace tp {

// Appends the record entry of an event, its stamp left to stamp_record_entry (everything
// RecordFormatter::body reads; its views copied).
void stage_record_entry(OutBuffer& out, const Event& event);
// Stamps the record entry that starts at `entry`. `clock`: cycles, ns, us or none (a session's
// units; another is a bug, std::logic_error).
void stamp_record_entry(char* entry, std::uint64_t time, std::string_view clock, bool exact);
void append_line_entry(OutBuffer& out, std::string_view line);

// Formats batches of entries into lines, as RecordFormatter would have written them. Two
// threads may format batches with one formatter at once (it keeps no state between calls).
class EntryFormatter {
 public:
  // `symbols` must outlive the formatter; the port map is its own copy.
  EntryFormatter(OutputFormat format, PortMap port_map, const symbols::Symbolizer* symbols);
  EntryFormatter(const EntryFormatter&) = delete;
  EntryFormatter& operator=(const EntryFormatter&) = delete;
  EntryFormatter(EntryFormatter&&) = delete;
  EntryFormatter& operator=(EntryFormatter&&) = delete;
  ~EntryFormatter() = default;

  // Throws std::logic_error on a batch that is not whole entries (a bug, not input).
  void format(std::string_view batch, OutBuffer& out) const;

 private:
  // The stamp of the last record formatted: the records of one time share it.
  struct LastStamp {
    RecordFormatter::Stamp stamp;
    std::uint64_t time = 0;
    std::uint8_t clock_code = 0;  // the entry's, an index of its clock's name
    bool exact = true;
    bool set = false;
  };
  std::string_view format_record(std::string_view rest, LastStamp& last, OutBuffer& out) const;

  PortMap port_map_;
  RecordFormatter formatter_;
};

// The encoder for BatchedWriter::write_in_background: an EntryFormatter of its own.
BatchedWriter::BatchEncoder entry_encoder(OutputFormat format, const PortMap& port_map,
                                          const symbols::Symbolizer* symbols);

}  // namespace tp
