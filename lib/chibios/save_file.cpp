#include "chibios/save_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "core/error.hpp"

namespace tp::chibios {

std::string format_save(const SavedData& data) {
  std::string out = fmt::format("Saved position\n{}\n{}\n{}\n{}\n", data.xmin, data.xmax, data.ymin, data.ymax);
  out += "threads_list\n";
  for (const std::string& line : data.list_lines) out += line + "\n";
  out += "ch> \nthreads_timestamps\n";
  for (const std::string& line : data.timestamp_lines) out += line + "\n";
  out += "ch> ";
  return out;
}

namespace {

[[noreturn]] void bad(const std::string& why) {
  throw Error(ExitCode::bad_input, fmt::format("not a saved timeline: {}", why));
}

double number(const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) bad(fmt::format("\"{}\" is not a number", text));
  return value;
}

}  // namespace

SavedData parse_save(std::string_view text) {
  std::vector<std::string> lines = split_lines(text);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  SavedData data;
  const auto find = [&](std::string_view what, std::size_t from) {
    const auto found = std::find(lines.begin() + static_cast<std::ptrdiff_t>(from), lines.end(), what);
    return static_cast<std::size_t>(found - lines.begin());
  };
  const std::size_t position = find("Saved position", 0);
  if (position + 4 >= lines.size()) bad("no \"Saved position\" and view");
  data.xmin = number(lines[position + 1]);
  data.xmax = number(lines[position + 2]);
  data.ymin = number(lines[position + 3]);
  data.ymax = number(lines[position + 4]);
  const std::size_t list = find("threads_list", position + 5);
  const std::size_t stamps = find("threads_timestamps", list);
  if (list >= lines.size()) bad("no threads_list reply");
  if (stamps >= lines.size()) bad("no threads_timestamps reply");
  if (lines.back() != "ch> " && lines.back() != "ch>") bad("the last line is not the prompt \"ch> \"");
  for (std::size_t i = list + 1; i < stamps; ++i) {
    if (lines[i].starts_with("ch>")) break;
    data.list_lines.push_back(lines[i]);
  }
  for (std::size_t i = stamps + 1; i + 1 < lines.size(); ++i) data.timestamp_lines.push_back(lines[i]);
  return data;
}

}  // namespace tp::chibios

namespace tp::chibios {

void stream_save(std::istream& in, const std::function<void(const SavedData&, std::optional<std::uint32_t>)>& on_list,
                 const std::function<void(const SwitchRecord&)>& on_record) {
  std::string head;
  std::string line;
  while (std::getline(in, line)) {
    head += line;
    head += '\n';
    if (line == "threads_timestamps" || line == "threads_timestamps\r") break;
  }
  if (!in) bad("no threads_timestamps reply");
  // The head is a save file whose timestamps reply is still to come: close it to parse it.
  SavedData data = parse_save(head + "ch> ");
  std::optional<std::uint32_t> trigger;
  bool listed = false;
  std::string last;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    last = line;
    if (line.starts_with("ch>")) continue;
    if (!line.starts_with("From")) check_shell_answer("threads_timestamps", {line});  // e.g. "disabled"
    const auto record = parse_timestamps_line(line, trigger);
    if (!record) continue;
    if (!listed) {
      on_list(data, trigger);
      listed = true;
    }
    on_record(*record);
  }
  if (last != "ch> " && last != "ch>") bad("the last line is not the prompt \"ch> \"");
  if (!listed) on_list(data, trigger);
}

}  // namespace tp::chibios
