// eko-collect: poll ekotrace tracer logs from target RAM through a GDB server or a
// CMSIS-DAP probe, and write them as CSV (ekotrace's columns) or NDJSON records.
#include <unistd.h>

#include "cli/cli.hpp"
#include "cli/target_options.hpp"
#include "core/batched_writer.hpp"
#include "dap/dap_memory.hpp"
#include "ekotrace/collect_command.hpp"
#include "targets/target_opener.hpp"

namespace {

using tp::ekotrace::CollectOptions;

// The seed spells the endianness flags -le and -be; CLI11 takes one-letter short options only.
std::vector<std::string> seed_spellings(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (auto& a : args) {
    if (a == "-le") a = "--little-endian";
    if (a == "-be") a = "--big-endian";
  }
  return args;
}

tp::ExitCode run(const CollectOptions& o, const tp::Logger& log) {
  if (o.list_chips) {
    tp::BatchedWriter out(STDOUT_FILENO);  // a failed write is exit 7, not a quiet 0
    out.write(tp::dap::known_chips());
    out.flush();
    return tp::ExitCode::ok;
  }
  return tp::ekotrace::collect(o, tp::target_opener(o.target), log);
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
  CollectOptions o;
  tp::CommonOptions common;
  app.add_option("tracers", o.tracers, "Tracer references: symbols (with --elf) or 0x addresses")->type_name("TRACER");
  app.add_option("-s,--session-id", o.session_id,
                 "Session id written in every row (0 to 4294967295, a u32 in ekotrace)")
      ->default_val(o.session_id);
  app.add_option("-w,--word-size", o.word_size, "Target word size in bits: 32 or 64 (default: from --elf)")
      ->check(CLI::IsMember({32U, 64U}));
  auto* le = app.add_flag("--little-endian", o.little_endian, "Little-endian target (also -le)");
  app.add_flag("--big-endian", o.big_endian, "Big-endian target (also -be)")->excludes(le);
  app.add_option("-e,--elf", o.elf, "ELF file: symbols, word size and endianness")->type_name("FILE");
  tp::add_target_options(app, o.target,
                         {.gdb_server_names = "-g,--gdb-server,--gdb-host",
                          .gdb_server = "GDB server to use (HOST:PORT)",
                          .attach = "Attach through a CMSIS-DAP probe to CHIP (--list-chips)"});
  app.add_option("-i,--interval", o.interval, "Time between polls (ms, or 500ms, 2s, 1m)")->default_val(o.interval);
  app.add_option("-o,--output-file,--output", o.output, "Append to FILE ('-' = stdout)")
      ->type_name("FILE")
      ->default_val(o.output);
  app.add_option("--format", o.format, "csv or ndjson")->check(CLI::IsMember({"csv", "ndjson"}))->default_val(o.format);
  app.add_flag("--no-clear", o.no_clear, "Read only: leave the target's logs as they are");
  app.add_option("--layout", o.layout_file, "JSON file overriding the structure offsets")->type_name("FILE");
  app.add_flag("--print-layout", o.print_layout, "Print the layout in use as JSON and exit");
  app.add_option("--polls", o.polls, "Stop after N polls (0 = until stopped)")->default_val(o.polls);
  app.add_option("--duration", o.duration, "Stop after this long (e.g. 10s; default: until stopped)");
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
