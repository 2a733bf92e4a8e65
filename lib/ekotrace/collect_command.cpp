#include "ekotrace/collect_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "core/batched_writer.hpp"
#include "core/quantity.hpp"
#include "core/signals.hpp"
#include "core/text_file.hpp"
#include "ekotrace/collect_loop.hpp"
#include "ekotrace/target_setup.hpp"

namespace tp::ekotrace {

std::chrono::milliseconds parse_interval(const std::string& text) {
  const bool digits =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  return parse_duration(digits ? text + "ms" : text);  // bare numbers are milliseconds, as in the seed
}

ExitCode collect(const CollectOptions& o, const TargetOpener& open_target, const Logger& log) {
  std::optional<elf::ElfFile> elf;
  if (!o.elf.empty()) elf = elf::ElfFile::load(o.elf);
  const std::optional<elf::Endian> endian = o.big_endian      ? std::optional(elf::Endian::big)
                                            : o.little_endian ? std::optional(elf::Endian::little)
                                                              : std::nullopt;
  const TargetShape shape = resolve_shape(elf ? &*elf : nullptr, o.word_size, endian);
  Layout layout = Layout::standard(shape.word_size);
  if (!o.layout_file.empty()) layout = apply_layout_file(layout, read_text_file(o.layout_file), o.layout_file);
  if (o.print_layout) {
    BatchedWriter out(STDOUT_FILENO);  // a failed write is an error (exit 7), not a quiet 0
    out.write(layout.to_json() + "\n");
    out.flush();
    return ExitCode::ok;
  }
  if (o.tracers.empty()) throw Error(ExitCode::usage, "name at least one tracer (a symbol or 0x... address)");
  if (o.target.gdb_server.empty() == o.target.attach.empty()) {
    throw Error(ExitCode::usage, "give exactly one of --gdb-server HOST:PORT and --attach CHIP");
  }
  const LoopSettings loop{parse_interval(o.interval), o.polls,
                          o.duration.empty() ? std::chrono::milliseconds(0) : parse_duration(o.duration), o.stats};
  for (const auto& warning : shape.warnings) log.warn(warning);
  auto tracers = resolve_tracers(o.tracers, elf ? &*elf : nullptr);
  std::vector<std::string> labels;
  labels.reserve(tracers.size());
  for (const auto& t : tracers) labels.push_back(t.label);

  RowWriter writer(o.output, o.format == "ndjson" ? OutputFormat::ndjson : OutputFormat::csv, o.session_id, labels);
  stop_on_hangup_and_quit();  // the target is released on those too, not left halted
  const auto memory = open_target();
  log.verbose(fmt::format("{}; target {}-bit {} ({})", memory->description(), shape.word_size * 8,
                          shape.endian == elf::Endian::little ? "little endian" : "big endian", shape.origin));
  const std::size_t max_read = 16384;
  Collector collector(*memory, std::move(tracers), {layout, shape.endian, !o.no_clear, 512}, max_read);
  run_collect_loop(collector, *memory, writer, loop, log);
  return ExitCode::ok;
}

}  // namespace tp::ekotrace
