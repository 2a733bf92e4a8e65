// eko-collect: poll ekotrace tracer logs from target RAM through a GDB server or a
// CMSIS-DAP probe, and write them as CSV (ekotrace's columns) or NDJSON records.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/cli.hpp"
#include "core/quantity.hpp"
#include "core/signals.hpp"
#include "core/text_file.hpp"
#include "dap/dap_memory.hpp"
#include "ekotrace/collect_loop.hpp"
#include "ekotrace/target_setup.hpp"
#include "gdb/rsp_client.hpp"

namespace {

using namespace tp::ekotrace;

struct Options {
  std::vector<std::string> tracers;
  std::uint64_t session_id = 0;
  std::optional<unsigned> word_size;
  bool little_endian = false;
  bool big_endian = false;
  std::string elf;
  std::string attach;
  std::string gdb_server;
  std::string interval = "500";
  std::string output = "-";
  std::string format = "csv";
  std::string layout_file;
  bool print_layout = false;
  bool no_clear = false;
  std::uint64_t polls = 0;
  std::string duration;
  double timeout_s = 2;
  std::string probe = "cmsis-dap";
  std::string serial_number;
  std::uint32_t swd_hz = 4'000'000;
  bool stats = false;
  bool list_chips = false;
};

// The seed spells the endianness flags -le and -be; CLI11 takes one-letter short options only.
std::vector<std::string> seed_spellings(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (auto& a : args) {
    if (a == "-le") a = "--little-endian";
    if (a == "-be") a = "--big-endian";
  }
  return args;
}

std::chrono::milliseconds parse_interval(const std::string& text) {
  const bool digits =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  return tp::parse_duration(digits ? text + "ms" : text);  // bare numbers are milliseconds, as in the seed
}

std::unique_ptr<tp::target::TargetMemory> open_target(const Options& o, std::optional<tp::usb::Context>& usb) {
  const int timeout_ms = static_cast<int>(o.timeout_s * 1000);
  if (!o.gdb_server.empty()) {
    return tp::gdb::RspClient::connect(tp::net::parse_tcp_endpoint(o.gdb_server, "--gdb-server"), timeout_ms);
  }
  usb.emplace();
  return tp::dap::attach_cmsis_dap(
      *usb, {o.attach, tp::swo::parse_probe_selector(o.probe, o.serial_number), o.swd_hz, timeout_ms});
}

tp::ExitCode run(const Options& o, const tp::Logger& log) {
  if (o.list_chips) {
    fmt::print("{}", tp::dap::known_chips());
    return tp::ExitCode::ok;
  }
  std::optional<tp::elf::ElfFile> elf;
  if (!o.elf.empty()) elf = tp::elf::ElfFile::load(o.elf);
  const std::optional<tp::elf::Endian> endian = o.big_endian      ? std::optional(tp::elf::Endian::big)
                                                : o.little_endian ? std::optional(tp::elf::Endian::little)
                                                                  : std::nullopt;
  const TargetShape shape = resolve_shape(elf ? &*elf : nullptr, o.word_size, endian);
  Layout layout = Layout::standard(shape.word_size);
  if (!o.layout_file.empty()) layout = apply_layout_file(layout, tp::read_text_file(o.layout_file), o.layout_file);
  if (o.print_layout) {
    fmt::print("{}\n", layout.to_json());
    return tp::ExitCode::ok;
  }
  if (o.tracers.empty()) throw tp::Error(tp::ExitCode::usage, "name at least one tracer (a symbol or 0x... address)");
  if (o.gdb_server.empty() == o.attach.empty()) {
    throw tp::Error(tp::ExitCode::usage, "give exactly one of --gdb-server HOST:PORT and --attach CHIP");
  }
  const LoopSettings loop{parse_interval(o.interval), o.polls,
                          o.duration.empty() ? std::chrono::milliseconds(0) : tp::parse_duration(o.duration), o.stats};
  for (const auto& warning : shape.warnings) log.warn(warning);
  auto tracers = resolve_tracers(o.tracers, elf ? &*elf : nullptr);
  std::vector<std::string> labels;
  labels.reserve(tracers.size());
  for (const auto& t : tracers) labels.push_back(t.label);

  RowWriter writer(o.output, o.format == "ndjson" ? OutputFormat::ndjson : OutputFormat::csv, o.session_id, labels);
  std::optional<tp::usb::Context> usb;
  const auto memory = open_target(o, usb);
  log.verbose(fmt::format("{}; target {}-bit {} ({})", memory->description(), shape.word_size * 8,
                          shape.endian == tp::elf::Endian::little ? "little endian" : "big endian", shape.origin));
  const std::size_t max_read = 16384;
  Collector collector(*memory, std::move(tracers), {layout, shape.endian, !o.no_clear, 512}, max_read);
  run_collect_loop(collector, *memory, writer, loop, log);
  return tp::ExitCode::ok;
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "Poll ekotrace tracer logs from a target's RAM through a GDB server (OpenOCD, QEMU,\n"
      "pyOCD, J-Link) or a CMSIS-DAP probe, on an interval: halt, read every tracer (skipping\n"
      "those whose in_use flag is set), clear what was read, resume. Writes CSV with\n"
      "ekotrace's columns (header only when the file is new; appended and flushed every\n"
      "poll) or NDJSON records for trace-serve. The target is resumed on every way out.\n\n"
      "Tracers: 0x... is the address of a tracer reference; anything else is a symbol of --elf.\n"
      "Word size and endianness come from --elf, else the flags, else 32-bit little endian.\n\n"
      "Examples:\n"
      "  eko-collect --elf fw.elf --gdb-server localhost:3333 -i 500 -o out.csv TRACER_1 TRACER_2\n"
      "  eko-collect -s 7 -w 32 -le --attach stm32f4 -o out.csv 0x20001000\n"
      "  eko-collect -e fw.elf -g :3333 --format ndjson TRACER_1 | trace-serve",
      "eko-collect"};
  Options o;
  tp::CommonOptions common;
  app.add_option("tracers", o.tracers, "Tracer references: symbols (with --elf) or 0x addresses")->type_name("TRACER");
  app.add_option("-s,--session-id", o.session_id, "Session id written in every row")->default_val(0);
  app.add_option("-w,--word-size", o.word_size, "Target word size in bits: 32 or 64 (default: from --elf)")
      ->check(CLI::IsMember({32U, 64U}));
  auto* le = app.add_flag("--little-endian", o.little_endian, "Little-endian target (also -le)");
  app.add_flag("--big-endian", o.big_endian, "Big-endian target (also -be)")->excludes(le);
  app.add_option("-e,--elf", o.elf, "ELF file: symbols, word size and endianness")->type_name("FILE");
  app.add_option("-a,--attach", o.attach, "Attach through a CMSIS-DAP probe to CHIP (--list-chips)")->type_name("CHIP");
  app.add_option("-g,--gdb-server,--gdb-host", o.gdb_server, "GDB server to use (HOST:PORT)")->type_name("HOST:PORT");
  app.add_option("-i,--interval", o.interval, "Time between polls (ms, or 500ms, 2s, 1m)")->default_val(o.interval);
  app.add_option("-o,--output-file,--output", o.output, "Append to FILE ('-' = stdout)")
      ->type_name("FILE")
      ->default_val(o.output);
  app.add_option("--format", o.format, "csv or ndjson")->check(CLI::IsMember({"csv", "ndjson"}))->default_val("csv");
  app.add_flag("--no-clear", o.no_clear, "Read only: leave the target's logs as they are");
  app.add_option("--layout", o.layout_file, "JSON file overriding the structure offsets")->type_name("FILE");
  app.add_flag("--print-layout", o.print_layout, "Print the layout in use as JSON and exit");
  app.add_option("--polls", o.polls, "Stop after N polls (0 = until stopped)")->default_val(0);
  app.add_option("--duration", o.duration, "Stop after this long (e.g. 10s; default: until stopped)");
  app.add_option("--timeout", o.timeout_s, "Seconds to wait for the server or probe")
      ->default_val(o.timeout_s)
      ->check(CLI::Range(0.05, 600.0));
  app.add_option("--probe", o.probe, "With --attach: cmsis-dap or VID:PID")->default_val(o.probe);
  app.add_option("--serial-number", o.serial_number, "With --attach: the probe's serial number");
  app.add_option("--swd-clock", o.swd_hz, "With --attach: SWD clock in Hz")->default_val(o.swd_hz);
  app.add_flag("--list-chips", o.list_chips, "List the chips --attach knows and exit");
  app.add_flag("--stats", o.stats, "Print round trips and time per poll and per-tracer counts at the end");
  tp::add_common_options(app, common, {false, false});
  std::vector<std::string> args = seed_spellings(argc, argv);
  std::vector<char*> pointers{argv[0]};
  for (auto& a : args) pointers.push_back(a.data());
  return tp::run_tool(app, common, static_cast<int>(pointers.size()), pointers.data(),
                      [&](const tp::Logger& log) { return run(o, log); });
}

}  // namespace

int main(int argc, char** argv) {
  return tp::guard_main("eko-collect", [&] { return run_main(argc, argv); });
}
