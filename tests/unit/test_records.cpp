#include <doctest/doctest.h>

#include <fstream>
#include <regex>

#include <string>

#include "core/error.hpp"
#include "json/ndjson_reader.hpp"
#include "records/csv_table.hpp"
#include "records/field_path.hpp"
#include "records/record_filter.hpp"
#include "records/record_kinds.hpp"

using namespace tp;

namespace {

// Runs one NDJSON text through a handler, as the tools do; returns the bad-line count.
std::uint64_t each_line(std::string_view text, const NdjsonReader::LineHandler& handler) {
  NdjsonReader reader(handler, nullptr);
  reader.feed(text);
  reader.finish();
  return reader.bad_lines();
}

std::vector<Verdict> judge_all(FilterCriteria criteria, std::string_view text) {
  const RecordFilter filter(std::move(criteria));
  std::vector<Verdict> verdicts;
  each_line(text, [&](NdjsonLine& line) {
    std::string why;
    verdicts.push_back(filter.judge(line.document, why));
    return simdjson::SUCCESS;
  });
  return verdicts;
}

std::string csv_of(std::string_view text, const std::vector<CsvColumn>& columns, TimeFormat time = TimeFormat::raw,
                   std::uint64_t cpu_hz = 0) {
  CsvRowWriter rows(columns, ',', time, cpu_hz);
  OutBuffer out;
  each_line(text, [&](NdjsonLine& line) { return rows.row(line.document, out); });
  return std::string(out.view());
}

}  // namespace

TEST_CASE("dotted paths, pointers and aliases") {
  CHECK(dotted_to_pointer("event.data.message") == "/event/data/message");
  CHECK(dotted_to_pointer("a~b.c/d") == "/a~0b/c~1d");
  CHECK(dotted_to_pointer("event.data.data.0") == "/event/data/data/0");
  CHECK(resolve_field_alias("message") == "event.data.message");
  CHECK(resolve_field_alias("time") == "timestamp");
  CHECK(resolve_field_alias("event.kind") == "event.kind");
}

TEST_CASE("list and condition parsing, with clear errors") {
  const auto ports = parse_port_list("0,3-5,255");
  REQUIRE(ports.size() == 3);
  CHECK(ports[1] == std::pair<std::uint32_t, std::uint32_t>{3, 5});
  CHECK_THROWS_AS(parse_port_list("256"), Error);
  CHECK_THROWS_AS(parse_port_list("5-3"), Error);
  CHECK_THROWS_AS(parse_port_list("x"), Error);
  CHECK_THROWS_AS(parse_port_list(","), Error);
  CHECK(parse_name_list("Text,,Marker") == std::vector<std::string>{"Text", "Marker"});
  const FieldCondition match = parse_match("message=a=b");
  CHECK(match.pointer == "/event/data/message");
  CHECK(match.value == "a=b");
  CHECK_THROWS_AS(parse_match("no-equals"), Error);
  CHECK_THROWS_AS(parse_regex("message=(unclosed"), Error);
}

TEST_CASE("filter verdicts: every criterion, frames lines, bad lines") {
  const std::string text =
      "{\"timestamp\":10,\"port\":0,\"event\":{\"kind\":\"Text\",\"data\":{\"message\":\"boot "
      "ok\"}},\"source\":\"itm\"}\n"
      "{\"timestamp\":20,\"port\":3,\"event\":{\"kind\":\"Counter\",\"data\":{\"counter_id\":1,\"value\":5}}}\n"
      "{\"timestamp\":30,\"frames\":[{\"port\":0,\"data\":[65],\"timestamp\":30}]}\n"
      "{\"timestamp\":40,\"event\":{\"kind\":\"Text\"}}\n"
      "{\"port\":0,\"event\":{\"kind\":\"Text\"}}\n";
  using V = Verdict;
  FilterCriteria kinds;
  kinds.kinds = {"Text"};
  CHECK(judge_all(std::move(kinds), text) == std::vector<V>{V::selected, V::rejected, V::rejected, V::bad, V::bad});
  FilterCriteria frames;
  frames.kinds = {"Itm"};
  CHECK(judge_all(std::move(frames), text)[2] == V::selected);
  FilterCriteria sources;
  sources.sources = {"itm"};
  CHECK(judge_all(std::move(sources), text)[1] == V::rejected);  // no "source" at all
  FilterCriteria window;
  window.since = 20;
  window.until = 30;
  CHECK(judge_all(std::move(window), text) == std::vector<V>{V::rejected, V::selected, V::rejected, V::bad, V::bad});
  const auto conditions = [](bool invert) {
    FilterCriteria criteria;
    criteria.conditions.push_back(parse_regex("message=^boot"));
    criteria.conditions.push_back(parse_match("port=0"));
    criteria.invert = invert;
    return criteria;
  };
  CHECK(judge_all(conditions(false), text)[0] == V::selected);
  CHECK(judge_all(conditions(true), text) == std::vector<V>{V::rejected, V::selected, V::selected, V::bad, V::bad});
  FilterCriteria values;
  values.conditions.push_back(parse_match("event.data.value=5"));
  CHECK(judge_all(std::move(values), text)[1] == V::selected);
}

TEST_CASE("the reader rejects incomplete and trailing JSON before any handler sees it") {
  int handled = 0;
  const auto bad =
      each_line("{\"a\": {\"b\": [1, 2}\n{\"a\":1} tail\n{\"a\":1}\n[1]\n{\"a\":\n", [&](NdjsonLine& line) {
        simdjson::ondemand::value value;
        ++handled;
        return line.document.at_pointer("/zzz").get(value) == simdjson::NO_SUCH_FIELD ? simdjson::SUCCESS
                                                                                      : simdjson::TAPE_ERROR;
      });
  CHECK(handled == 1);
  CHECK(bad == 4);
}

TEST_CASE("CSV: quoting as jq's @csv, missing and null cells, JSON text for objects") {
  const auto columns = parse_columns("time,kind,message,data,event.data.flag");
  const std::string text =
      "{\"timestamp\":1,\"port\":0,\"event\":{\"kind\":\"Text\",\"data\":{\"message\":\"a \\\"q\\\", b\\nc\","
      "\"flag\":true}}}\n"
      "{\"timestamp\":2,\"port\":0,\"event\":{\"kind\":\"IdleEnter\"}}\n"
      "{\"timestamp\":3,\"event\":{\"kind\":\"X\",\"data\":{\"message\":null,\"flag\":false}}}\n";
  CHECK(csv_of(text, columns) ==
        "1,\"Text\",\"a \"\"q\"\", b\nc\",\"{\"\"message\"\":\"\"a \\\"\"q\\\"\", b\\nc\"\",\"\"flag\"\":true}\",true\n"
        "2,\"IdleEnter\",,,\n"
        "3,\"X\",,\"{\"\"message\"\":null,\"\"flag\"\":false}\",false\n");
  OutBuffer header;
  CsvRowWriter(parse_columns("a,b\"c,d;e"), ';', TimeFormat::raw, 0).header(header);
  CHECK(header.view() == "a;\"b\"\"c\";\"d;e\"\n");
}

TEST_CASE("CSV: timestamps in seconds by clock, RFC 3339 for host time") {
  const auto columns = parse_columns("time");
  CHECK(csv_of("{\"timestamp\":1500000000,\"clock\":\"ns\"}\n", columns, TimeFormat::seconds) == "1.500000000\n");
  CHECK(csv_of("{\"timestamp\":2500000,\"clock\":\"us\"}\n", columns, TimeFormat::seconds) == "2.500000000\n");
  CHECK(csv_of("{\"timestamp\":72000000,\"clock\":\"cycles\"}\n", columns, TimeFormat::seconds, 72'000'000) ==
        "1.000000000\n");
  CHECK(csv_of("{\"timestamp\":7,\"clock\":\"cycles\"}\n", columns, TimeFormat::seconds) == "7\n");  // no --cpu-hz
  const std::string wall = csv_of("{\"timestamp\":5,\"clock\":\"us\"}\n", columns, TimeFormat::rfc3339);
  CHECK(wall.size() == std::string("2026-11-21T05:00:00.000000Z\n").size());
  CHECK(wall[10] == 'T');
  CHECK(wall[wall.size() - 2] == 'Z');
}

TEST_CASE("CSV: presets and column errors") {
  CHECK(preset_columns("ekotrace").size() == 9);
  CHECK(preset_columns("ekotrace")[0].header == "session_id");
  CHECK(preset_columns("basic")[3].pointer == "/event/data/message");
  CHECK_THROWS_AS(preset_columns("nope"), Error);
  CHECK_THROWS_AS(parse_columns(","), Error);
  CHECK_THROWS_AS(parse_columns("a="), Error);
}

TEST_CASE("column inference: leaf paths in order of first appearance") {
  ColumnInference inference;
  each_line(
      "{\"timestamp\":1,\"port\":0,\"event\":{\"kind\":\"Text\",\"data\":{\"message\":\"m\"}}}\n"
      "{\"timestamp\":2,\"port\":0,\"event\":{\"kind\":\"Raw\",\"data\":{\"data\":[1,2]}},\"source\":\"itm\"}\n",
      [&](NdjsonLine& line) { return inference.add(line.document); });
  std::vector<std::string> headers;
  for (const auto& column : inference.columns()) headers.push_back(column.header);
  CHECK(headers ==
        std::vector<std::string>{"timestamp", "port", "event.kind", "event.data.message", "event.data.data", "source"});
}

TEST_CASE("record kinds: the list is record.schema.json's, with Itm; case slips found") {
  std::ifstream schema_file(TRACEPIPE_SOURCE_DIR "/lib/records/record.schema.json");
  REQUIRE(schema_file);
  const std::string schema((std::istreambuf_iterator<char>(schema_file)), std::istreambuf_iterator<char>());
  const std::regex kind_const(R"re("kind": \{\s*"const": "(\w+)")re");
  std::vector<std::string_view> from_schema;
  std::vector<std::string> storage;
  for (auto it = std::sregex_iterator(schema.begin(), schema.end(), kind_const); it != std::sregex_iterator(); ++it) {
    storage.push_back((*it)[1].str());
  }
  for (const auto& k : storage) from_schema.push_back(k);
  from_schema.emplace_back("Itm");
  const auto known = tp::known_record_kinds();
  CHECK(std::vector<std::string_view>(known.begin(), known.end()) == from_schema);
  CHECK(tp::is_known_record_kind("TaskSwitch"));
  CHECK_FALSE(tp::is_known_record_kind("text"));
  CHECK(tp::kind_spelled_differently("text") == std::optional<std::string_view>("Text"));
  CHECK(tp::kind_spelled_differently("PCSAMPLE") == std::optional<std::string_view>("PcSample"));
  CHECK_FALSE(tp::kind_spelled_differently("Bogus"));
  CHECK_FALSE(tp::kind_spelled_differently("Tex"));
}
