// trace-ship --state FILE: what a restarted trace-ship needs to resume a run on the same
// input without losing or doubling a record. A text file of lines, appended as it goes
// (write(2) without fsync: it has to outlive the process, SIGKILL included, not the host):
//
//   tracepipe-ship-journal 2
//   board rack3-b07
//   run 20261127T101056Z-4242
//   chunk 0 311 40211 9c1e0f33a8d2b7e4   a chunk about to be published for the first time: its
//                                        seq range, and where the input stood after its last
//                                        record (bytes read, FNV-1a hash of them: InputMark)
//   acked 311 40211 9c1e0f33a8d2b7e4     every seq up to here is acknowledged (or told lost),
//                                        and where the input stood after that seq's line
//
// Only lines ending in a newline count: a last line cut by a kill or a full disk in the
// middle of a write never happened (a chunk line is written before the publish, an acked
// line after the ack). The header is written whole, to a temporary file renamed over the
// journal, so a cut board or run line is not a journal of this version's: refused.
//
// Resuming: the run is the journal's; the input is read again from its start and must be the
// one recorded (its bytes up to the acknowledged seq, and up to each chunk's last seq, hash
// to the same marks; otherwise Error bad_input before anything of it is shipped): seqs up to
// the last `acked` are skipped, and the chunks published after it are cut again at the same
// seqs, so their message ids are the same and JetStream drops those it stored already
// (within its duplicate window). The file is rewritten (to a temporary name, then renamed)
// when it passes 1 MiB and twice its last rewritten size, so it never grows past
// max_journal_bytes; a larger file, or one that is not a regular file, is refused unread.
// A version-1 journal (before the marks) cannot tell its input: refused with what to do.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "core/file_descriptor.hpp"
#include "fleet/chunk_builder.hpp"

namespace tp {

// The largest journal read: a rewrite holds at most half of it, and the file is rewritten
// when it passes twice that (or 1 MiB).
inline constexpr std::size_t max_journal_bytes = std::size_t{64} * 1024 * 1024;

struct JournalState {
  std::string board;
  std::string run;
  std::optional<std::uint64_t> acked_through;
  InputMark acked_mark;                            // the input after acked_through's line
  std::deque<PlannedChunk> published_after_acked;  // in seq order
};

// Takes PATH.lock, the journal's lock (flock, held until the descriptor closes; the journal
// itself is replaced by renames, so it cannot hold one): two trace-ships on one journal would
// ship two inputs as one run, and JetStream would drop the records of one as duplicates of the
// other's. Throws Error: busy when another process holds it, usage for a path that is not a
// regular file.
[[nodiscard]] FileDescriptor lock_ship_journal(const std::string& path);
// The state a journal file holds; nothing when the file does not exist. Throws Error: usage
// for a path that is not a regular file, bad_input for a file that is not a journal of this
// version (or is larger than any journal).
[[nodiscard]] std::optional<JournalState> read_ship_journal(const std::string& path);
// The same, from the journal's text (`path` names it in errors).
[[nodiscard]] JournalState parse_ship_journal(std::string_view text, const std::string& path);

class ShipJournal {
 public:
  // Throws Error (io_error and the reason) when the journal cannot be written, here and in
  // every call below; the journal then holds whole lines only (what it says stays true).
  ShipJournal(std::string path, std::string board, std::string run);
  void chunk_published(const PlannedChunk& chunk);
  void acked_through(std::uint64_t seq, InputMark mark);

 private:
  void append(const std::string& text);
  void rewrite();

  std::string path_;
  std::string board_;
  std::string run_;
  FileDescriptor fd_;
  std::size_t size_ = 0;
  std::size_t rewritten_size_ = 0;
  std::optional<std::uint64_t> acked_;
  InputMark acked_mark_;
  std::deque<PlannedChunk> published_;  // after acked_
};

}  // namespace tp
