// A thin RAII layer over libusb-1.0 for the probes: enumeration with the strings a probe
// is recognised by, opening, claiming (detaching a kernel driver if one is bound) and
// synchronous transfers with timeouts. libusb errors become tp::Error with the exit code
// and Callisto code that fit (PROBE_NOT_FOUND, PERMISSION_DENIED, PROBE_IN_USE, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

struct libusb_context;
struct libusb_device;
struct libusb_device_handle;

namespace tp::usb {

enum class TransferType : std::uint8_t { control = 0, isochronous = 1, bulk = 2, interrupt = 3 };

struct EndpointInfo {
  std::uint8_t address = 0;  // bit 7 set = IN
  TransferType type = TransferType::bulk;
  std::uint16_t max_packet = 0;
  [[nodiscard]] bool is_in() const noexcept { return (address & 0x80U) != 0; }
};

struct InterfaceInfo {
  std::uint8_t number = 0;
  std::uint8_t class_code = 0;
  std::string name;  // the interface string (empty if none or unreadable)
  std::vector<EndpointInfo> endpoints;
};

struct DeviceInfo {
  std::uint16_t vendor_id = 0;
  std::uint16_t product_id = 0;
  std::uint8_t bus = 0;
  std::uint8_t address = 0;
  std::string manufacturer;
  std::string product;
  std::string serial_number;
  std::vector<InterfaceInfo> interfaces;
  std::optional<std::string> open_error;       // why the strings could not be read (e.g. permissions)
  [[nodiscard]] std::string id() const;        // "1fc9:0090"
  [[nodiscard]] std::string location() const;  // "bus 1 device 2"
};

// Maps a libusb error code to an Error: `what` says what was being done.
[[nodiscard]] Error usb_error(int code, std::string_view what);

class DeviceHandle;

class Context {
 public:
  Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();

  // Devices for which `wanted(vid, pid)` is true, opened briefly to read their strings.
  std::vector<DeviceInfo> list(const std::function<bool(std::uint16_t, std::uint16_t)>& wanted) const;
  // Opens the device `info` describes (found again by bus and address).
  [[nodiscard]] DeviceHandle open(const DeviceInfo& info) const;

 private:
  libusb_context* context_ = nullptr;
};

class DeviceHandle {
 public:
  DeviceHandle(DeviceHandle&&) noexcept;
  DeviceHandle& operator=(DeviceHandle&&) noexcept;
  DeviceHandle(const DeviceHandle&) = delete;
  DeviceHandle& operator=(const DeviceHandle&) = delete;
  ~DeviceHandle();  // releases the claimed interfaces and re-attaches kernel drivers

  // Claims the interface; a kernel driver bound to it is detached for the claim.
  void claim(std::uint8_t interface);
  // Sends `data` on an OUT endpoint; throws on error or timeout.
  void write(const EndpointInfo& endpoint, std::span<const std::uint8_t> data, int timeout_ms);
  // Reads one transfer from an IN endpoint: the bytes read, or nothing on timeout.
  std::optional<std::size_t> read(const EndpointInfo& endpoint, std::span<std::uint8_t> buffer, int timeout_ms);
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  friend class Context;
  DeviceHandle(libusb_device_handle* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  int transfer(const EndpointInfo& endpoint, unsigned char* data, int length, int timeout_ms, int& done);

  libusb_device_handle* handle_ = nullptr;
  std::string name_;
  std::vector<std::uint8_t> claimed_;
};

}  // namespace tp::usb
