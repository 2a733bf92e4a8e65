// The Callisto ITM Viewer protocol (docs/design.md "Peers and their protocols"): the client
// messages parsed and checked against the schema's types, and the server messages built
// with the schema's exact field names. Event and Itm messages wrap record lines as they are.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/error_code.hpp"

namespace tp::serve {

inline constexpr std::string_view protocol_version = "0.1.0";

struct ConnectRequest {
  std::optional<std::string> probe_selector;
  std::optional<std::string> chip;
  std::optional<std::string> token;
};
struct StartRequest {
  std::uint32_t allow_mask = 0;
  std::optional<std::uint32_t> baud_rate;
};
struct StopRequest {};
struct SetFilterRequest {
  std::optional<std::uint32_t> port_mask;
  std::optional<std::vector<std::string>> event_types;
};
using ClientMessage = std::variant<ConnectRequest, StartRequest, StopRequest, SetFilterRequest>;

struct ProtocolError {
  ErrorCode code;
  std::string message;
};

// Parses one client message. Bad JSON, a missing or unknown type -> INVALID_MESSAGE;
// fields of the wrong type or range -> INVALID_PARAMETERS.
class ClientMessageParser {
 public:
  std::variant<ClientMessage, ProtocolError> parse(std::string_view text);

 private:
  simdjson::dom::parser parser_;
};

struct StatusInfo {
  bool connected = false;
  std::optional<std::string> target;
  std::optional<std::string> chip;
  std::optional<std::string> probe;
};

struct StatsInfo {
  double events_per_sec = 0;
  double bytes_per_sec = 0;
  double drop_rate = 0;
  std::optional<double> cpu_load;
  // Extensions (Callisto clients ignore them): totals since the client connected.
  std::uint64_t events_total = 0;
  std::uint64_t dropped_total = 0;
  std::uint64_t queued_bytes = 0;
  // Records this client's filter accepted: sent + dropped + still queued.
  std::uint64_t offered_total = 0;
  // The closing Stats of a stream (its input ended): dropped_total and offered_total are
  // final, and every record of the stream that was not dropped was queued before it.
  bool final = false;
};

// RFC 3339 UTC with milliseconds, e.g. 2026-11-21T07:38:23.123Z.
std::string rfc3339_now();
// A random (version 4) UUID.
std::string random_uuid();

std::string hello_message(std::string_view server_id, std::string_view timestamp);
std::string status_message(const StatusInfo& status);
std::string meta_message(std::string_view ports_map_json, std::optional<std::uint64_t> cpu_hz, bool dwt_available);
std::string stats_message(std::string_view timestamp, const StatsInfo& stats);
// An Error message; its code is null when there is none or it is not one of Callisto's
// (the only ones a Callisto client knows).
std::string error_message(std::string_view timestamp, std::string_view message, std::optional<ErrorCode> code);

// {"type":"Event","data":<record>} and {"type":"Itm","data":<frames line>}, appended.
void append_event_message(std::string& out, std::string_view record_line);
void append_itm_message(std::string& out, std::string_view frames_line);

}  // namespace tp::serve
