// The port map: which decoder runs on which stimulus port, and its name. Read from the
// Callisto `ports_map` JSON form shared by itm-decode and trace-serve (docs/design.md "The port map").
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "records/vocabulary.hpp"

namespace tp {

struct PortConfig {
  std::string name;
  DecoderType decoder = DecoderType::raw;
  // User: the format; Text: optional format for 2- and 4-byte writes (extension
  // "value_format"), which then become their own records instead of packed characters.
  std::string format;
  bool enabled = true;
  // Names for ids (Marker ids, TaskIsr isr ids); extension "names": {"10": "TIM1"}.
  std::map<std::uint32_t, std::string> names;
};

class PortMap {
 public:
  static constexpr std::size_t port_count = 256;  // 8 stimulus pages of 32 ports

  // The protocol's standard map: 0 Console/Text, 1 RTOS Events/TaskIsr, 2 Markers/Marker,
  // 3 Counters/Counter, 4-7 User/Text; other ports use the default (Raw).
  static PortMap standard();
  // Accepts a ports_map object, {"ports_map": {...}} or a whole Meta message. A key
  // "default" sets the decoder of ports not listed. Throws tp::Error(bad_input).
  static PortMap parse(std::string_view json, std::string_view origin = "port map");
  static PortMap load(const std::string& path);

  [[nodiscard]] const PortConfig& at(std::uint16_t port) const noexcept {
    const auto& entry = ports_[port % port_count];
    return entry ? *entry : default_;
  }
  [[nodiscard]] bool configured(std::uint16_t port) const noexcept { return ports_[port % port_count].has_value(); }
  void set(std::uint16_t port, PortConfig config) { ports_[port % port_count] = std::move(config); }
  void set_default(PortConfig config) { default_ = std::move(config); }
  // Adds names for ids on every TaskIsr port (from an --isr-names file).
  void add_isr_names(const std::map<std::uint32_t, std::string>& names);
  // The configured ports in Callisto ports_map JSON form (for Meta messages).
  [[nodiscard]] std::string to_json() const;

 private:
  std::array<std::optional<PortConfig>, port_count> ports_{};
  PortConfig default_{};
};

// Reads {"10": "TIM1_IRQHandler", ...}. Throws tp::Error(bad_input).
std::map<std::uint32_t, std::string> parse_id_names(std::string_view json, std::string_view origin);

}  // namespace tp
