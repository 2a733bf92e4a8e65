#include "fleet/ship_journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "core/error.hpp"
#include "core/number.hpp"
#include "records/fleet_fields.hpp"

namespace tp {
namespace {

constexpr std::string_view journal_magic = "tracepipe-ship-journal";
constexpr std::string_view journal_version = "2";
constexpr std::size_t rewrite_above = std::size_t{1024} * 1024;

void write_all(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error(errno, "writing the ship journal " + path);
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

FileDescriptor open_journal(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) throw_system_error(errno, "opening the ship journal " + path);
  return FileDescriptor(fd);
}

std::string mark_text(InputMark mark) {
  return fmt::format("{} {:016x}", mark.bytes, mark.hash);
}

// "BYTES HASH" (HASH: 16 hex digits).
std::optional<InputMark> mark_of(std::string_view text) {
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos || text.size() - space - 1 != 16) return std::nullopt;
  const auto bytes = parse_whole_number<std::uint64_t>(text.substr(0, space));
  const auto hash = parse_whole_number<std::uint64_t>(text.substr(space + 1), 16);
  if (!bytes || !hash) return std::nullopt;
  return InputMark{*bytes, *hash};
}

// "FIRST LAST BYTES HASH"
std::optional<PlannedChunk> chunk_of(std::string_view text) {
  const std::size_t first_gap = text.find(' ');
  if (first_gap == std::string_view::npos) return std::nullopt;
  const std::size_t second_gap = text.find(' ', first_gap + 1);
  if (second_gap == std::string_view::npos) return std::nullopt;
  const auto range = seq_range_of(text.substr(0, first_gap), text.substr(first_gap + 1, second_gap - first_gap - 1));
  const auto mark = mark_of(text.substr(second_gap + 1));
  if (!range || !mark) return std::nullopt;
  return PlannedChunk{*range, *mark};
}

// "SEQ BYTES HASH"
bool read_acked(std::string_view text, JournalState& state) {
  const std::size_t gap = text.find(' ');
  if (gap == std::string_view::npos) return false;
  const auto seq = parse_whole_number<std::uint64_t>(text.substr(0, gap));
  const auto mark = mark_of(text.substr(gap + 1));
  if (!seq || *seq >= seq_limit || !mark) return false;
  state.acked_through = *seq;
  state.acked_mark = *mark;
  return true;
}

void check_header(std::string_view first_line, const std::string& path) {
  const std::string_view version =
      first_line.starts_with(journal_magic) ? first_line.substr(journal_magic.size()) : std::string_view();
  if (version == fmt::format(" {}", journal_version)) return;
  if (version == " 1") {
    throw Error(ExitCode::bad_input,
                fmt::format("{}: a version-1 journal (an older trace-ship), which does not record what its input "
                            "was, so a resume cannot be checked against the input: finish that run with the "
                            "trace-ship that wrote it, or remove the journal to ship the input as a new run",
                            path));
  }
  throw Error(ExitCode::bad_input, fmt::format("{}: not a trace-ship journal (it starts with \"{} {}\")", path,
                                               journal_magic, journal_version));
}

// The journal's lines that end with a newline (a last one without is a cut write: never was).
std::vector<std::string_view> whole_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t newline = text.find('\n'); newline != std::string_view::npos; newline = text.find('\n')) {
    lines.push_back(text.substr(0, newline));
    text.remove_prefix(newline + 1);
  }
  return lines;
}

void refuse_unless_regular(const struct stat& status, const std::string& path) {
  if (S_ISREG(status.st_mode)) return;
  throw Error(ExitCode::usage, fmt::format("--state {}: {}, not a regular file (a journal is a file trace-ship "
                                           "writes and renames)",
                                           path, S_ISDIR(status.st_mode) ? "a directory" : "a device, FIFO or socket"));
}

std::string read_bounded(int fd, const std::string& path) {
  std::string text;
  std::vector<char> buffer(std::size_t{64} * 1024);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_system_error(errno, "reading the ship journal " + path);
    if (n == 0) return text;
    text.append(buffer.data(), static_cast<std::size_t>(n));
    if (text.size() > max_journal_bytes) {
      throw Error(ExitCode::bad_input, fmt::format("{}: larger than any trace-ship journal ({} bytes at most): not "
                                                   "one",
                                                   path, max_journal_bytes));
    }
  }
}

}  // namespace

FileDescriptor lock_ship_journal(const std::string& path) {
  // What is not a journal is refused before a lock file is made beside it (/dev/zero.lock).
  if (struct stat status{}; ::stat(path.c_str(), &status) == 0) refuse_unless_regular(status, path);
  const std::string lock_path = path + ".lock";
  const int opened = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOCTTY | O_CLOEXEC, 0644);
  if (opened < 0) throw_system_error(errno, "opening the ship journal's lock " + lock_path);
  FileDescriptor fd(opened);
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return fd;
  if (errno != EWOULDBLOCK) throw_system_error(errno, "locking " + lock_path);
  throw Error(ExitCode::busy,
              fmt::format("--state {}: another trace-ship is using this journal (it holds {}); a journal is for "
                          "one trace-ship at a time",
                          path, lock_path));
}

std::optional<JournalState> read_ship_journal(const std::string& path) {
  // O_NONBLOCK: a FIFO given by mistake must not hold the open until a writer comes.
  const int opened = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (opened < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw_system_error(errno, "reading the ship journal " + path);
  }
  const FileDescriptor fd(opened);
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) throw_system_error(errno, "reading the ship journal " + path);
  refuse_unless_regular(status, path);
  if (static_cast<std::uint64_t>(status.st_size) > max_journal_bytes) {
    throw Error(ExitCode::bad_input, fmt::format("{}: {} bytes, larger than any trace-ship journal ({} at most): not "
                                                 "one",
                                                 path, status.st_size, max_journal_bytes));
  }
  return parse_ship_journal(read_bounded(fd.get(), path), path);
}

JournalState parse_ship_journal(std::string_view text, const std::string& path) {
  if (text.size() > max_journal_bytes) {
    throw Error(ExitCode::bad_input, fmt::format("{}: larger than any trace-ship journal: not one", path));
  }
  const std::vector<std::string_view> lines = whole_lines(text);
  check_header(lines.empty() ? text.substr(0, 80) : lines.front(), path);
  JournalState state;
  std::deque<PlannedChunk> published;
  for (std::size_t number = 2; number <= lines.size(); ++number) {
    const std::string_view line = lines[number - 1];
    const std::size_t space = line.find(' ');
    const std::string_view what = line.substr(0, space);
    const std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    bool good = false;
    if (what == "board") {
      good = state.board.empty() && is_fleet_name(rest);
      state.board = rest;
    } else if (what == "run") {
      good = state.run.empty() && is_fleet_name(rest);
      state.run = rest;
    } else if (what == "chunk") {
      // First sends go in seq order: a chunk that starts at or before the last one's end is
      // not of a journal trace-ship wrote (and would make the plan cut records twice).
      const auto chunk = chunk_of(rest);
      good = chunk && (published.empty() || chunk->range.first > published.back().range.last);
      if (good) published.push_back(*chunk);
    } else if (what == "acked") {
      good = read_acked(rest, state);
    }
    if (!good) {
      throw Error(ExitCode::bad_input,
                  fmt::format("{}:{}: not a journal line: \"{}\"", path, number, line.substr(0, 80)));
    }
  }
  if (state.board.empty() || state.run.empty()) {
    throw Error(ExitCode::bad_input,
                fmt::format("{}: a trace-ship journal without its board and run (cut short?)", path));
  }
  for (const PlannedChunk& chunk : published) {
    if (state.acked_through && chunk.range.last <= *state.acked_through) continue;
    state.published_after_acked.push_back(chunk);
  }
  std::sort(state.published_after_acked.begin(), state.published_after_acked.end(),
            [](const PlannedChunk& x, const PlannedChunk& y) { return x.range.first < y.range.first; });
  return state;
}

ShipJournal::ShipJournal(std::string path, std::string board, std::string run)
    : path_(std::move(path)), board_(std::move(board)), run_(std::move(run)) {
  if (auto state = read_ship_journal(path_); state && state->run == run_ && state->board == board_) {
    acked_ = state->acked_through;
    acked_mark_ = state->acked_mark;
    published_ = std::move(state->published_after_acked);
  }
  rewrite();
}

void ShipJournal::append(const std::string& text) {
  try {
    write_all(fd_.get(), text, path_);
  } catch (const Error&) {
    // A full disk may have taken part of the line: cut it off, so that the journal ends with
    // a whole line (a reader ignores a cut one anyway).
    // If that fails too, the cut line has no newline and is ignored when read.
    [[maybe_unused]] const int cut = ::ftruncate(fd_.get(), static_cast<off_t>(size_));
    throw;
  }
  size_ += text.size();
  if (size_ > std::max(rewrite_above, 2 * rewritten_size_)) rewrite();
}

void ShipJournal::chunk_published(const PlannedChunk& chunk) {
  // A resume sends the chunks it re-cut from the journal as first sends: told already.
  if (!published_.empty() && chunk.range.first <= published_.back().range.last) return;
  if (acked_ && chunk.range.last <= *acked_) return;
  published_.push_back(chunk);
  append(fmt::format("chunk {} {} {}\n", chunk.range.first, chunk.range.last, mark_text(chunk.after)));
}

void ShipJournal::acked_through(std::uint64_t seq, InputMark mark) {
  if (acked_ && seq <= *acked_) return;
  acked_ = seq;
  acked_mark_ = mark;
  while (!published_.empty() && published_.front().range.last <= seq) published_.pop_front();
  append(fmt::format("acked {} {}\n", seq, mark_text(mark)));
}

void ShipJournal::rewrite() {
  std::string text = fmt::format("{} {}\nboard {}\nrun {}\n", journal_magic, journal_version, board_, run_);
  if (acked_) text += fmt::format("acked {} {}\n", *acked_, mark_text(acked_mark_));
  for (const PlannedChunk& chunk : published_) {
    text += fmt::format("chunk {} {} {}\n", chunk.range.first, chunk.range.last, mark_text(chunk.after));
  }
  if (text.size() > max_journal_bytes / 2) {
    throw Error(ExitCode::io_error,
                fmt::format("the ship journal {} would pass {} bytes ({} chunks published after seq {} not all "
                            "acknowledged): more than a journal may hold",
                            path_, max_journal_bytes / 2, published_.size(), acked_.value_or(0)));
  }
  const std::string temporary = path_ + ".new";
  try {
    FileDescriptor fd = open_journal(temporary, O_CREAT | O_TRUNC);
    write_all(fd.get(), text, temporary);
  } catch (const Error&) {
    ::unlink(temporary.c_str());  // a cut copy is of no use; the journal itself is as it was
    throw;
  }
  if (::rename(temporary.c_str(), path_.c_str()) != 0) throw_system_error(errno, "renaming " + temporary);
  fd_ = open_journal(path_, O_APPEND);
  size_ = text.size();
  rewritten_size_ = text.size();
}

}  // namespace tp
