#include "swo/swo_source.hpp"

#include "core/json_writer.hpp"

namespace tp::swo {

std::string facts_json(const SourceFacts& facts) {
  std::string out;
  JsonWriter json(out);
  json.begin_object();
  json.key("probe").string(facts.probe);
  if (facts.serial) json.key("serial").string(*facts.serial);
  if (facts.baud) json.key("baud").uint(*facts.baud);
  if (facts.cpu_hz) json.key("cpu_hz").uint(*facts.cpu_hz);
  if (facts.target) json.key("target").string(*facts.target);
  json.end_object();
  return out;
}

}  // namespace tp::swo
