#include "usbfs_emulator.hpp"

#include <fcntl.h>
#include <linux/usbdevice_fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <umockdev.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace usbemu {
namespace {

void append_le16(Bytes& bytes, unsigned value) {
  bytes.push_back(static_cast<std::uint8_t>(value & 0xffU));
  bytes.push_back(static_cast<std::uint8_t>(value >> 8U));
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "usbfs emulator: %s\n", what.c_str());
  std::abort();
}

}  // namespace

DeviceModel::DeviceModel(DeviceSpec spec) : spec_(std::move(spec)) {
  int index = 1;
  strings_[index++] = spec_.manufacturer;
  strings_[index++] = spec_.product;
  strings_[index++] = spec_.serial;
  for (const auto& interface : spec_.interfaces) strings_[index++] = interface.name;
}

std::string DeviceModel::devnode() const {
  std::array<char, 64> path{};
  std::snprintf(path.data(), path.size(), "/dev/bus/usb/%03d/%03d", spec_.bus, spec_.address);
  return path.data();
}

// The sysfs `descriptors` attribute: device descriptor, then the whole configuration.
Bytes DeviceModel::descriptors() const {
  Bytes bytes{18, 1};
  append_le16(bytes, 0x0200);
  bytes.insert(bytes.end(), {spec_.device_class, spec_.device_subclass, spec_.device_protocol, 64});
  append_le16(bytes, spec_.vendor_id);
  append_le16(bytes, spec_.product_id);
  append_le16(bytes, spec_.bcd_device);
  bytes.insert(bytes.end(), {1, 2, 3, 1});
  Bytes body;
  std::uint8_t string_index = 4;
  std::uint8_t number = 0;
  for (const auto& interface : spec_.interfaces) {
    body.insert(body.end(), {9, 4, number++, 0, static_cast<std::uint8_t>(interface.endpoints.size()),
                             interface.class_code, interface.subclass, interface.protocol, string_index++});
    body.insert(body.end(), interface.extra.begin(), interface.extra.end());
    for (const auto& endpoint : interface.endpoints) {
      body.insert(body.end(), {7, 5, endpoint.address, endpoint.attributes});
      append_le16(body, endpoint.max_packet);
      body.push_back(endpoint.interval);
    }
  }
  Bytes config{9, 2};
  append_le16(config, static_cast<unsigned>(9 + body.size()));
  config.insert(config.end(), {static_cast<std::uint8_t>(spec_.interfaces.size()), 1, 0, 0x80, 250});
  bytes.insert(bytes.end(), config.begin(), config.end());
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

std::string DeviceModel::umockdev_text() const {
  std::string hex;
  for (const std::uint8_t byte : descriptors()) {
    std::array<char, 3> digits{};
    std::snprintf(digits.data(), digits.size(), "%02X", byte);
    hex += digits.data();
  }
  std::array<char, 1024> text{};
  std::snprintf(text.data(), text.size(),
                "P: %s\nN: bus/usb/%03d/%03d\nE: DEVNAME=%s\nE: DEVTYPE=usb_device\nE: DRIVER=usb\n"
                "E: PRODUCT=%x/%x/%x\nE: BUSNUM=%03d\nE: DEVNUM=%03d\nE: SUBSYSTEM=usb\n"
                "A: busnum=%d\nA: devnum=%d\nA: bConfigurationValue=1\nA: speed=480\n"
                "A: idVendor=%04x\nA: idProduct=%04x\nH: descriptors=",
                spec_.sysfs_path.c_str(), spec_.bus, spec_.address, devnode().c_str(), spec_.vendor_id,
                spec_.product_id, spec_.bcd_device, spec_.bus, spec_.address, spec_.bus, spec_.address, spec_.vendor_id,
                spec_.product_id);
  return std::string(text.data()) + hex + "\n";
}

// Standard requests on endpoint 0: string descriptors and SET_CONFIGURATION.
bool DeviceModel::on_control(const std::uint8_t* setup, Bytes& in) {
  const std::uint8_t request_type = setup[0];
  const std::uint8_t request = setup[1];
  const unsigned value = setup[2] | static_cast<unsigned>(setup[3]) << 8U;
  const unsigned length = setup[6] | static_cast<unsigned>(setup[7]) << 8U;
  constexpr std::uint8_t get_descriptor = 6;
  constexpr std::uint8_t set_configuration = 9;
  if (request_type == 0x80 && request == get_descriptor && (value >> 8U) == 3) {
    const unsigned index = value & 0xffU;
    if (index == 0) {
      in = {4, 3, 0x09, 0x04};  // US English
    } else {
      const auto found = strings_.find(static_cast<int>(index));
      if (found == strings_.end()) return false;
      in = {0, 3};
      for (const char c : found->second) in.insert(in.end(), {static_cast<std::uint8_t>(c), 0});
      in[0] = static_cast<std::uint8_t>(in.size());
    }
    if (in.size() > length) in.resize(length);
    return true;
  }
  return request_type == 0 && request == set_configuration;
}

UsbfsEmulator::UsbfsEmulator(DeviceModel& model) : model_(model) {
  handler_ = umockdev_ioctl_base_new();
  g_signal_connect(handler_, "handle-ioctl", G_CALLBACK(on_ioctl_callback), this);
}

UsbfsEmulator::~UsbfsEmulator() {
  for (auto& urb : pending_) g_object_unref(urb.urb);
  g_object_unref(handler_);
  if (fifo_ >= 0) close(fifo_);
}

void UsbfsEmulator::attach(UMockdevTestbed* testbed) {
  GError* error = nullptr;
  if (umockdev_testbed_add_from_string(testbed, model_.umockdev_text().c_str(), &error) == FALSE ||
      umockdev_testbed_attach_ioctl(testbed, model_.devnode().c_str(), handler_, &error) == FALSE) {
    fail(error->message);
  }
  gchar* root = umockdev_testbed_get_root_dir(testbed);
  const std::string path = std::string(root) + model_.devnode();
  g_free(root);
  if (unlink(path.c_str()) != 0 || mkfifo(path.c_str(), 0666) != 0 ||
      (fifo_ = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
    fail("cannot make the device node a FIFO: " + std::string(std::strerror(errno)));
  }
  fcntl(fifo_, F_SETPIPE_SZ, 4096);  // one page: fill or drain it with one call
  const std::lock_guard lock(model_.mutex);
  ready_ = true;
  update_ready();
}

// POLLOUT on the FIFO <=> a free page in the pipe. Kept full while no URB is reapable.
void UsbfsEmulator::update_ready() {
  if (fifo_ < 0) return;
  match_in_urbs();
  bool want = unplugged_;
  for (const auto& urb : pending_) want = want || urb.done;
  if (want == ready_) return;
  static std::array<char, 4096> page{};
  if (want) {
    if (read(fifo_, page.data(), page.size()) != static_cast<ssize_t>(page.size())) fail("fifo read");
  } else {
    while (write(fifo_, page.data(), page.size()) == static_cast<ssize_t>(page.size())) {
    }
  }
  ready_ = want;
}

void UsbfsEmulator::unplug() {
  const std::lock_guard lock(model_.mutex);
  unplugged_ = true;
  for (auto& urb : pending_) {
    if (!urb.done) {
      urb.done = true;
      urb.status = -ESHUTDOWN;
      urb.result.clear();
    }
  }
  update_ready();
}

int UsbfsEmulator::on_ioctl_callback(UMockdevIoctlBase* /*base*/, UMockdevIoctlClient* client, void* self) {
  return static_cast<UsbfsEmulator*>(self)->on_ioctl(client) ? TRUE : FALSE;
}

void UsbfsEmulator::match_in_urbs() {
  for (auto& urb : pending_) {
    if (urb.done || (urb.endpoint & 0x80U) == 0 || urb.type == USBDEVFS_URB_TYPE_CONTROL) continue;
    auto& queue = model_.in_queue[urb.endpoint];
    if (queue.empty()) model_.on_in_wanted(urb.endpoint, static_cast<std::size_t>(urb.length));
    if (queue.empty()) continue;
    urb.result = std::move(queue.front());
    queue.pop_front();
    if (urb.result.size() > static_cast<std::size_t>(urb.length)) {
      urb.result.resize(static_cast<std::size_t>(urb.length));  // real hardware: babble
    }
    urb.done = true;
    urb.status = 0;
  }
}

int UsbfsEmulator::submit(UMockdevIoctlData* arg) {
  GError* error = nullptr;
  UMockdevIoctlData* data = umockdev_ioctl_data_resolve(arg, 0, sizeof(usbdevfs_urb), &error);
  auto* urb = reinterpret_cast<usbdevfs_urb*>(data->data);
  Urb pending{data, nullptr, urb->type, urb->endpoint, urb->buffer_length, false, 0, {}};
  if (urb->buffer_length > 0) {
    pending.buffer = umockdev_ioctl_data_resolve(data, offsetof(usbdevfs_urb, buffer),
                                                 static_cast<std::size_t>(urb->buffer_length), &error);
    g_object_unref(pending.buffer);  // still owned by `data`
  }
  const auto length = static_cast<std::size_t>(pending.length);
  if (pending.type == USBDEVFS_URB_TYPE_CONTROL) {
    Bytes in;
    pending.done = true;
    pending.status = model_.on_control(pending.buffer->data, in) ? 0 : -EPIPE;
    if ((pending.buffer->data[0] & 0x80U) != 0) pending.result = std::move(in);
  } else if (pending.type == USBDEVFS_URB_TYPE_BULK || pending.type == USBDEVFS_URB_TYPE_INTERRUPT) {
    if ((pending.endpoint & 0x80U) == 0) {
      const Bytes out(pending.buffer->data, pending.buffer->data + length);
      model_.on_out(pending.endpoint, out);
      pending.done = true;
    }
  } else {
    g_object_unref(data);
    return EINVAL;  // no isochronous emulation
  }
  pending_.push_back(std::move(pending));
  return 0;
}

bool UsbfsEmulator::reap(UMockdevIoctlData* arg) {
  match_in_urbs();
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (!it->done) continue;
    Urb done = std::move(*it);
    pending_.erase(it);
    auto* urb = reinterpret_cast<usbdevfs_urb*>(done.urb->data);
    int actual = 0;
    if ((done.endpoint & 0x80U) != 0 || done.type == USBDEVFS_URB_TYPE_CONTROL) {
      const std::size_t offset = done.type == USBDEVFS_URB_TYPE_CONTROL ? 8 : 0;
      actual = static_cast<int>(done.result.size());
      if (actual > 0) std::memcpy(done.buffer->data + offset, done.result.data(), done.result.size());
    } else {
      actual = done.status == 0 ? done.length : 0;
    }
    urb->status = done.status;
    urb->actual_length = actual;
    GError* error = nullptr;
    UMockdevIoctlData* result = umockdev_ioctl_data_resolve(arg, 0, sizeof(void*), &error);
    umockdev_ioctl_data_set_ptr(result, 0, done.urb);  // written back when the ioctl completes
    g_object_unref(result);
    g_object_unref(done.urb);
    return true;
  }
  return false;
}

int UsbfsEmulator::claim(unsigned long request, UMockdevIoctlData* arg) {
  GError* error = nullptr;
  UMockdevIoctlData* data = umockdev_ioctl_data_resolve(arg, 0, sizeof(unsigned), &error);
  unsigned number = 0;
  std::memcpy(&number, data->data, sizeof number);
  g_object_unref(data);
  if (number >= model_.spec().interfaces.size()) return ENOENT;
  const auto interface = static_cast<std::uint8_t>(number);
  const std::string suffix = " " + std::to_string(number);
  if (request == USBDEVFS_RELEASEINTERFACE) {
    model_.events.push_back("release" + suffix);
    return 0;
  }
  if (model_.claimed_elsewhere.contains(interface)) return EBUSY;
  if (request == USBDEVFS_DISCONNECT_CLAIM && model_.kernel_driver_bound.erase(interface) > 0) {
    model_.events.push_back("detach" + suffix);
  }
  if (model_.kernel_driver_bound.contains(interface)) return EBUSY;
  model_.events.push_back("claim" + suffix);
  return 0;
}

// Runs on umockdev's worker thread, once per ioctl of the program under test.
bool UsbfsEmulator::on_ioctl(UMockdevIoctlClient* client) {
  const unsigned long request = umockdev_ioctl_client_get_request(client);
  UMockdevIoctlData* arg = umockdev_ioctl_client_get_arg(client);
  const std::lock_guard lock(model_.mutex);
  const auto complete = [&](long result, int error_number) {
    update_ready();
    umockdev_ioctl_client_complete(client, result, error_number);
    return true;
  };
  const auto status = [&](int error_number) { return complete(error_number == 0 ? 0 : -1, error_number); };
  if (unplugged_ && request != USBDEVFS_REAPURB && request != USBDEVFS_REAPURBNDELAY &&
      request != USBDEVFS_DISCARDURB && request != USBDEVFS_RELEASEINTERFACE) {
    return complete(-1, ENODEV);
  }
  GError* error = nullptr;
  switch (request) {
    case USBDEVFS_GET_CAPABILITIES: {
      UMockdevIoctlData* data = umockdev_ioctl_data_resolve(arg, 0, 4, &error);
      const std::uint32_t caps = USBDEVFS_CAP_ZERO_PACKET | USBDEVFS_CAP_BULK_CONTINUATION |
                                 USBDEVFS_CAP_NO_PACKET_SIZE_LIM | USBDEVFS_CAP_REAP_AFTER_DISCONNECT;
      std::memcpy(data->data, &caps, sizeof caps);
      g_object_unref(data);
      return complete(0, 0);
    }
    case USBDEVFS_CLAIMINTERFACE:
    case USBDEVFS_RELEASEINTERFACE:
    case USBDEVFS_DISCONNECT_CLAIM:
      return status(claim(request, arg));
    case USBDEVFS_GETDRIVER: {
      UMockdevIoctlData* data = umockdev_ioctl_data_resolve(arg, 0, sizeof(usbdevfs_getdriver), &error);
      auto* query = reinterpret_cast<usbdevfs_getdriver*>(data->data);
      const bool bound = model_.kernel_driver_bound.contains(static_cast<std::uint8_t>(query->interface));
      if (bound) std::snprintf(query->driver, sizeof query->driver, "usbhid");
      g_object_unref(data);
      return status(bound ? 0 : ENODATA);
    }
    case USBDEVFS_IOCTL: {  // USBDEVFS_CONNECT: libusb re-binds the kernel driver on release
      UMockdevIoctlData* data = umockdev_ioctl_data_resolve(arg, 0, sizeof(usbdevfs_ioctl), &error);
      const auto* command = reinterpret_cast<const usbdevfs_ioctl*>(data->data);
      const int interface = command->ifno;
      const bool connect = command->ioctl_code == static_cast<int>(USBDEVFS_CONNECT);
      g_object_unref(data);
      if (connect) model_.events.push_back("attach " + std::to_string(interface));
      return status(connect ? 0 : ENOTTY);
    }
    case USBDEVFS_SETINTERFACE:
    case USBDEVFS_SETCONFIGURATION:
    case USBDEVFS_CLEAR_HALT:
    case USBDEVFS_RESET:
    case USBDEVFS_RESETEP:
      return complete(0, 0);
    case USBDEVFS_GET_SPEED:
      return complete(3, 0);  // high speed
    case USBDEVFS_SUBMITURB:
      return status(submit(arg));
    case USBDEVFS_DISCARDURB: {
      unsigned long address = 0;
      std::memcpy(&address, arg->data, sizeof address);  // the argument is the URB pointer itself
      for (auto& urb : pending_) {
        if (urb.urb->client_addr == address && !urb.done) {
          urb.done = true;
          urb.status = -ENOENT;
          urb.result.clear();
          return complete(0, 0);
        }
      }
      return complete(-1, EINVAL);
    }
    case USBDEVFS_REAPURB:
    case USBDEVFS_REAPURBNDELAY:
      if (reap(arg)) return complete(0, 0);
      return complete(-1, unplugged_ ? ENODEV : EAGAIN);
    default:
      return complete(-1, ENOTTY);
  }
}

void ensure_umockdev_preload(char** argv) {
  // umockdev_in_mock_environment() is only true once a testbed exists: check LD_PRELOAD.
  const char* old = std::getenv("LD_PRELOAD");
  if (old != nullptr && std::strstr(old, "libumockdev-preload") != nullptr) return;
  std::string value = "libumockdev-preload.so.0";
  if (old != nullptr && *old != '\0') value += std::string(":") + old;
  setenv("LD_PRELOAD", value.c_str(), 1);
  execv("/proc/self/exe", argv);
  fail("cannot re-execute with the umockdev preload: " + std::string(std::strerror(errno)));
}

}  // namespace usbemu
