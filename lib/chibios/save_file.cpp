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

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t newline = text.find('\n', start);
    std::string_view line = text.substr(start, newline == std::string_view::npos ? text.npos : newline - start);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    if (newline == std::string_view::npos) break;
    start = newline + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

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
  const std::vector<std::string> lines = split_lines(text);
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
    if (line.starts_with("Triggered at")) {
      trigger = parse_threads_timestamps({line}).trigger;
      continue;
    }
    if (!listed) {
      on_list(data, trigger);
      listed = true;
    }
    if (const auto record = parse_switch_line(line)) {
      on_record(*record);
    } else if (!line.empty() && !line.starts_with("ch>")) {
      throw ShellError(ShellError::Kind::malformed, fmt::format("threads_timestamps: unexpected line \"{}\"", line));
    }
  }
  if (last != "ch> " && last != "ch>") bad("the last line is not the prompt \"ch> \"");
  if (!listed) on_list(data, trigger);
}

}  // namespace tp::chibios
