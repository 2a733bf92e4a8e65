#include "usb/usb_device.hpp"

#include <fmt/format.h>
#include <libusb.h>

#include <array>
#include <utility>

namespace tp::usb {
namespace {

constexpr std::string_view udev_hint =
    "install the udev rules shipped with tracepipe (60-tracepipe-probes.rules, then "
    "`udevadm control --reload && udevadm trigger`) or add yourself to the plugdev group";

std::string string_descriptor(libusb_device_handle* handle, std::uint8_t index) {
  if (index == 0) return {};
  std::array<unsigned char, 256> text{};
  const int n = libusb_get_string_descriptor_ascii(handle, index, text.data(), static_cast<int>(text.size()));
  return n > 0 ? std::string(reinterpret_cast<const char*>(text.data()), static_cast<std::size_t>(n)) : std::string{};
}

// The configuration's interfaces (first alternate setting), with names when `handle` is open.
std::vector<InterfaceInfo> interfaces_of(libusb_device* device, libusb_device_handle* handle) {
  std::vector<InterfaceInfo> result;
  libusb_config_descriptor* config = nullptr;
  if (libusb_get_active_config_descriptor(device, &config) != 0 &&
      libusb_get_config_descriptor(device, 0, &config) != 0) {
    return result;
  }
  for (int i = 0; i < config->bNumInterfaces; ++i) {
    const libusb_interface& interface = config->interface[i];
    if (interface.num_altsetting < 1) continue;
    const libusb_interface_descriptor& alt = interface.altsetting[0];
    InterfaceInfo info{alt.bInterfaceNumber, alt.bInterfaceClass, {}, {}};
    if (handle != nullptr) info.name = string_descriptor(handle, alt.iInterface);
    for (int e = 0; e < alt.bNumEndpoints; ++e) {
      const libusb_endpoint_descriptor& ep = alt.endpoint[e];
      info.endpoints.push_back(
          {ep.bEndpointAddress, static_cast<TransferType>(ep.bmAttributes & 3U), ep.wMaxPacketSize});
    }
    result.push_back(std::move(info));
  }
  libusb_free_config_descriptor(config);
  return result;
}

}  // namespace

std::string DeviceInfo::id() const {
  return fmt::format("{:04x}:{:04x}", vendor_id, product_id);
}
std::string DeviceInfo::location() const {
  return fmt::format("bus {} device {}", bus, address);
}

Error usb_error(int code, std::string_view what) {
  const std::string detail = fmt::format("{}: {}", what, libusb_strerror(code));
  switch (code) {
    case LIBUSB_ERROR_ACCESS:
      return {ExitCode::permission_denied, fmt::format("{} ({})", detail, udev_hint), ErrorCode::permission_denied};
    case LIBUSB_ERROR_BUSY:
      return {ExitCode::busy, fmt::format("{} (another program has the probe: close it and retry)", detail),
              ErrorCode::probe_in_use};
    case LIBUSB_ERROR_NO_DEVICE:
      return {ExitCode::io_error, fmt::format("{}: the probe was unplugged", what), ErrorCode::probe_not_found};
    case LIBUSB_ERROR_NOT_FOUND:
      return {ExitCode::not_found, detail, ErrorCode::probe_not_found};
    case LIBUSB_ERROR_TIMEOUT:
      return {ExitCode::timeout, fmt::format("{}: the probe did not answer", what), ErrorCode::target_not_responding};
    default:
      return {ExitCode::io_error, detail};
  }
}

Context::Context() {
  const int rc = libusb_init(&context_);
  if (rc != 0) throw usb_error(rc, "cannot start libusb");
}

Context::Context(Context&& other) noexcept : context_(std::exchange(other.context_, nullptr)) {}

Context& Context::operator=(Context&& other) noexcept {
  std::swap(context_, other.context_);
  return *this;
}

Context::~Context() {
  if (context_ != nullptr) libusb_exit(context_);
}

std::vector<DeviceInfo> Context::list(const std::function<bool(std::uint16_t, std::uint16_t)>& wanted) const {
  libusb_device** devices = nullptr;
  const ssize_t count = libusb_get_device_list(context_, &devices);
  if (count < 0) throw usb_error(static_cast<int>(count), "cannot list USB devices");
  std::vector<DeviceInfo> result;
  for (ssize_t i = 0; i < count; ++i) {
    libusb_device* device = devices[i];
    libusb_device_descriptor descriptor{};
    if (libusb_get_device_descriptor(device, &descriptor) != 0) continue;
    if (!wanted(descriptor.idVendor, descriptor.idProduct)) continue;
    DeviceInfo info;
    info.vendor_id = descriptor.idVendor;
    info.product_id = descriptor.idProduct;
    info.bus = libusb_get_bus_number(device);
    info.address = libusb_get_device_address(device);
    libusb_device_handle* handle = nullptr;
    const int rc = libusb_open(device, &handle);
    if (rc == 0) {
      info.manufacturer = string_descriptor(handle, descriptor.iManufacturer);
      info.product = string_descriptor(handle, descriptor.iProduct);
      info.serial_number = string_descriptor(handle, descriptor.iSerialNumber);
    } else {
      info.open_error = usb_error(rc, "cannot open").what();
    }
    info.interfaces = interfaces_of(device, handle);
    if (handle != nullptr) libusb_close(handle);
    result.push_back(std::move(info));
  }
  libusb_free_device_list(devices, 1);
  return result;
}

DeviceHandle Context::open(const DeviceInfo& info) const {
  libusb_device** devices = nullptr;
  const ssize_t count = libusb_get_device_list(context_, &devices);
  if (count < 0) throw usb_error(static_cast<int>(count), "cannot list USB devices");
  libusb_device_handle* handle = nullptr;
  int rc = LIBUSB_ERROR_NO_DEVICE;
  for (ssize_t i = 0; i < count; ++i) {
    if (libusb_get_bus_number(devices[i]) == info.bus && libusb_get_device_address(devices[i]) == info.address) {
      rc = libusb_open(devices[i], &handle);
      break;
    }
  }
  libusb_free_device_list(devices, 1);
  const std::string name =
      fmt::format("{} ({}, {})", info.product.empty() ? info.id() : info.product, info.id(), info.location());
  if (rc != 0) throw usb_error(rc, fmt::format("cannot open {}", name));
  return {handle, name};
}

DeviceHandle::DeviceHandle(DeviceHandle&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      name_(std::move(other.name_)),
      claimed_(std::move(other.claimed_)) {}

DeviceHandle& DeviceHandle::operator=(DeviceHandle&& other) noexcept {
  std::swap(handle_, other.handle_);
  std::swap(name_, other.name_);
  std::swap(claimed_, other.claimed_);
  return *this;
}

DeviceHandle::~DeviceHandle() {
  if (handle_ == nullptr) return;
  for (const std::uint8_t interface : claimed_) libusb_release_interface(handle_, interface);
  libusb_close(handle_);
}

void DeviceHandle::claim(std::uint8_t interface) {
  // With auto-detach, libusb unbinds a kernel driver (usbhid for the LPC-Link2's HID
  // interfaces) for the claim and binds it again on release.
  libusb_set_auto_detach_kernel_driver(handle_, 1);
  const int rc = libusb_claim_interface(handle_, interface);
  if (rc != 0) throw usb_error(rc, fmt::format("cannot claim interface {} of {}", interface, name_));
  claimed_.push_back(interface);
}

int DeviceHandle::transfer(const EndpointInfo& endpoint, unsigned char* data, int length, int timeout_ms, int& done) {
  const auto timeout = static_cast<unsigned int>(timeout_ms);
  if (endpoint.type == TransferType::interrupt) {
    return libusb_interrupt_transfer(handle_, endpoint.address, data, length, &done, timeout);
  }
  return libusb_bulk_transfer(handle_, endpoint.address, data, length, &done, timeout);
}

void DeviceHandle::write(const EndpointInfo& endpoint, std::span<const std::uint8_t> data, int timeout_ms) {
  int done = 0;
  // libusb takes a non-const buffer for both directions; it only reads an OUT transfer's.
  auto* bytes = const_cast<std::uint8_t*>(data.data());
  const int rc = transfer(endpoint, bytes, static_cast<int>(data.size()), timeout_ms, done);
  if (rc != 0) throw usb_error(rc, fmt::format("sending to {}", name_));
}

std::optional<std::size_t> DeviceHandle::read(const EndpointInfo& endpoint, std::span<std::uint8_t> buffer,
                                              int timeout_ms) {
  int done = 0;
  const int rc = transfer(endpoint, buffer.data(), static_cast<int>(buffer.size()), timeout_ms, done);
  if (rc == LIBUSB_ERROR_TIMEOUT && done == 0) return std::nullopt;
  if (rc != 0 && rc != LIBUSB_ERROR_TIMEOUT) throw usb_error(rc, fmt::format("reading from {}", name_));
  return static_cast<std::size_t>(done);
}

}  // namespace tp::usb
