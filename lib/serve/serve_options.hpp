// What trace-serve is told (its flags, as ServeOptions) and what it counts (ServeStats):
// shared by the server, its sessions and command mode, below all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "serve/record_symbols.hpp"

namespace tp::serve {

inline constexpr std::uint16_t default_port = 9229;

struct ServeOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = default_port;  // 0: any free port (logged)
  std::string input = "-";            // stdin mode: where records come from
  std::vector<std::string> command;   // command mode when not empty

  std::string ports_map_json;  // Meta.ports_map
  std::optional<std::uint64_t> cpu_hz;
  std::optional<bool> dwt_available;  // unset: true once the records carry cycle timestamps
  std::optional<std::string> target;
  std::optional<std::string> chip;
  std::optional<std::string> probe;
  std::uint32_t default_baud = 2'000'000;  // {baud_rate} when Start.baud_rate is null

  std::optional<std::string> token;
  std::vector<std::string> allowed_origins;
  std::size_t max_clients = 256;
  std::size_t max_message_size = 64U << 10U;  // client messages
  double max_message_rate = 50;               // client messages per second (burst: twice that)
  std::size_t queue_limit = 1U << 20U;        // per-client send queue of records, bytes
  double stats_interval_s = 1.0;
  bool exit_on_eof = false;
  std::shared_ptr<const RecordSymbols> symbols;  // --elf
  double top_interval_s = 0;                     // trace-top's snapshots for the viewer (0: none)
};

struct ServeStats {
  std::uint64_t records_read = 0;  // good records read
  std::uint64_t bad_lines = 0;
  std::uint64_t clients = 0;
  std::uint64_t rejected_clients = 0;
  std::uint64_t wrong_tokens = 0;
  std::uint64_t events_sent = 0;
  std::uint64_t events_dropped = 0;
  std::uint64_t commands_started = 0;
};

}  // namespace tp::serve
