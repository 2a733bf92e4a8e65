#include "fleet/ship_journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "core/error.hpp"
#include "core/number.hpp"
#include "records/fleet_fields.hpp"

namespace tp {
namespace {

constexpr std::string_view journal_magic = "tracepipe-ship-journal 1";
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

}  // namespace

std::optional<JournalState> read_ship_journal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw_system_error(errno, "reading the ship journal " + path);
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_ship_journal(text, path);
}

JournalState parse_ship_journal(std::string_view text, const std::string& path) {
  const auto next_line = [&text](std::string_view& line) {
    if (text.empty()) return false;
    const std::size_t newline = text.find('\n');
    line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    return true;
  };
  std::string_view line;
  if (!next_line(line) || line != journal_magic) {
    throw Error(ExitCode::bad_input,
                fmt::format("{}: not a trace-ship journal (it starts with \"{}\")", path, journal_magic));
  }
  JournalState state;
  std::deque<SeqRange> published;
  std::size_t number = 1;
  while (next_line(line)) {
    ++number;
    // The last line may be cut short by a kill in the middle of a write: what it says never
    // happened (a chunk line is written before the publish, an acked line after the ack).
    const bool last = text.empty();
    const std::size_t space = line.find(' ');
    const std::string_view what = line.substr(0, space);
    const std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    const auto bad = [&] {
      return Error(ExitCode::bad_input,
                   fmt::format("{}:{}: not a journal line: \"{}\"", path, number, line.substr(0, 80)));
    };
    if (what == "board" && is_fleet_name(rest)) {
      state.board = rest;
    } else if (what == "run" && is_fleet_name(rest)) {
      state.run = rest;
    } else if (what == "chunk") {
      const std::size_t gap = rest.find(' ');
      const auto range =
          gap == std::string_view::npos ? std::nullopt : seq_range_of(rest.substr(0, gap), rest.substr(gap + 1));
      if (range) {
        published.push_back(*range);
      } else if (!last) {
        throw bad();
      }
    } else if (what == "acked") {
      if (const auto seq = parse_whole_number<std::uint64_t>(rest)) {
        state.acked_through = *seq;
      } else if (!last) {
        throw bad();
      }
    } else if (!(last || line.empty())) {
      throw bad();
    }
  }
  if (state.board.empty() || state.run.empty()) {
    throw Error(ExitCode::bad_input, fmt::format("{}: a trace-ship journal without its board and run", path));
  }
  for (const SeqRange& range : published) {
    if (state.acked_through && range.last <= *state.acked_through) continue;
    state.published_after_acked.push_back(range);
  }
  std::sort(state.published_after_acked.begin(), state.published_after_acked.end(),
            [](const SeqRange& x, const SeqRange& y) { return x.first < y.first; });
  return state;
}

ShipJournal::ShipJournal(std::string path, std::string board, std::string run)
    : path_(std::move(path)), board_(std::move(board)), run_(std::move(run)) {
  if (auto state = read_ship_journal(path_); state && state->run == run_ && state->board == board_) {
    acked_ = state->acked_through;
    published_ = std::move(state->published_after_acked);
  }
  rewrite();
}

void ShipJournal::append(const std::string& text) {
  write_all(fd_.get(), text, path_);
  size_ += text.size();
  if (size_ > rewrite_above) rewrite();
}

void ShipJournal::chunk_published(SeqRange range) {
  published_.push_back(range);
  append(fmt::format("chunk {} {}\n", range.first, range.last));
}

void ShipJournal::acked_through(std::uint64_t seq) {
  if (acked_ && seq <= *acked_) return;
  acked_ = seq;
  while (!published_.empty() && published_.front().last <= seq) published_.pop_front();
  append(fmt::format("acked {}\n", seq));
}

void ShipJournal::rewrite() {
  std::string text = fmt::format("{}\nboard {}\nrun {}\n", journal_magic, board_, run_);
  if (acked_) text += fmt::format("acked {}\n", *acked_);
  for (const SeqRange& range : published_) text += fmt::format("chunk {} {}\n", range.first, range.last);
  const std::string temporary = path_ + ".new";
  {
    FileDescriptor fd = open_journal(temporary, O_CREAT | O_TRUNC);
    write_all(fd.get(), text, temporary);
  }
  if (::rename(temporary.c_str(), path_.c_str()) != 0) throw_system_error(errno, "renaming " + temporary);
  fd_ = open_journal(path_, O_APPEND);
  size_ = text.size();
}

}  // namespace tp
