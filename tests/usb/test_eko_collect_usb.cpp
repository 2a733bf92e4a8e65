// eko-collect --attach against an emulated CMSIS-DAP probe (v2 bulk and v1 HID) under the
// real libusb (umockdev), whose model answers DAP_Transfer from a Cortex-M memory image
// (tests/usb/dap_target_model.hpp): every log entry the "firmware" wrote is collected
// once, in order; in_use is honoured; a bus fault is reported and cleared; the target is
// resumed and its debug state restored at exit; errors map to the documented exit codes.
//   test_eko_collect_usb EKO_COLLECT WORK_DIR
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "dap_target_model.hpp"
#include "test_support.hpp"

namespace {

using namespace usbemu;

std::string eko_collect;
std::string work_dir;

Run run_tool(const std::vector<std::string>& args) {
  return run_program(eko_collect, work_dir, args);
}

std::string hex(std::uint32_t address) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", address);
  return text;
}

constexpr std::uint32_t produced_report = 0x3FFFFFFE;

struct Collected {
  std::vector<LogItem> items;         // the tracer's entries, report-finish groups taken out
  std::vector<std::uint32_t> locals;  // every count of its own clock, in order (reports too)
  std::size_t reports = 0;
};

// The CSV rows of one tracer as log entries. The clear after each poll is ekotrace's end of a
// report: the clocks (own one incremented) and a "produced report" event, at the start of a
// segment; those groups are taken out, the firmware did not write them.
Collected collected(const std::string& csv, std::uint32_t tracer_id) {
  Collected out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  std::string group_segment;
  std::size_t group_start = 0;  // where the clock rows at the start of the current segment begin
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) f.push_back(cell);
    f.resize(9);
    if (std::stoul(f[4]) != tracer_id) continue;
    if (f[1] != group_segment) {
      group_segment = f[1];
      group_start = out.items.size();
    }
    if (f[5].empty()) {
      const auto id = static_cast<std::uint32_t>(std::stoul(f[7]));
      const auto count = static_cast<std::uint32_t>(std::stoul(f[8]));
      if (id == tracer_id) out.locals.push_back(count);
      out.items.push_back({true, id, count, false});
      continue;
    }
    const auto event = static_cast<std::uint32_t>(std::stoul(f[5]));
    if (event == produced_report) {
      out.items.resize(group_start);
      ++out.reports;
      continue;
    }
    group_start = out.items.size() + 1;
    out.items.push_back({false, event, f[6].empty() ? 0 : static_cast<std::uint32_t>(std::stoul(f[6])), !f[6].empty()});
  }
  return out;
}

bool counts_up_by_one(const std::vector<std::uint32_t>& locals) {
  for (std::size_t i = 1; i < locals.size(); ++i) {
    if (locals[i] != locals[i - 1] + 1) return false;
  }
  return true;
}

bool same(const std::vector<LogItem>& a, const std::vector<LogItem>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].clock != b[i].clock || a[i].id != b[i].id || a[i].value != b[i].value || a[i].payload != b[i].payload) {
      return false;
    }
  }
  return true;
}

void collects_everything(bool hid) {
  const std::string kind = hid ? "CMSIS-DAP v1 (HID)" : "CMSIS-DAP v2";
  Bus bus;
  DapTarget target({hid});
  bus.plug(target);
  const Run r = run_tool({"--attach", "stm32f4", "-w", "32", "-le", "-i", "5", "--polls", "20", "--stats", "-v",
                          hex(DapTarget::reference_1), hex(DapTarget::reference_2), hex(DapTarget::reference_busy)});
  check(r.exit_code == 0, kind + ": 20 polls, exit 0", r.err);
  const std::lock_guard lock(target.mutex);
  for (std::uint32_t id = 1; id <= 2; ++id) {
    const auto got = collected(r.out, id);
    check(same(got.items, target.written[id]) && got.items.size() > 100,
          kind + ": tracer " + std::to_string(id) + ": every entry the firmware wrote, once, in order" +
              (id == 1 ? " (its log crosses a 1 KiB TAR boundary)" : ""),
          std::to_string(got.items.size()) + " collected, " + std::to_string(target.written[id].size()) + " written");
    check(got.reports >= 10 && counts_up_by_one(got.locals),
          kind + ": tracer " + std::to_string(id) +
              ": each clear is ekotrace's report-finish, its local clock up by one each time",
          std::to_string(got.reports) + " reports, " + std::to_string(got.locals.size()) + " local clocks");
  }
  check(contains(r.err, "skipped: 20 in use") && collected(r.out, 3).items.empty(),
        kind + ": the tracer with in_use set is skipped every poll and counted", r.err);
  check(!target.halted && target.halts == 20, kind + ": halted once per poll, running at exit",
        std::to_string(target.halts) + " halts");
  check(!target.debug_enabled && target.disconnected, kind + ": halting debug off again (as found), DAP disconnected");
  check(contains(r.err, "DPIDR 0x2ba01477") && contains(r.err, "target 32-bit little endian"),
        kind + ": SWD connected, DPIDR read", r.err);
  if (hid) {
    check(target.short_reports == 0, "CMSIS-DAP v1: every command padded to the 64-byte report");
    const std::vector<std::string> expected{"detach 0", "claim 0", "release 0", "attach 0"};
    check(target.events == expected, "CMSIS-DAP v1: usbhid detached for the claim and bound again at exit");
  }
}

void bus_fault() {
  Bus bus;
  DapTarget target({});
  bus.plug(target);
  const Run r = run_tool({"--attach", "cortex-m", "-w", "32", "-le", "-i", "5", "--polls", "5", "--stats", "0x30000000",
                          hex(DapTarget::reference_1)});
  const std::lock_guard lock(target.mutex);
  check(r.exit_code == 0 && contains(r.err, "cannot read the tracer reference at 0x30000000") &&
            same(collected(r.out, 1).items, target.written[1]),
        "a tracer in unmapped memory: FAULT reported and counted, the other collected", r.err);
  check(target.faults >= 5 && target.aborts >= target.faults, "every FAULT's sticky error cleared with ABORT",
        std::to_string(target.faults) + " faults, " + std::to_string(target.aborts) + " aborts");
}

void errors() {
  {
    Bus bus;
    const Run r = run_tool({"--attach", "stm32f4", "-w", "32", "0x20000000", "--log-format", "json"});
    check(r.exit_code == 3 && contains(r.err, "PROBE_NOT_FOUND"), "no probe -> exit 3 PROBE_NOT_FOUND", r.err);
  }
  {
    Bus bus;
    DapTarget target({false, false});
    bus.plug(target);
    const Run r = run_tool({"--attach", "stm32f4", "-w", "32", "0x20000000"});
    check(r.exit_code == 8 && contains(r.err, "no target answered"), "no target on the wires -> exit 8", r.err);
  }
  const Run unknown = run_tool({"--attach", "z80", "-w", "32", "0x20000000"});
  check(unknown.exit_code == 2 && contains(unknown.err, "stm32f4"), "unknown chip -> usage error listing the chips",
        unknown.err);
  const Run multidrop = run_tool({"--attach", "rp2040", "-w", "32", "0x20000000"});
  check(multidrop.exit_code == 9 && contains(multidrop.err, "multi-drop"), "rp2040 -> exit 9 (multi-drop SWD)",
        multidrop.err);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s EKO_COLLECT WORK_DIR\n", argv[0]);
    return 2;
  }
  ensure_umockdev_preload(argv);
  eko_collect = argv[1];
  work_dir = argv[2];
  std::filesystem::create_directories(work_dir);
  try {
    collects_everything(false);
    collects_everything(true);
    bus_fault();
    errors();
  } catch (const std::exception& e) {  // e.g. output that is not CSV
    check(false, "the scenarios ran to the end", e.what());
  }
  return summary();
}
