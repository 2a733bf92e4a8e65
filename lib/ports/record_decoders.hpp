// Binary record decoders of the Callisto protocol document ("Binary Protocol"):
// TaskIsr (9 bytes: type, A u32, B u32), Marker (u32 id), Counter (u32 id + u64
// value), all little-endian and reassembled from any mix of 1/2/4-byte writes;
// plus User (a printf format per write) and Raw (each write as bytes).
#pragma once

#include <array>
#include <map>
#include <string>

#include "ports/port_decoder.hpp"
#include "ports/user_format.hpp"

namespace tp {

// Accumulates bytes into fixed-size records; garbage and partial records are reported
// as Malformed events, never silently dropped.
class FixedRecordDecoder : public PortDecoder {
 public:
  void write(std::uint32_t value, std::uint8_t size, EventSink& sink) final;
  void write_bytes(std::span<const std::uint8_t> bytes, EventSink& sink) final;
  void flush(FlushReason reason, EventSink& sink) final;

 protected:
  FixedRecordDecoder(std::uint16_t port, std::size_t record_size, std::string_view name);
  // Whether `byte` can start a record (TaskIsr checks the type byte).
  [[nodiscard]] virtual bool valid_start(std::uint8_t /*byte*/) const { return true; }
  virtual void decode(const std::uint8_t* record, EventSink& sink) = 0;
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

 private:
  void report_garbage(EventSink& sink);
  void report_partial(std::string_view reason, EventSink& sink);

  std::uint16_t port_;
  std::size_t record_size_;
  std::string_view name_;
  std::array<std::uint8_t, 16> record_{};
  std::size_t filled_ = 0;
  std::uint64_t garbage_bytes_ = 0;
  std::string message_;
};

class TaskIsrDecoder final : public FixedRecordDecoder {
 public:
  TaskIsrDecoder(std::uint16_t port, std::map<std::uint32_t, std::string> isr_names);

 private:
  [[nodiscard]] bool valid_start(std::uint8_t byte) const override { return byte >= 1 && byte <= 5; }
  void decode(const std::uint8_t* record, EventSink& sink) override;
  std::map<std::uint32_t, std::string> isr_names_;
};

class MarkerDecoder final : public FixedRecordDecoder {
 public:
  MarkerDecoder(std::uint16_t port, std::map<std::uint32_t, std::string> names);

 private:
  void decode(const std::uint8_t* record, EventSink& sink) override;
  std::map<std::uint32_t, std::string> names_;
};

class CounterDecoder final : public FixedRecordDecoder {
 public:
  explicit CounterDecoder(std::uint16_t port);

 private:
  void decode(const std::uint8_t* record, EventSink& sink) override;
};

class UserDecoder final : public PortDecoder {
 public:
  UserDecoder(std::uint16_t port, UserFormat format) : port_(port), format_(std::move(format)) {}
  void write(std::uint32_t value, std::uint8_t size, EventSink& sink) override;
  void flush(FlushReason /*reason*/, EventSink& /*sink*/) override {}

 private:
  std::uint16_t port_;
  UserFormat format_;
  std::string scratch_;
};

class RawDecoder final : public PortDecoder {
 public:
  explicit RawDecoder(std::uint16_t port) : port_(port) {}
  void write(std::uint32_t value, std::uint8_t size, EventSink& sink) override;
  void flush(FlushReason /*reason*/, EventSink& /*sink*/) override {}

 private:
  std::uint16_t port_;
};

}  // namespace tp
