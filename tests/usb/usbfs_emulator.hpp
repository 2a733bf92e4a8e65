// Emulated USB devices for the real libusb in an unmodified program, with umockdev:
// libumockdev-preload (LD_PRELOAD) redirects /sys and /dev to a testbed, and the ioctls
// libusb sends to /dev/bus/usb/BBB/DDD come here (usbdevfs: claim, submit/reap/discard
// URBs, disconnect-claim, ...), answered by a DeviceModel, the probe's "firmware".
// See ../shared/reference/usb-emulation (the verified prototype this follows).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

using UMockdevTestbed = struct _UMockdevTestbed;
using UMockdevIoctlBase = struct _UMockdevIoctlBase;
using UMockdevIoctlClient = struct _UMockdevIoctlClient;
using UMockdevIoctlData = struct _UMockdevIoctlData;

namespace usbemu {

using Bytes = std::vector<std::uint8_t>;

enum : std::uint8_t { ep_bulk = 2, ep_interrupt = 3 };

struct Endpoint {
  std::uint8_t address;
  std::uint8_t attributes;
  std::uint16_t max_packet;
  std::uint8_t interval;
};

struct Interface {
  std::uint8_t class_code, subclass, protocol;
  std::string name;  // becomes a string descriptor
  std::vector<Endpoint> endpoints;
  Bytes extra;  // class-specific descriptors (HID)
};

struct DeviceSpec {
  std::uint16_t vendor_id = 0, product_id = 0, bcd_device = 0x0100;
  std::uint8_t device_class = 0, device_subclass = 0, device_protocol = 0;
  std::string manufacturer, product, serial;
  std::vector<Interface> interfaces;
  int bus = 1, address = 2;
  std::string sysfs_path = "/devices/pci0000:00/0000:00:14.0/usb1/1-1";
};

// The device side. on_out() runs on the emulator thread with `mutex` held; it queues
// answers with push_in_locked(). Everything the host sent and got is in `log`.
class DeviceModel {
 public:
  explicit DeviceModel(DeviceSpec spec);
  DeviceModel(const DeviceModel&) = delete;
  DeviceModel& operator=(const DeviceModel&) = delete;
  virtual ~DeviceModel() = default;

  [[nodiscard]] const DeviceSpec& spec() const { return spec_; }
  [[nodiscard]] std::string devnode() const;
  [[nodiscard]] std::string umockdev_text() const;  // for umockdev_testbed_add_from_string

  virtual void on_out(std::uint8_t endpoint, const Bytes& data) = 0;
  // An IN URB of `length` bytes found nothing queued: the model may produce data now
  // (streaming endpoints), at most `length` bytes per queued transfer.
  virtual void on_in_wanted(std::uint8_t /*endpoint*/, std::size_t /*length*/) {}
  bool on_control(const std::uint8_t* setup, Bytes& in);
  void push_in_locked(std::uint8_t endpoint, Bytes data) { in_queue[endpoint].push_back(std::move(data)); }

  std::mutex mutex;  // guards the model and the emulator's state
  std::map<std::uint8_t, std::deque<Bytes>> in_queue;
  std::set<std::uint8_t> kernel_driver_bound;  // interfaces a kernel driver holds (e.g. usbhid)
  std::set<std::uint8_t> claimed_elsewhere;    // interfaces another process has claimed
  std::vector<std::string> events;             // "detach 4", "claim 4", "release 4", "attach 4"

 private:
  [[nodiscard]] Bytes descriptors() const;
  DeviceSpec spec_;
  std::map<int, std::string> strings_;
};

class UsbfsEmulator {
 public:
  explicit UsbfsEmulator(DeviceModel& model);
  UsbfsEmulator(const UsbfsEmulator&) = delete;
  UsbfsEmulator& operator=(const UsbfsEmulator&) = delete;
  ~UsbfsEmulator();

  // Adds the device to the testbed and serves its node. The node becomes a FIFO whose
  // POLLOUT means "a URB can be reaped", so libusb sleeps in poll() instead of spinning.
  void attach(UMockdevTestbed* testbed);
  // Surprise removal: URBs in flight end with -ESHUTDOWN, then every ioctl fails with
  // ENODEV, as the kernel does.
  void unplug();

 private:
  struct Urb {
    UMockdevIoctlData* urb;
    UMockdevIoctlData* buffer;
    std::uint8_t type, endpoint;
    int length;
    bool done;
    int status;
    Bytes result;
  };
  static int on_ioctl_callback(UMockdevIoctlBase* base, UMockdevIoctlClient* client, void* self);
  bool on_ioctl(UMockdevIoctlClient* client);
  int submit(UMockdevIoctlData* arg);
  bool reap(UMockdevIoctlData* arg);
  int claim(unsigned long request, UMockdevIoctlData* arg);
  void match_in_urbs();
  void update_ready();

  DeviceModel& model_;
  UMockdevIoctlBase* handler_ = nullptr;
  std::deque<Urb> pending_;
  int fifo_ = -1;
  bool ready_ = true;
  bool unplugged_ = false;
};

// Re-executes the program with libumockdev-preload.so.0 if it is not loaded yet.
void ensure_umockdev_preload(char** argv);

}  // namespace usbemu
