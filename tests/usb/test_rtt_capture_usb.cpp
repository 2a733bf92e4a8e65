// rtt-capture --attach against an emulated CMSIS-DAP probe (v2 bulk and v1 HID) under the
// real libusb (umockdev), whose target holds an RTT control block and writes lines to it
// while it runs (tests/usb/dap_target_model.hpp): every line the firmware stored arrives
// once, in order, raw and as Text records; the core is never halted (the MEM-AP reads it
// running); host data reaches the down buffer; each poll costs a few DAP_Transfer commands,
// the ring read in one; the probe is let go at exit.
//   test_rtt_capture_usb RTT_CAPTURE WORK_DIR SYSVIEW_RECORDING
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "dap_target_model.hpp"
#include "test_support.hpp"

namespace {

using namespace usbemu;

std::string rtt_capture;
std::string work_dir;

Run run_tool(const std::vector<std::string>& args) {
  return run_program(rtt_capture, work_dir, args);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line;
  return out;
}

// The messages of the Text records, each with the newline it stood for.
std::string messages(const std::string& ndjson) {
  std::string out;
  std::istringstream in(ndjson);
  const std::string key = R"("message":")";
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(key);
    if (at == std::string::npos) continue;
    const auto end = line.find('"', at + key.size());
    out += line.substr(at + key.size(), end - at - key.size()) + "\n";
  }
  return out;
}

void reads_while_running(bool hid) {
  const std::string kind = hid ? "CMSIS-DAP v1 (HID)" : "CMSIS-DAP v2";
  for (const bool ndjson : {false, true}) {
    Bus bus;
    DapTargetOptions options;
    options.hid = hid;
    options.rtt = true;
    options.rtt_lines = 600;
    DapTarget target(options);
    bus.plug(target);
    std::vector<std::string> args{"--attach",    "cortex-m", "--address",  "0x20001c00", "--send", "hello\n",
                                  "--idle-exit", "1s",       "--interval", "5ms",        "--stats"};
    if (ndjson) args.insert(args.end(), {"--format", "ndjson"});
    const Run r = run_tool(args);
    const std::string mode = kind + (ndjson ? ", Text records" : ", raw");
    check(r.exit_code == 0, mode + ": exit 0 at --idle-exit", r.err);
    const std::lock_guard lock(target.mutex);
    const std::string want = joined(target.rtt_written);
    const std::string got = ndjson ? messages(r.out) : r.out;
    const std::string counts =
        std::to_string(target.rtt_written.size()) + " stored, " + std::to_string(target.rtt_skipped) + " skipped";
    // All 600 lines went through the firmware: each stored (and then read) or skipped (NO_BLOCK_SKIP).
    check(target.rtt_written.size() + target.rtt_skipped == options.rtt_lines && !target.rtt_written.empty(),
          mode + ": the firmware wrote all its lines before --idle-exit ended the capture", counts);
    check(got == want, mode + ": every line the firmware stored, once, in order", counts);
    // A line it skipped was lost: said (the warning, and in NDJSON an Overflow record); none
    // skipped: nothing lost (every line written arrived).
    const bool said = contains(r.err, "buffer full at read") && contains(r.err, "NO_BLOCK_SKIP") &&
                      (!ndjson || contains(r.out, R"("kind":"Overflow")"));
    check(target.rtt_skipped == 0 || said, mode + ": the lines the firmware skipped (its ring full) are said lost",
          counts + "; " + r.err);
    check(target.halts == 0 && !target.halted, mode + ": the core was never halted");
    check(target.rtt_received == "hello\n", mode + ": --send reached the down buffer", target.rtt_received);
    check(target.disconnected, mode + ": the probe let go (DAP_Disconnect)");
    // Polls: the descriptor; with data, the ring with RdOff after it in the same command (one
    // more when the ring wraps or a v1 packet is too small); not per word.
    const auto polls_at = r.err.find(" polls (");
    const std::size_t polls =
        polls_at == std::string::npos ? 0 : std::stoul(r.err.substr(r.err.rfind(": ", polls_at) + 2));
    const std::size_t with_data = polls_at == std::string::npos ? 0 : std::stoul(r.err.substr(polls_at + 8));
    // For scripts/bench/rtt-capture.sh: what a poll costs on the wire (the model's firmware
    // writes per command, so the totals do not show it: the commands beyond each poll's
    // descriptor read, per poll with data, do; attaching and --send are in them too).
    const std::size_t limit = hid ? 15 : 127;  // words one DAP_Transfer read can carry in a packet
    const double beyond = with_data != 0 && target.transfers > polls
                              ? static_cast<double>(target.transfers - polls) / static_cast<double>(with_data)
                              : 0.0;
    std::printf(
        "info   %s: %zu polls (%zu with data), %zu DAP_Transfer commands: 1 per poll and %.2f more per poll with "
        "data; %zu words read (%.1f bytes per command; the packet holds %zu words)\n",
        mode.c_str(), polls, with_data, target.transfers, beyond, target.transfer_words,
        target.transfers != 0 ? 4.0 * static_cast<double>(target.transfer_words) / static_cast<double>(target.transfers)
                              : 0.0,
        limit);
    // The bound: a command per poll and per poll with data, the ring's words over what a packet
    // carries, and room for wraps (a fifth of the polls here) and attaching; RdOff in a command
    // of its own (a whole command more per poll with data) exceeds it.
    check(polls > 0 && with_data > 0 &&
              target.transfers <= polls + with_data + target.transfer_words / limit + with_data / 2 + 40,
          mode + ": a poll is the descriptor's command; with data, the ring's with RdOff (more when it wraps)",
          std::to_string(target.transfers) + " commands, " + std::to_string(polls) + " polls, " +
              std::to_string(with_data) + " with data; " + r.err);
  }
}

// A SystemView recording that SEGGER's own SEGGER_SYSVIEW.c made (the fuzz corpus keeps one,
// after two bytes of fuzzer options): through the probe byte for byte, raw, as
// `rtt-capture --channel 1 | sysview-decode` would take it.
void carries_a_systemview_stream(const std::string& corpus) {
  const std::string recording = read_file(corpus).substr(2);
  check(recording.size() > 1000, "the SystemView recording from SEGGER's code is there", corpus);
  Bus bus;
  DapTargetOptions options;
  options.rtt = true;
  options.rtt_stream.assign(recording.begin(), recording.end());
  DapTarget target(options);
  bus.plug(target);
  const Run r = run_tool({"--attach", "cortex-m", "--address", "0x20001c00", "--sysview", "off", "--idle-exit", "1s",
                          "--interval", "5ms"});
  check(r.exit_code == 0 && r.out == recording,
        "CMSIS-DAP v2: a SystemView recording arrives byte for byte (" + std::to_string(recording.size()) + " bytes)",
        std::to_string(r.out.size()) + " bytes; " + r.err);
}

void errors() {
  {
    Bus bus;
    const Run r = run_tool({"--attach", "cortex-m", "--list"});
    check(r.exit_code == 3, "no probe -> exit 3", r.err);
  }
  {
    Bus bus;
    DapTargetOptions options;
    options.rtt = true;
    DapTarget target(options);
    bus.plug(target);
    const Run r = run_tool({"--attach", "cortex-m", "--address", "0x20001000", "--wait", "300ms", "--list"});
    check(r.exit_code == 3 && contains(r.err, "no valid RTT control block"),
          "no block where --address says: exit 3 after --wait, what is wrong said", r.err);
    const std::lock_guard lock(target.mutex);
    check(target.halts == 0 && target.disconnected, "the core never halted, the probe let go");
  }
  {
    Bus bus;
    DapTargetOptions options;
    options.rtt = true;
    DapTarget target(options);
    bus.plug(target);
    const Run r = run_tool({"--attach", "cortex-m", "--scan", "0x20000000:8K", "--list"});
    check(r.exit_code == 0 && contains(r.out, "RTT control block at 0x20001c00") && contains(r.out, "\"Terminal\""),
          "a scan of RAM finds the block; --list names the channels", r.out + r.err);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s RTT_CAPTURE WORK_DIR SYSVIEW_RECORDING\n", argv[0]);
    return 2;
  }
  ensure_umockdev_preload(argv);
  rtt_capture = argv[1];
  work_dir = argv[2];
  std::filesystem::create_directories(work_dir);
  try {
    reads_while_running(false);
    reads_while_running(true);
    carries_a_systemview_stream(argv[3]);
    errors();
  } catch (const std::exception& e) {
    check(false, "the scenarios ran to the end", e.what());
  }
  return summary();
}
