#include "serve/protocol.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <random>

#include "core/json_writer.hpp"

namespace tp::serve {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

ProtocolError bad_parameters(std::string message) {
  return ProtocolError{ErrorCode::invalid_parameters, std::move(message)};
}

// A field that may be absent or null, else a string.
std::optional<ProtocolError> optional_string(object data, std::string_view message_type, std::string_view name,
                                             std::optional<std::string>& out) {
  element value;
  if (data[name].get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
  std::string_view text;
  if (value.get(text) != simdjson::SUCCESS) {
    return bad_parameters(fmt::format("{}.{} must be a string or null", message_type, name));
  }
  out = std::string(text);
  return std::nullopt;
}

// A field that may be absent or null, else an integer 0..2^32-1.
std::optional<ProtocolError> optional_u32(object data, std::string_view message_type, std::string_view name,
                                          std::optional<std::uint32_t>& out) {
  element value;
  if (data[name].get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
  std::uint64_t number = 0;
  if (value.get(number) != simdjson::SUCCESS || number > 0xFFFFFFFFU) {
    return bad_parameters(fmt::format("{}.{} must be an integer from 0 to 4294967295", message_type, name));
  }
  out = static_cast<std::uint32_t>(number);
  return std::nullopt;
}

std::variant<ClientMessage, ProtocolError> parse_connect(object data) {
  ConnectRequest request;
  for (const auto& [name, field] : {std::pair{"probe_selector", &request.probe_selector},
                                    std::pair{"chip", &request.chip}, std::pair{"token", &request.token}}) {
    if (auto error = optional_string(data, "Connect", name, *field)) return *error;
  }
  return request;
}

std::variant<ClientMessage, ProtocolError> parse_start(object data) {
  StartRequest request;
  std::optional<std::uint32_t> mask;
  if (auto error = optional_u32(data, "Start", "allow_mask", mask)) return *error;
  if (!mask) return bad_parameters("Start.allow_mask is required (a 32-bit port mask)");
  request.allow_mask = *mask;
  if (auto error = optional_u32(data, "Start", "baud_rate", request.baud_rate)) return *error;
  if (request.baud_rate && *request.baud_rate == 0) return bad_parameters("Start.baud_rate must not be 0");
  return request;
}

std::variant<ClientMessage, ProtocolError> parse_set_filter(object data) {
  SetFilterRequest request;
  if (auto error = optional_u32(data, "SetFilter", "port_mask", request.port_mask)) return *error;
  element types;
  if (data["event_types"].get(types) == simdjson::SUCCESS && !types.is_null()) {
    simdjson::dom::array list;
    if (types.get(list) != simdjson::SUCCESS) return bad_parameters("SetFilter.event_types must be an array or null");
    std::vector<std::string> names;
    for (element item : list) {
      std::string_view name;
      if (item.get(name) != simdjson::SUCCESS || name.empty() || name.size() > 64) {
        return bad_parameters("SetFilter.event_types must hold kind names (strings of 1 to 64 characters)");
      }
      names.emplace_back(name);
    }
    request.event_types = std::move(names);
  }
  return request;
}

}  // namespace

std::variant<ClientMessage, ProtocolError> ClientMessageParser::parse(std::string_view text) {
  element root;
  if (const auto error = parser_.parse(text.data(), text.size()).get(root); error != simdjson::SUCCESS) {
    return ProtocolError{ErrorCode::invalid_message, fmt::format("not JSON: {}", simdjson::error_message(error))};
  }
  object message;
  if (root.get(message) != simdjson::SUCCESS) return ProtocolError{ErrorCode::invalid_message, "not a JSON object"};
  std::string_view type;
  if (message["type"].get(type) != simdjson::SUCCESS) {
    return ProtocolError{ErrorCode::invalid_message, "no \"type\" string: expected Connect, Start, Stop or SetFilter"};
  }
  if (type == "Stop") return StopRequest{};
  element data_element;
  object data;
  const bool has_data = message["data"].get(data_element) == simdjson::SUCCESS && !data_element.is_null();
  if (type != "Connect" && type != "Start" && type != "SetFilter") {
    return ProtocolError{ErrorCode::invalid_message,
                         fmt::format("unknown message type \"{}\": expected Connect, Start, Stop or SetFilter", type)};
  }
  if (!has_data || data_element.get(data) != simdjson::SUCCESS) {
    return bad_parameters(fmt::format("{} needs a \"data\" object", type));
  }
  if (type == "Connect") return parse_connect(data);
  if (type == "Start") return parse_start(data);
  return parse_set_filter(data);
}

std::string rfc3339_now() {
  const auto now = std::chrono::system_clock::now();
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const auto seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, millis % 1000);
}

std::string random_uuid() {
  std::random_device device;
  std::mt19937_64 generator((std::uint64_t{device()} << 32U) ^ device());
  std::uint64_t high = generator();
  std::uint64_t low = generator();
  high = (high & ~0xF000ULL) | 0x4000ULL;        // version 4
  low = (low & ~(3ULL << 62U)) | (2ULL << 62U);  // variant 10xx (RFC 4122 4.1.1)
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32U, (high >> 16U) & 0xFFFFU, high & 0xFFFFU,
                     low >> 48U, low & 0xFFFFFFFFFFFFULL);
}

namespace {
void optional_string_field(JsonWriter& json, std::string_view key, const std::optional<std::string>& value) {
  json.key(key);
  if (value) {
    json.string(*value);
  } else {
    json.null();
  }
}

// JSON has no NaN or infinity; rates are finite by construction, this keeps them so.
double finite(double value) {
  return std::isfinite(value) ? value : 0.0;
}
}  // namespace

std::string hello_message(std::string_view server_id, std::string_view timestamp) {
  std::string out;
  JsonWriter json(out);
  json.begin_object().key("type").string("Hello").key("data").begin_object();
  json.key("version").string(protocol_version).key("server_id").string(server_id).key("timestamp").string(timestamp);
  json.end_object().end_object();
  return out;
}

std::string status_message(const StatusInfo& status) {
  std::string out;
  JsonWriter json(out);
  json.begin_object().key("type").string("Status").key("data").begin_object();
  json.key("connected").boolean(status.connected);
  optional_string_field(json, "target", status.target);
  optional_string_field(json, "chip", status.chip);
  optional_string_field(json, "probe", status.probe);
  json.end_object().end_object();
  return out;
}

std::string meta_message(std::string_view ports_map_json, std::optional<std::uint64_t> cpu_hz, bool dwt_available) {
  std::string out;
  JsonWriter json(out);
  json.begin_object().key("type").string("Meta").key("data").begin_object();
  json.key("ports_map").raw(ports_map_json);
  json.key("cpu_hz");
  if (cpu_hz) {
    json.uint(*cpu_hz);
  } else {
    json.null();
  }
  json.key("dwt_available").boolean(dwt_available);
  json.end_object().end_object();
  return out;
}

std::string stats_message(std::string_view timestamp, const StatsInfo& stats) {
  std::string out = fmt::format(
      R"({{"type":"Stats","data":{{"timestamp":"{}","events_per_sec":{:.1f},"bytes_per_sec":{:.1f},"drop_rate":{:.6f},"cpu_load":)",
      timestamp, finite(stats.events_per_sec), finite(stats.bytes_per_sec), finite(stats.drop_rate));
  out += stats.cpu_load ? fmt::format("{:.4f}", finite(*stats.cpu_load)) : std::string("null");
  out += fmt::format(R"(,"events_total":{},"dropped_total":{},"queued_bytes":{},"offered_total":{})",
                     stats.events_total, stats.dropped_total, stats.queued_bytes, stats.offered_total);
  out += stats.final ? R"(,"final":true}})" : "}}";
  return out;
}

std::string error_message(std::string_view timestamp, std::string_view message, std::optional<ErrorCode> code) {
  std::string out;
  JsonWriter json(out);
  json.begin_object().key("type").string("Error").key("data").begin_object();
  json.key("timestamp").string(timestamp).key("message").string(message).key("code");
  if (code && is_callisto_code(*code)) {
    json.string(error_code_name(*code));
  } else {
    json.null();
  }
  json.end_object().end_object();
  return out;
}

void append_event_message(std::string& out, std::string_view record_line) {
  out += R"({"type":"Event","data":)";
  out += record_line;
  out += '}';
}

void append_itm_message(std::string& out, std::string_view frames_line) {
  out += R"({"type":"Itm","data":)";
  out += frames_line;
  out += '}';
}

}  // namespace tp::serve
