// The reference tool's .txt save format (docs/design.md "Peers and their protocols": ChibiOS threads_utilities): "Saved
// position", the view (xmin, xmax, ymin, ymax, one per line), then the threads_list reply (echo line first, "ch> "
// last) and the threads_timestamps reply the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chibios/shell_output.hpp"

namespace tp::chibios {

struct SavedData {
  double xmin = 0;
  double xmax = 1;
  double ymin = 0;
  double ymax = 1;
  std::vector<std::string> list_lines;       // the reply, without echo and prompt
  std::vector<std::string> timestamp_lines;  // the same
};

std::string format_save(const SavedData& data);
// Throws tp::Error(bad_input) naming what is missing.
SavedData parse_save(std::string_view text);

// Reads a save file without holding its switch log: on_list gets the view and the
// threads_list reply (timestamp_lines empty) and the trigger, then on_record each record.
// For logs of any length in constant memory. Throws tp::Error(bad_input) or ShellError.
void stream_save(std::istream& in, const std::function<void(const SavedData&, std::optional<std::uint32_t>)>& on_list,
                 const std::function<void(const SwitchRecord&)>& on_record);

}  // namespace tp::chibios
