// trace-ship --state FILE: what a restarted trace-ship needs to resume a run on the same
// input without losing or doubling a record. A text file of lines, appended as it goes
// (write(2) without fsync: it has to outlive the process, SIGKILL included, not the host):
//
//   tracepipe-ship-journal 1
//   board rack3-b07
//   run 20261127T101056Z-4242
//   chunk 0 311          a chunk about to be published for the first time: its seq range
//   acked 311            every seq up to here is acknowledged (or told lost)
//
// Resuming: the run is the journal's, seqs up to the last `acked` are skipped, and the chunks
// published after it are cut again at the same seqs, so their message ids are the same and
// JetStream drops those it stored already (within its duplicate window). The file is rewritten
// (to a temporary name, then renamed) when it grows past 1 MiB.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "core/file_descriptor.hpp"
#include "fleet/fleet_subject.hpp"

namespace tp {

struct JournalState {
  std::string board;
  std::string run;
  std::optional<std::uint64_t> acked_through;
  std::deque<SeqRange> published_after_acked;  // in seq order
};

// The state a journal file holds; nothing when the file does not exist. Throws Error
// (bad_input) for a file that is not a ship journal.
[[nodiscard]] std::optional<JournalState> read_ship_journal(const std::string& path);
// The same, from the journal's text (`path` names it in errors).
[[nodiscard]] JournalState parse_ship_journal(std::string_view text, const std::string& path);

class ShipJournal {
 public:
  ShipJournal(std::string path, std::string board, std::string run);
  void chunk_published(SeqRange range);
  void acked_through(std::uint64_t seq);

 private:
  void append(const std::string& text);
  void rewrite();

  std::string path_;
  std::string board_;
  std::string run_;
  FileDescriptor fd_;
  std::size_t size_ = 0;
  std::optional<std::uint64_t> acked_;
  std::deque<SeqRange> published_;  // after acked_
};

}  // namespace tp
