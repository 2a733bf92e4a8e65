// Source lines of code addresses from an ELF's DWARF line tables, through elfutils' libdw
// (its Dwfl interface, the file reported offline so addresses are the file's own).
//
// libdw is not thread-safe per Dwfl: its line lookups fill caches inside the Dwfl (CU and
// line tables read on first use), so two threads looking up at once corrupt them. itm-decode
// formats records on two threads (the formatting thread, and the decoding thread when the
// queue is full), so every lookup here holds the table's lock.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

struct Dwfl;

namespace tp::symbols {

struct SourceLine {
  std::string file;  // as the line table names it (absolute when the compiler recorded so)
  std::uint32_t line = 0;
};

class LineTable {
 public:
  // A file without DWARF line tables gives a table that finds nothing (present() false).
  // Throws Error(bad_input) when libdw cannot read the file.
  explicit LineTable(const std::string& path);

  [[nodiscard]] bool present() const noexcept { return present_; }
  // Safe to call from several threads at once (one lookup at a time).
  [[nodiscard]] std::optional<SourceLine> at(std::uint64_t address) const;

 private:
  struct DwflEnd {
    void operator()(Dwfl* dwfl) const noexcept;
  };
  std::unique_ptr<Dwfl, DwflEnd> dwfl_;
  std::unique_ptr<std::mutex> lock_ = std::make_unique<std::mutex>();  // held around every libdw call
  bool present_ = false;
};

}  // namespace tp::symbols
