// What the USB tests share: running a tool under the emulated bus and collecting its
// output, exit code and CPU time; one umockdev testbed per scenario; pass/fail counting.
#pragma once

#include <sys/types.h>
#include <umockdev.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "usbfs_emulator.hpp"

namespace usbemu {

void check(bool ok, const std::string& name, const std::string& detail = {});
// Prints "N passed, N failed" and returns the exit status.
int summary();

std::string read_file(const std::string& path);
bool contains(const std::string& text, const std::string& part);

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
  double cpu_seconds = 0;  // the tool's user + system time
  double wall_seconds = 0;
};

// Runs `program` (it inherits LD_PRELOAD and UMOCKDEV_DIR) with stdout and stderr in
// WORK_DIR files; `watch` is called every 10 ms with the output size so far, and may act
// (unplug, signal). Killed after 120 s.
Run run_program(const std::string& program, const std::string& work_dir, const std::vector<std::string>& args,
                const std::function<void(pid_t, std::size_t)>& watch = {});

// One testbed (one emulated USB bus) per scenario.
class Bus {
 public:
  Bus() : testbed_(umockdev_testbed_new()) {}
  Bus(const Bus&) = delete;
  Bus& operator=(const Bus&) = delete;
  ~Bus() {
    emulators_.clear();
    g_object_unref(testbed_);
  }
  UsbfsEmulator& plug(DeviceModel& model) {
    emulators_.push_back(std::make_unique<UsbfsEmulator>(model));
    emulators_.back()->attach(testbed_);
    return *emulators_.back();
  }
  void unplug(UsbfsEmulator& emulator, const DeviceModel& model) {
    emulator.unplug();
    umockdev_testbed_uevent(testbed_, ("/sys" + model.spec().sysfs_path).c_str(), "remove");
  }

 private:
  UMockdevTestbed* testbed_;
  std::vector<std::unique_ptr<UsbfsEmulator>> emulators_;
};

}  // namespace usbemu
