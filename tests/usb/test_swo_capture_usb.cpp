// The real swo-capture binary against emulated probes under the real libusb (umockdev):
// every byte captured must be a byte the probe model delivered, once, in order; gaps and
// lost sync must be reported; errors must map to the documented exit codes and codes.
//   test_swo_capture_usb SWO_CAPTURE_BINARY WORK_DIR
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <umockdev.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "probe_models.hpp"
#include "swo/simulator.hpp"
#include "test_support.hpp"

namespace {

using namespace usbemu;
using Clock = std::chrono::steady_clock;

std::string swo_capture;
std::string work_dir;

// A realistic ITM stream from the library's simulated target.
Bytes itm_stream(std::size_t size, std::uint32_t seed) {
  tp::swo::SimulatedTarget target({seed, 64'000'000});
  Bytes bytes;
  while (bytes.size() < size) target.next(bytes, nullptr);
  bytes.resize(size);
  return bytes;
}

bool same_bytes(const std::string& got, const Bytes& want) {
  return got.size() == want.size() && std::equal(want.begin(), want.end(), got.begin(), [](std::uint8_t w, char g) {
           return w == static_cast<std::uint8_t>(g);
         });
}

std::string first_difference(const std::string& got, const Bytes& want) {
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && static_cast<std::uint8_t>(got[i]) == want[i]) ++i;
  return "got " + std::to_string(got.size()) + " bytes, want " + std::to_string(want.size()) +
         ", first difference at " + std::to_string(i);
}

Run run_tool(const std::vector<std::string>& args, const std::function<void(pid_t, std::size_t)>& watch = {}) {
  return run_program(swo_capture, work_dir, args, watch);
}

// Stops the tool with SIGTERM once the model has nothing more to give (plus a moment).
std::function<void(pid_t, std::size_t)> stop_when(const std::function<bool()>& model_done) {
  auto since = std::make_shared<std::optional<Clock::time_point>>();
  return [model_done, since](pid_t pid, std::size_t) {
    if (!*since && model_done()) *since = Clock::now();
    if (*since && Clock::now() - **since > std::chrono::milliseconds(400)) {
      kill(pid, SIGTERM);
      since->reset();
      *since = Clock::now() + std::chrono::hours(1);
    }
  };
}

void lpclink2_capture_is_exact() {
  Bus bus;
  const Bytes swo = itm_stream(60'000, 1);
  LpcLink2 probe({swo, 300});
  bus.plug(probe);
  const Run r = run_tool({"--probe", "lpclink2", "--baud", "2000000", "--max-bytes", std::to_string(swo.size()), "-v"});
  check(r.exit_code == 0, "lpclink2: capture exits 0", r.err);
  check(same_bytes(r.out, swo), "lpclink2: 04 runs then the 82 of each epoch give every byte once",
        first_difference(r.out, swo));
  check(contains(r.err, "lost 0 bytes in 0 gaps, 0 duplicate bytes dropped"), "lpclink2: no loss reported", r.err);
  const std::lock_guard lock(probe.mutex);
  check(probe.rate == 2'000'000, "lpclink2: rate set exactly", std::to_string(probe.rate));
  const std::vector<std::string> expected{"detach 4", "claim 4", "release 4", "attach 4"};
  check(probe.events == expected, "lpclink2: usbhid detached for the claim and bound again at exit");
}

void lpclink2_epoch_wraps() {
  Bus bus;
  const Bytes swo = itm_stream(20'000, 2);
  LpcLink2 probe({swo, 700, 96'000'000, 250});
  bus.plug(probe);
  const Run r = run_tool({"--probe", "lpclink2", "--max-bytes", std::to_string(swo.size()), "-v"});
  check(r.exit_code == 0 && same_bytes(r.out, swo), "lpclink2: epoch 255 wraps to 0 without loss",
        first_difference(r.out, swo) + " " + r.err);
  check(!contains(r.err, "lost sync"), "lpclink2: the wrap is not lost sync", r.err);
}

void lpclink2_lost_sync() {
  Bus bus;
  const Bytes swo = itm_stream(30'000, 3);
  LpcLink2Options options{swo, 400};
  options.skip_epochs_after = 3;
  LpcLink2 probe(options);
  bus.plug(probe);
  const Run r = run_tool({"--probe", "lpclink2", "-v"}, stop_when([&] {
                           const std::lock_guard lock(probe.mutex);
                           return probe.delivered.size() + probe.lost == swo.size();
                         }));
  const std::lock_guard lock(probe.mutex);
  check(r.exit_code == 143, "lpclink2: SIGTERM ends the capture with 143", std::to_string(r.exit_code) + r.err);
  check(probe.lost > 0 && same_bytes(r.out, probe.delivered),
        "lpclink2: an 82 after lost sync is taken whole, nothing repeated", first_difference(r.out, probe.delivered));
  check(contains(r.err, "lost sync 1 times"), "lpclink2: lost sync counted and reported", r.err);
}

void lpclink2_missed_flush() {
  Bus bus;
  const Bytes swo = itm_stream(30'000, 4);
  LpcLink2Options options{swo, 250};
  options.lose_flush_of = {2, 5};
  LpcLink2 probe(options);
  bus.plug(probe);
  const Run r = run_tool({"--probe", "lpclink2", "-v"}, stop_when([&] {
                           const std::lock_guard lock(probe.mutex);
                           return probe.delivered.size() + probe.lost == swo.size();
                         }));
  const std::lock_guard lock(probe.mutex);
  check(same_bytes(r.out, probe.delivered), "lpclink2: missed flushes: every delivered byte once",
        first_difference(r.out, probe.delivered));
  check(probe.lost > 0 && contains(r.err, "lost " + std::to_string(probe.lost) + " bytes in 2 gaps"),
        "lpclink2: the bytes of the missed flushes are counted exactly", std::to_string(probe.lost) + " " + r.err);
}

void lpclink2_rates() {
  {
    Bus bus;
    LpcLink2 probe({itm_stream(3000, 5), 300});
    bus.plug(probe);
    const Run r = run_tool({"--probe", "lpclink2", "--baud", "5000000", "--max-bytes", "3000", "-v"});
    const std::lock_guard lock(probe.mutex);
    check(r.exit_code == 0 && probe.rate == 96'000'000 / 19,
          "lpclink2: 5 MHz negotiated to 5.05 MHz on the second attempt (4.8 MHz is 4 % off)",
          std::to_string(probe.rate) + " " + r.err);
    check(contains(r.err, "2 attempt(s)"), "lpclink2: the negotiation is reported", r.err);
  }
  {
    Bus bus;
    LpcLink2 probe({itm_stream(3000, 5), 300});
    bus.plug(probe);
    const Run r = run_tool({"--probe", "lpclink2", "--baud", "11000000", "--log-format", "json"});
    check(r.exit_code == 9 && contains(r.err, "\"code\":\"BAUD_RATE_ERROR\""),
          "lpclink2: 11 MHz unreachable within 2 % -> BAUD_RATE_ERROR, exit 9", r.err);
    const Run too_fast = run_tool({"--probe", "lpclink2", "--baud", "20000000"});
    check(too_fast.exit_code == 9 && contains(too_fast.err, "maximum is 12000000"),
          "lpclink2: above the probe's maximum -> exit 9", too_fast.err);
  }
  {
    Bus bus;
    LpcLink2 probe({itm_stream(3000, 5), 300});
    bus.plug(probe);
    const Run r = run_tool({"--probe", "lpclink2", "--baud", "11000000", "--allow-approx", "--max-bytes", "3000"});
    const std::lock_guard lock(probe.mutex);
    check(r.exit_code == 0 && probe.rate == 96'000'000 / 9, "lpclink2: --allow-approx takes the closest rate",
          std::to_string(probe.rate) + " " + r.err);
  }
}

void lpclink2_unplugged() {
  Bus bus;
  const Bytes swo = itm_stream(400'000, 6);
  LpcLink2 probe({swo, 300});
  auto& emulator = bus.plug(probe);
  bool unplugged = false;
  const Run r = run_tool({"--probe", "lpclink2", "--log-format", "json"}, [&](pid_t, std::size_t size) {
    if (!unplugged && size >= 20'000) {
      bus.unplug(emulator, probe);
      unplugged = true;
    }
  });
  const std::lock_guard lock(probe.mutex);
  const bool prefix = r.out.size() <= probe.delivered.size() &&
                      std::equal(r.out.begin(), r.out.end(), probe.delivered.begin(),
                                 [](char g, std::uint8_t w) { return static_cast<std::uint8_t>(g) == w; });
  check(unplugged && r.exit_code == 7 && contains(r.err, "unplugged") && contains(r.err, "PROBE_NOT_FOUND"),
        "lpclink2: unplugged mid-capture -> clear error, exit 7", r.err);
  check(prefix && r.out.size() >= 20'000 && probe.delivered.size() - r.out.size() <= 1022,
        "lpclink2: the bytes captured before the unplug are kept",
        std::to_string(r.out.size()) + " of " + std::to_string(probe.delivered.size()));
}

void lpclink2_replugged() {
  Bus bus;
  const Bytes before = itm_stream(200'000, 19);
  LpcLink2 first({before, 300});
  LpcLink2Options again_options{itm_stream(20'000, 20), 300};
  again_options.address = 6;
  LpcLink2 again(again_options);
  auto& emulator = bus.plug(first);
  const Run listed = run_tool({"--list"});
  check(contains(listed.out, "LPC2EMU1"), "lpclink2 --reconnect: the probe is there before it is unplugged",
        listed.err);
  bool unplugged = false;
  bool replugged = false;
  const auto replug_done = [&] {
    const std::lock_guard lock(again.mutex);
    return again.delivered.size() == again_options.swo.size();
  };
  const auto stop = stop_when(replug_done);
  const Run r = run_tool({"--probe", "lpclink2", "--reconnect", "-v"}, [&](pid_t pid, std::size_t size) {
    if (!unplugged && size >= 10'000) {
      bus.unplug(emulator, first);
      unplugged = true;
    } else if (unplugged && !replugged) {
      // pace: the probe stays away 0.7 s (the scenario: swo-capture finds no probe a while and keeps looking)
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      bus.plug(again);  // the same kind of probe comes back on another address
      replugged = true;
    } else if (replugged) {
      stop(pid, size);
    }
  });
  const std::lock_guard lock_first(first.mutex);
  const std::lock_guard lock_again(again.mutex);
  const std::size_t kept = r.out.size() - std::min(r.out.size(), again.delivered.size());
  const bool first_part = kept >= 10'000 && std::equal(r.out.begin(), r.out.begin() + static_cast<std::ptrdiff_t>(kept),
                                                       first.delivered.begin(), [](char g, std::uint8_t w) {
                                                         return static_cast<std::uint8_t>(g) == w;
                                                       });
  const bool second_part =
      std::equal(again.delivered.begin(), again.delivered.end(), r.out.begin() + static_cast<std::ptrdiff_t>(kept),
                 [](std::uint8_t w, char g) { return static_cast<std::uint8_t>(g) == w; });
  check(r.exit_code == 143 && contains(r.err, "reconnecting every 500 ms") && contains(r.err, "reconnected"),
        "lpclink2 --reconnect: unplugged, waits, and captures again when a probe is back", r.err);
  check(first_part && second_part && again.delivered.size() == again_options.swo.size(),
        "lpclink2 --reconnect: the bytes before and after the gap, in order",
        std::to_string(kept) + " + " + std::to_string(again.delivered.size()) + " of " + std::to_string(r.out.size()));
  check(contains(r.err, "1 reconnects"), "lpclink2 --reconnect: the reconnect is counted", r.err);
}

void lpclink2_errors() {
  {
    Bus bus;
    LpcLink2 probe({itm_stream(1000, 7), 300});
    probe.claimed_elsewhere = {4};
    bus.plug(probe);
    const Run r = run_tool({"--probe", "lpclink2", "--log-format", "json"});
    check(r.exit_code == 5 && contains(r.err, "PROBE_IN_USE"), "lpclink2: interface busy -> PROBE_IN_USE, exit 5",
          r.err);
  }
  {
    Bus bus;
    StLink other({itm_stream(1000, 7)});
    bus.plug(other);
    const Run r = run_tool({"--probe", "lpclink2", "--log-format", "json"});
    check(r.exit_code == 3 && contains(r.err, "PROBE_NOT_FOUND"), "lpclink2: no probe -> PROBE_NOT_FOUND, exit 3",
          r.err);
  }
  {
    Bus bus;
    LpcLink2Options options{itm_stream(100'000, 8), 300};
    options.answer_polls = 5;
    LpcLink2 probe(options);
    bus.plug(probe);
    const Run r = run_tool({"--probe", "lpclink2", "--timeout", "300", "--log-format", "json"});
    check(r.exit_code == 8 && contains(r.err, "did not answer") && contains(r.err, "TARGET_NOT_RESPONDING"),
          "lpclink2: an unresponsive probe -> timeout, exit 8", r.err);
    check(r.out.size() == 1500, "lpclink2: what came before it hung is kept", std::to_string(r.out.size()));
  }
}

void list_and_select() {
  Bus bus;
  LpcLink2Options first{itm_stream(5000, 9), 500};
  LpcLink2Options second{itm_stream(5000, 10), 500};
  second.serial = "LPC2EMU2";
  second.address = 5;
  LpcLink2 a(first);
  LpcLink2 b(second);
  CmsisDapV2 dap({itm_stream(1000, 11)});
  StLink stlink({itm_stream(1000, 12)});
  bus.plug(a);
  DeviceSpec spec_b = b.spec();
  bus.plug(b);
  bus.plug(dap);
  bus.plug(stlink);
  const Run text = run_tool({"--list"});
  check(text.exit_code == 0 && contains(text.out, "lpclink2  1fc9:0090  serial LPC2EMU1") &&
            contains(text.out, "LPC2EMU2") && contains(text.out, "cmsis-dap 0d28:0204") &&
            contains(text.out, "stlink    0483:374f"),
        "--list shows every probe with kind, VID:PID and serial", text.out + text.err);
  const Run json = run_tool({"--list", "--format", "ndjson"});
  check(json.exit_code == 0 &&
            contains(json.out, R"("kind":"cmsis-dap","vid_pid":"0d28:0204","serial_number":"DAPEMU01")") &&
            contains(json.out, R"("swo":"SWO streaming endpoint)"),
        "--list --format ndjson", json.out);
  const Run ambiguous = run_tool({"--probe", "lpclink2"});
  check(ambiguous.exit_code == 2 && contains(ambiguous.err, "--serial-number"),
        "two LPC-Link2s without --serial-number -> usage error naming the serials", ambiguous.err);
  const Run chosen = run_tool({"--probe", "lpclink2", "--serial-number", "LPC2EMU2", "--max-bytes", "5000"});
  check(chosen.exit_code == 0 && same_bytes(chosen.out, second.swo), "--serial-number chooses the probe",
        first_difference(chosen.out, second.swo));
  const Run by_id = run_tool({"--probe", "0483:374f", "--max-bytes", "1000"});
  check(by_id.exit_code == 0 && by_id.out.size() == 1000, "--probe VID:PID", by_id.err);
}

void cmsis_dap_cases() {
  for (const bool streaming : {true, false}) {
    Bus bus;
    const Bytes swo = itm_stream(300'000, 13);
    CmsisDapOptions options{swo, streaming};
    CmsisDapV2 probe(options);
    bus.plug(probe);
    const Run r =
        run_tool({"--probe", "cmsis-dap", "--baud", "4500000", "--max-bytes", std::to_string(swo.size()), "-v"});
    const std::string how = streaming ? "streaming endpoint" : "DAP_SWO_Data";
    check(r.exit_code == 0 && same_bytes(r.out, swo), "cmsis-dap (" + how + "): every byte once",
          first_difference(r.out, swo) + " " + r.err);
    check(contains(r.err, "via " + std::string(streaming ? "the streaming endpoint" : "DAP_SWO_Data")),
          "cmsis-dap (" + how + "): the transport is reported", r.err);
    const std::lock_guard lock(probe.mutex);
    check(probe.rate == 4'500'000 && !probe.running && probe.mode == 0,
          "cmsis-dap (" + how + "): rate set; capture stopped and SWO off at exit");
  }
  {
    Bus bus;
    CmsisDapOptions options{itm_stream(50'000, 14), true};
    options.report_overrun = true;
    CmsisDapV2 probe(options);
    bus.plug(probe);
    const Run r = run_tool({"--probe", "cmsis-dap", "--duration", "1s"});
    check(r.exit_code == 0 && contains(r.err, "1 overruns"), "cmsis-dap: an overrun in SWO_Status is reported", r.err);
  }
  {
    Bus bus;
    CmsisDapV2 probe({itm_stream(1000, 15)});
    bus.plug(probe);
    const Run r = run_tool({"--probe", "cmsis-dap", "--swo-mode", "manchester"});
    check(r.exit_code == 9 && contains(r.err, "no Manchester"),
          "cmsis-dap: Manchester where the probe has none -> exit 9", r.err);
  }
  {
    Bus bus;
    CmsisDapOptions options{itm_stream(8000, 16), true, true};
    CmsisDapV2 probe(options);
    bus.plug(probe);
    const Run r = run_tool({"--probe", "cmsis-dap", "--swo-mode", "manchester", "--max-bytes", "8000"});
    check(r.exit_code == 0 && same_bytes(r.out, options.swo), "cmsis-dap: Manchester where offered", r.err);
  }
}

void stlink_cases() {
  {
    Bus bus;
    const Bytes swo = itm_stream(200'000, 17);
    StLink probe({swo});
    bus.plug(probe);
    const Run r = run_tool({"--probe", "stlink", "--baud", "8000000", "--max-bytes", std::to_string(swo.size()), "-v"});
    check(r.exit_code == 0 && same_bytes(r.out, swo), "stlink V3: every byte once",
          first_difference(r.out, swo) + r.err);
    const std::lock_guard lock(probe.mutex);
    check(probe.rate == 8'000'000 && !probe.running, "stlink V3: trace started at the rate and stopped at exit");
  }
  {
    Bus bus;
    StLink probe({itm_stream(1000, 18), false});
    bus.plug(probe);
    const Run r = run_tool({"--probe", "stlink"});
    check(r.exit_code == 9 && contains(r.err, "J13"), "stlink V2 with firmware J12 -> exit 9 naming J13", r.err);
  }
}

// --bench MB: swo-capture's own CPU time per captured MB from each probe model (the
// emulator's work runs in this process and is not counted).
void report(const std::string& name, const Run& r, std::size_t bytes, bool exact) {
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf("%-34s %6.1f MB  %6.2f s wall  %7.1f MB/s  %6.1f ms CPU/MB  %s\n", name.c_str(), mb, r.wall_seconds,
              mb / r.wall_seconds, r.cpu_seconds * 1000 / mb, exact && r.exit_code == 0 ? "exact" : "MISMATCH");
}

int bench(std::size_t megabytes) {
  const Bytes swo = itm_stream(megabytes * 1'000'000, 21);
  const std::string size = std::to_string(swo.size());
  {
    Bus bus;
    LpcLink2 probe({swo, 1019});  // a full 04 reply per poll: the port's best case
    bus.plug(probe);
    const Run r = run_tool({"--probe", "lpclink2", "--baud", "12000000", "--max-bytes", size});
    report("lpclink2 (04 + 82 polling)", r, swo.size(), same_bytes(r.out, swo));
  }
  for (const bool streaming : {true, false}) {
    Bus bus;
    CmsisDapOptions options{swo, streaming};
    options.bytes_per_poll = streaming ? 16384 : 508;
    CmsisDapV2 probe(options);
    bus.plug(probe);
    const Run r = run_tool({"--probe", "cmsis-dap", "--baud", "12000000", "--max-bytes", size});
    report(streaming ? "cmsis-dap (streaming endpoint)" : "cmsis-dap (DAP_SWO_Data)", r, swo.size(),
           same_bytes(r.out, swo));
  }
  {
    Bus bus;
    StLink probe({swo, true, 4096});
    bus.plug(probe);
    const Run r = run_tool({"--probe", "stlink", "--baud", "12000000", "--max-bytes", size});
    report("stlink V3 (trace endpoint)", r, swo.size(), same_bytes(r.out, swo));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 5 && std::string(argv[3]) == "--bench")) {
    std::fprintf(stderr, "usage: %s SWO_CAPTURE WORK_DIR [--bench MB]\n", argv[0]);
    return 2;
  }
  ensure_umockdev_preload(argv);
  swo_capture = argv[1];
  work_dir = argv[2];
  if (argc == 5) return bench(std::stoul(argv[4]));
  lpclink2_capture_is_exact();
  lpclink2_epoch_wraps();
  lpclink2_lost_sync();
  lpclink2_missed_flush();
  lpclink2_rates();
  lpclink2_unplugged();
  lpclink2_replugged();
  lpclink2_errors();
  list_and_select();
  cmsis_dap_cases();
  stlink_cases();
  return summary();
}
