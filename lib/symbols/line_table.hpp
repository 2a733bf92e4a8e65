// Source lines of code addresses from an ELF's DWARF line tables, through elfutils' libdw
// (its Dwfl interface, the file reported offline so addresses are the file's own).
#pragma once

#include <cstdint>
#include <memory>
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
  [[nodiscard]] std::optional<SourceLine> at(std::uint64_t address) const;

 private:
  struct DwflEnd {
    void operator()(Dwfl* dwfl) const noexcept;
  };
  std::unique_ptr<Dwfl, DwflEnd> dwfl_;
  bool present_ = false;
};

}  // namespace tp::symbols
