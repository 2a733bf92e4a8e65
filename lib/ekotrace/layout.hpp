// Where eko-collect finds the fields of an ekotrace tracer in target memory.
//
// ekotrace (auxoncorp, mid-2020) as #[repr(C)], per the collector design
// (docs/design.md "Peers and their protocols"): a symbol such as TRACER_1 holds a pointer to the
// tracer handle `Ekotrace { history: *mut DynamicHistory }`, whose one field points to:
//
//   DynamicHistory            32-bit  64-bit
//     tracer_id    u32           0       0
//     event_count  u32           4       4
//     chunked_report_state       8       8   {bool, u16 group id, u16 chunks}
//     clocks       FixedSliceVec 16      16  {ptr, capacity, len}: words at +0, +W, +2W
//     compact_log  FixedSliceVec 28      40
//     in_use       u8            40      64  (proposed by the design, never upstream:
//                                             appended so every upstream offset stays)
//
// A JSON layout file overrides any of these (see man eko-collect, "LAYOUT FILE").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tp::ekotrace {

struct Layout {
  unsigned word_size = 4;            // bytes in a pointer / usize
  std::uint64_t handle_history = 0;  // offset of the history pointer in the handle
  std::uint64_t tracer_id = 0;
  std::uint64_t event_count = 4;             // u32, reset by the clear after a report
  std::uint64_t clocks = 16;                 // FixedSliceVec<LogicalClock>
  std::uint64_t compact_log = 28;            // FixedSliceVec<u32>
  std::optional<std::uint64_t> in_use = 40;  // none: the firmware has no lock flag
  std::uint64_t max_log_items = 1U << 20U;   // larger capacities are taken as corruption
  // Clock capacities beyond this are taken as corruption. None (the default): derived from
  // the history itself, as ekotrace sizes it (plausible_max_clocks); a layout file may fix it.
  std::optional<std::uint64_t> max_clocks;

  [[nodiscard]] static Layout standard(unsigned word_size);
  // Bytes of the history to read: up to the end of the last field.
  [[nodiscard]] std::uint64_t history_size() const noexcept;
  [[nodiscard]] std::string to_json() const;
};

// ekotrace gives a tracer of R bytes max(2, R/64) clocks (history.rs) and the rest, past its
// header, to the log: so clocks * 56 <= header + log_capacity * 4 (plus alignment). A clock
// capacity far beyond what the log's capacity implies is not ekotrace's. A region over 16 KiB
// holds more than 256 clocks, and passes.
[[nodiscard]] std::uint64_t plausible_max_clocks(const Layout& layout, std::uint64_t log_capacity) noexcept;

// Applies a layout file's fields over `base`. Throws Error(bad_input) naming the file
// and the field for malformed JSON, unknown keys or offsets that do not fit.
Layout apply_layout_file(const Layout& base, std::string_view json, std::string_view file_name);

}  // namespace tp::ekotrace
