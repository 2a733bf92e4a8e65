#include "ports/port_map.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/number.hpp"
#include "core/text_file.hpp"
#include "ports/user_format.hpp"

namespace tp {
namespace {

[[noreturn]] void fail(std::string_view origin, std::string_view what) {
  throw Error(ExitCode::bad_input, fmt::format("{}: {}", origin, what));
}

std::uint32_t parse_u32_key(std::string_view key, std::string_view origin) {
  const auto value = parse_whole_number<std::uint32_t>(key);
  if (!value) fail(origin, fmt::format("'{}' is not a number", key));
  return *value;
}

DecoderType parse_decoder_name(std::string_view name, std::string_view origin) {
  const std::optional<DecoderType> type = decoder_type_named(name);
  if (type == DecoderType::user) fail(origin, "decoder User needs a format: {\"User\": {\"format\": \"%u\"}}");
  if (!type) fail(origin, fmt::format("unknown decoder '{}' ({})", name, fmt::join(decoder_type_names, ", ")));
  return *type;
}

std::map<std::uint32_t, std::string> names_from(simdjson::dom::object object, std::string_view origin) {
  std::map<std::uint32_t, std::string> names;
  for (const auto field : object) {
    std::string_view name;
    if (field.value.get_string().get(name) != simdjson::SUCCESS) {
      fail(origin, fmt::format("name for id {} must be a string", std::string_view(field.key)));
    }
    names[parse_u32_key(field.key, origin)] = std::string(name);
  }
  return names;
}

PortConfig parse_port(simdjson::dom::element element, std::string_view origin) {
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) fail(origin, "must be an object");
  PortConfig config;
  std::string_view text;
  if (object["name"].get_string().get(text) == simdjson::SUCCESS) config.name = text;
  bool enabled = true;
  if (object["enabled"].get_bool().get(enabled) == simdjson::SUCCESS) config.enabled = enabled;
  simdjson::dom::element decoder;
  if (object["decoder"].get(decoder) != simdjson::SUCCESS) fail(origin, "missing \"decoder\"");
  if (decoder.get_string().get(text) == simdjson::SUCCESS) {
    config.decoder = parse_decoder_name(text, origin);
  } else {
    std::string_view format;
    if (decoder["User"]["format"].get_string().get(format) != simdjson::SUCCESS) {
      fail(origin, "decoder must be a name or {\"User\": {\"format\": \"...\"}}");
    }
    config.decoder = DecoderType::user;
    config.format = format;
  }
  if (object["value_format"].get_string().get(text) == simdjson::SUCCESS) {
    if (config.decoder != DecoderType::text) fail(origin, "value_format only applies to Text decoders");
    config.format = text;
  }
  simdjson::dom::object names;
  if (object["names"].get_object().get(names) == simdjson::SUCCESS) config.names = names_from(names, origin);
  // A format the decoders cannot use is the map's error, said with the port it is on (not
  // later, when the decoders are made).
  if (!config.format.empty()) {
    try {
      (void)UserFormat::parse(config.format);
    } catch (const Error& e) {
      fail(origin, e.what());
    }
  }
  return config;
}

}  // namespace

PortMap PortMap::standard() {
  PortMap map;
  map.set(0, PortConfig{"Console", DecoderType::text, {}, true, {}});
  map.set(1, PortConfig{"RTOS Events", DecoderType::task_isr, {}, true, {}});
  map.set(2, PortConfig{"Markers", DecoderType::marker, {}, true, {}});
  map.set(3, PortConfig{"Counters", DecoderType::counter, {}, true, {}});
  for (std::uint16_t port = 4; port < 8; ++port) map.set(port, PortConfig{"User", DecoderType::text, {}, true, {}});
  map.set_default(PortConfig{"", DecoderType::raw, {}, true, {}});
  return map;
}

PortMap PortMap::parse(std::string_view json, std::string_view origin) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const auto error = parser.parse(json.data(), json.size()).get(root); error != simdjson::SUCCESS) {
    fail(origin, fmt::format("not valid JSON ({})", simdjson::error_message(error)));
  }
  simdjson::dom::object ports;
  if (root["data"]["ports_map"].get_object().get(ports) != simdjson::SUCCESS &&
      root["ports_map"].get_object().get(ports) != simdjson::SUCCESS &&
      root.get_object().get(ports) != simdjson::SUCCESS) {
    fail(origin, "expected a ports_map object");
  }
  PortMap map;
  map.set_default(PortConfig{"", DecoderType::raw, {}, true, {}});
  for (const auto field : ports) {
    const std::string_view key = field.key;
    const std::string where = fmt::format("{}: port \"{}\"", origin, key);
    if (key == "default") {
      map.set_default(parse_port(field.value, where));
      continue;
    }
    const std::uint32_t port = parse_u32_key(key, where);
    if (port >= port_count) fail(where, "port must be 0-255");
    PortConfig config = parse_port(field.value, where);
    std::uint64_t declared = 0;
    if (field.value["port"].get_uint64().get(declared) == simdjson::SUCCESS && declared != port) {
      fail(where, fmt::format("\"port\": {} does not match its key", declared));
    }
    map.set(static_cast<std::uint16_t>(port), std::move(config));
  }
  return map;
}

PortMap PortMap::load(const std::string& path) {
  return parse(read_text_file(path), path);
}

void PortMap::add_isr_names(const std::map<std::uint32_t, std::string>& names) {
  for (auto& entry : ports_) {
    if (entry && entry->decoder == DecoderType::task_isr) {
      for (const auto& [id, name] : names) entry->names.try_emplace(id, name);
    }
  }
  if (default_.decoder == DecoderType::task_isr) {
    for (const auto& [id, name] : names) default_.names.try_emplace(id, name);
  }
}

std::string PortMap::to_json() const {
  std::string out;
  JsonWriter json(out);
  json.begin_object();
  for (std::size_t port = 0; port < port_count; ++port) {
    if (!ports_[port]) continue;
    const PortConfig& config = *ports_[port];
    json.key(std::to_string(port)).begin_object();
    json.key("port").uint(port);
    json.key("name").string(config.name);
    json.key("decoder");
    if (config.decoder == DecoderType::user) {
      json.begin_object().key("User").begin_object().key("format").string(config.format).end_object().end_object();
    } else {
      json.string(decoder_name(config.decoder));
    }
    json.key("enabled").boolean(config.enabled);
    json.end_object();
  }
  json.end_object();
  return out;
}

std::map<std::uint32_t, std::string> parse_id_names(std::string_view json, std::string_view origin) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(json.data(), json.size()).get_object().get(object) != simdjson::SUCCESS) {
    fail(origin, "expected a JSON object {\"id\": \"name\", ...}");
  }
  return names_from(object, origin);
}

}  // namespace tp
