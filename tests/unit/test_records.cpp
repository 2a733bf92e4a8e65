#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>

#include <string>

#include "core/error.hpp"
#include "json/ndjson_reader.hpp"
#include "query/csv_sink.hpp"
#include "query/csv_table.hpp"
#include "query/field_path.hpp"
#include "query/record_filter.hpp"
#include "records/fleet_fields.hpp"
#include "records/record_check.hpp"
#include "records/record_shapes.hpp"
#include "records/vocabulary.hpp"

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
    verdicts.push_back(filter.judge(line.root, why));
    return simdjson::SUCCESS;
  });
  return verdicts;
}

std::string csv_of(std::string_view text, const std::vector<CsvColumn>& columns, TimeFormat time = TimeFormat::raw,
                   std::uint64_t cpu_hz = 0) {
  CsvRowWriter rows(columns, ',', time, cpu_hz);
  OutBuffer out;
  each_line(text, [&](NdjsonLine& line) { return rows.row(line.root, out); });
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
  CHECK(match.field.pointer() == "/event/data/message");
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
        simdjson::dom::element value;
        ++handled;
        return line.root.at_pointer("/zzz").get(value) == simdjson::NO_SUCH_FIELD ? simdjson::SUCCESS
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
  CHECK(preset_columns("basic")[3].field.pointer() == "/event/data/message");
  CHECK_THROWS_AS(preset_columns("nope"), Error);
  CHECK_THROWS_AS(parse_columns(","), Error);
  CHECK_THROWS_AS(parse_columns("a="), Error);
}

TEST_CASE("column inference: leaf paths in order of first appearance") {
  ColumnInference inference;
  each_line(
      "{\"timestamp\":1,\"port\":0,\"event\":{\"kind\":\"Text\",\"data\":{\"message\":\"m\"}}}\n"
      "{\"timestamp\":2,\"port\":0,\"event\":{\"kind\":\"Raw\",\"data\":{\"data\":[1,2]}},\"source\":\"itm\"}\n",
      [&](NdjsonLine& line) {
        inference.add(line.root);
        return simdjson::SUCCESS;
      });
  std::vector<std::string> headers;
  for (const auto& column : inference.columns()) headers.push_back(column.header);
  CHECK(headers ==
        std::vector<std::string>{"timestamp", "port", "event.kind", "event.data.message", "event.data.data", "source"});
}

TEST_CASE("record kinds: the list is record.schema.json's, with Itm; case slips found") {
  std::ifstream schema_file(TRACEPIPE_SOURCE_DIR "/schemas/record.schema.json");
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

namespace {

// The names of a top-level enum of record.schema.json ("source", "clock"), in its order.
std::vector<std::string> schema_enum(std::string_view property) {
  std::ifstream schema_file(TRACEPIPE_SOURCE_DIR "/schemas/record.schema.json");
  REQUIRE(schema_file);
  const std::string schema((std::istreambuf_iterator<char>(schema_file)), std::istreambuf_iterator<char>());
  simdjson::dom::parser parser;
  const simdjson::dom::element root = parser.parse(schema);
  std::vector<std::string> names;
  for (const auto name : root["properties"][property]["enum"].get_array()) {
    names.emplace_back(std::string_view(name.get_string()));
  }
  return names;
}

template <typename Enum, std::size_t count>
void check_names_round_trip(const std::array<std::string_view, count>& names,
                            std::optional<Enum> (*named)(std::string_view) noexcept) {
  for (std::size_t i = 0; i < count; ++i) CHECK(named(names[i]) == static_cast<Enum>(i));
  CHECK_FALSE(named("Bogus"));
}

}  // namespace

TEST_CASE("vocabulary: sources and clocks are record.schema.json's, in its order, and look up both ways") {
  CHECK(schema_enum("source") ==
        std::vector<std::string>(tp::record_source_names.begin(), tp::record_source_names.end()));
  CHECK(schema_enum("clock") == std::vector<std::string>(tp::record_clock_names.begin(), tp::record_clock_names.end()));
  check_names_round_trip<tp::RecordSource>(tp::record_source_names, tp::record_source_named);
  check_names_round_trip<tp::RecordClock>(tp::record_clock_names, tp::record_clock_named);
  CHECK(tp::source_name(tp::RecordSource::trace_ship) == "trace-ship");
  CHECK(tp::clock_name(tp::RecordClock::cycles) == "cycles");
  CHECK_FALSE(tp::record_clock_named("Cycles"));
}

TEST_CASE("vocabulary: every name looks up to its constant and back; the enums the schema lists are its") {
  for (std::size_t i = 0; i < tp::record_kind_names.size(); ++i) {
    const auto kind = static_cast<tp::RecordKind>(i);
    CHECK(tp::record_kind_named(tp::kind_name(kind)) == kind);
  }
  CHECK_FALSE(tp::record_kind_named("Itm"));  // a frames line has no kind
  CHECK_FALSE(tp::record_kind_named("text"));
  for (std::size_t i = 0; i < tp::decoder_type_names.size(); ++i) {
    const auto type = static_cast<tp::DecoderType>(i);
    CHECK(tp::decoder_type_named(tp::decoder_name(type)) == type);
  }
  CHECK_FALSE(tp::decoder_type_named("Bogus"));
  for (std::size_t i = 0; i < tp::exception_action_names.size(); ++i) {
    const auto action = static_cast<tp::ExceptionAction>(i);
    CHECK(tp::exception_action_named(tp::action_name(action)) == action);
  }
  CHECK(tp::action_name(tp::ExceptionAction::enter) == "enter");  // the DWT packet's function 1 (D4.3.2)
  CHECK(tp::type_name(tp::DataTraceType::write) == "write");
  // The server's schema offers Callisto's decoders: each is one of ours.
  std::ifstream server_file(TRACEPIPE_SOURCE_DIR "/schemas/server-message.schema.json");
  REQUIRE(server_file);
  const std::string server((std::istreambuf_iterator<char>(server_file)), std::istreambuf_iterator<char>());
  simdjson::dom::parser parser;
  const simdjson::dom::element root = parser.parse(server);
  std::size_t decoders = 0;
  const std::function<void(simdjson::dom::element)> visit = [&](simdjson::dom::element node) {
    if (node.is_array()) {
      for (const auto item : node.get_array()) visit(item);
      return;
    }
    if (!node.is_object()) return;
    for (const auto member : node.get_object()) {
      if (member.key == "decoder") {
        for (const auto choice : member.value["oneOf"].get_array()) {
          simdjson::dom::array names;
          if (choice["enum"].get(names) != simdjson::SUCCESS) continue;
          for (const auto name : names) {
            CHECK(tp::decoder_type_named(name.get_string().value()).has_value());
            ++decoders;
          }
        }
      }
      visit(member.value);
    }
  };
  visit(root);
  CHECK(decoders >= 4);
}

namespace {

// A temporary file for a BatchedWriter, removed afterwards.
struct TempFile {
  std::string path;
  TempFile() {
    char name[] = "/tmp/tracepipe-csv-XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = name;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  TempFile(TempFile&&) = delete;
  TempFile& operator=(TempFile&&) = delete;
  ~TempFile() { std::remove(path.c_str()); }
  [[nodiscard]] std::string text() const {
    std::ifstream in(path);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
  }
};

}  // namespace

TEST_CASE("CSV sink: lines wait for inferred columns; a waiting line that fails is reported, not dropped") {
  TempFile file;
  std::vector<std::pair<std::uint64_t, std::string>> bad;
  {
    BatchedWriter writer = BatchedWriter::open(file.path, false);
    CsvOptions options;
    options.infer_lines = 3;
    CsvSink sink(options, writer, [&](std::uint64_t number, std::string_view why) { bad.emplace_back(number, why); });
    simdjson::dom::parser parser;
    const auto feed = [&](std::uint64_t number, std::string_view json, std::string_view text) {
      const simdjson::dom::object root = parser.parse(json).get_object().value();
      NdjsonLine line{root, text, number, {}};
      CHECK(sink.on_line(line) == simdjson::SUCCESS);
    };
    const std::string_view idle = R"({"timestamp":1,"port":0,"event":{"kind":"IdleEnter"}})";
    const std::string_view exit = R"({"timestamp":2,"port":1,"event":{"kind":"IdleExit"}})";
    const std::string_view counter =
        R"({"timestamp":3,"port":2,"event":{"kind":"Counter","data":{"counter_id":1,"value":4}}})";
    const std::string_view late = R"({"timestamp":4,"port":3,"event":{"kind":"IdleEnter"}})";
    feed(1, idle, idle);
    // Its text (what is kept while it waits) is cut: it cannot become a row when the
    // columns are known, and must be reported with its own line number.
    feed(2, exit, exit.substr(0, 15));
    feed(3, counter, counter);
    feed(4, late, late);
    sink.finish(Logger{});
    writer.flush();
  }
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].first == 2);
  CHECK_FALSE(bad[0].second.empty());
  CHECK(file.text() ==
        "timestamp,port,event.kind,event.data.counter_id,event.data.value\n"
        "1,0,\"IdleEnter\",,\n3,2,\"Counter\",1,4\n4,3,\"IdleEnter\",,\n");
}

TEST_CASE("CSV sink: the header goes only into an empty output; bad options are refused") {
  TempFile file;
  CsvOptions options;
  options.columns = "port";
  const auto write_one = [&](bool append) {
    BatchedWriter writer = BatchedWriter::open(file.path, append);
    CsvSink sink(options, writer, [](std::uint64_t, std::string_view) { FAIL("no bad line expected"); });
    simdjson::dom::parser parser;
    const std::string_view record = R"({"timestamp":1,"port":7,"event":{"kind":"IdleEnter"}})";
    const simdjson::dom::object root = parser.parse(record).get_object().value();
    NdjsonLine line{root, record, 1, {}};
    CHECK(sink.on_line(line) == simdjson::SUCCESS);
    sink.finish(Logger{});
    writer.flush();
  };
  write_one(false);
  write_one(true);
  CHECK(file.text() == "port\n7\n7\n");
  write_one(false);  // truncated: a new file again
  CHECK(file.text() == "port\n7\n");
  options.preset = "basic";
  CHECK_THROWS_AS(check_csv_options(options), Error);
  CHECK_THROWS_AS((void)parse_time_format("hours"), Error);
  CHECK(parse_time_format("seconds") == TimeFormat::seconds);
}

namespace {

// The validator's verdict on one line: "" for a good one, else the problem.
std::string check(std::string_view line) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(line).get(root) != simdjson::SUCCESS) return "unparsable";
  if (!root.is_object()) return "not a JSON object";
  std::string problem;
  const auto checked = check_record_line(root.get_object().value(), problem);
  if (checked) {
    CHECK(problem.empty());
    return "";
  }
  CHECK_FALSE(problem.empty());
  return problem;
}

}  // namespace

TEST_CASE("record check: the rules are record.schema.json's, kind by kind and field by field") {
  std::ifstream schema_file(TRACEPIPE_SOURCE_DIR "/schemas/record.schema.json");
  REQUIRE(schema_file);
  const std::string text((std::istreambuf_iterator<char>(schema_file)), std::istreambuf_iterator<char>());
  simdjson::dom::parser parser;
  simdjson::dom::object definitions = parser.parse(text)["definitions"].get_object();
  const auto rules = record_kind_rules();
  std::size_t kinds = 0;
  for (const auto member : definitions) {
    const std::string_view kind = member.key;
    const simdjson::dom::element definition = member.value;
    REQUIRE(kinds < rules.size());
    const KindRule& rule = rules[kinds++];
    CAPTURE(kind);
    CHECK(rule.kind == kind);
    bool has_data = false;
    for (auto required : definition["required"].get_array())
      has_data = has_data || required.get_string().value() == "data";
    CHECK(rule.has_data == has_data);
    simdjson::dom::object data;
    if (definition["properties"]["data"].get(data) != simdjson::SUCCESS) {
      CHECK(rule.fields.empty());
      continue;
    }
    std::vector<std::string_view> required;
    for (auto name : data["required"].get_array()) required.push_back(name.get_string().value());
    std::size_t fields = 0;
    for (const auto field_member : data["properties"].get_object()) {
      const std::string_view name = field_member.key;
      const simdjson::dom::element property = field_member.value;
      REQUIRE(fields < rule.fields.size());
      const FieldRule& field = rule.fields[fields++];
      CAPTURE(name);
      CHECK(field.name == name);
      CHECK(field.required == (std::find(required.begin(), required.end(), name) != required.end()));
      std::vector<std::string_view> types;
      simdjson::dom::element type = property["type"].value_unsafe();
      if (property["type"].error() == simdjson::SUCCESS) {
        if (type.is_array()) {
          for (auto t : type.get_array()) types.push_back(t.get_string().value());
        } else {
          types.push_back(type.get_string().value());
        }
      }
      CHECK(field.nullable == (std::find(types.begin(), types.end(), "null") != types.end()));
      simdjson::dom::array values;
      if (property["enum"].get(values) == simdjson::SUCCESS) {
        std::vector<std::string_view> strings;
        std::vector<std::uint64_t> integers;
        for (auto value : values) {
          if (value.is_string()) strings.push_back(value.get_string().value());
          if (value.is_uint64() || value.is_int64()) integers.push_back(value.get_uint64().value());
        }
        CHECK(std::vector<std::string_view>(field.strings.begin(), field.strings.end()) == strings);
        CHECK(std::vector<std::uint64_t>(field.integers.begin(), field.integers.end()) == integers);
        CHECK((field.type == (strings.empty() ? FieldType::integer_enum : FieldType::string_enum)));
        continue;
      }
      const std::string_view main_type = types.empty() ? "" : types.front();
      if (main_type == "integer") {
        CHECK(field.type == FieldType::u64);
        std::uint64_t max = ~std::uint64_t{0};
        if (property["maximum"].get(max) != simdjson::SUCCESS) max = ~std::uint64_t{0};
        CHECK(field.max == max);
      } else if (main_type == "string") {
        CHECK(field.type == FieldType::string);
      } else if (main_type == "boolean") {
        CHECK(field.type == FieldType::boolean);
      } else if (main_type == "number") {
        double minimum = -1;
        const bool at_least_zero = property["minimum"].get(minimum) == simdjson::SUCCESS && minimum == 0;
        CHECK(field.type == (at_least_zero ? FieldType::number : FieldType::real));
      } else {
        CHECK(main_type == "array");
        std::uint64_t item_max = ~std::uint64_t{0};
        if (property["items"]["maximum"].get(item_max) != simdjson::SUCCESS) item_max = ~std::uint64_t{0};
        std::uint64_t max_items = ~std::uint64_t{0};
        if (property["maxItems"].get(max_items) != simdjson::SUCCESS) max_items = ~std::uint64_t{0};
        CHECK(property["items"]["type"].get_string().value() == "integer");
        if (item_max == 255) {
          CHECK(field.type == FieldType::bytes);
        } else {
          CHECK(field.type == FieldType::u64_array);
          CHECK(field.max == item_max);
          CHECK(field.max_items == max_items);
        }
      }
    }
    CHECK(fields == rule.fields.size());
  }
  CHECK(kinds == rules.size());
}

// trace-serve --top-interval's snapshot records: their load series and durations histogram
// (integer arrays) and the figures beside them.
TEST_CASE("record check: a snapshot's load series and histogram are arrays of unsigned integers, bounded") {
  const auto handler = [](std::string_view extra) {
    return check(
        R"({"timestamp":9,"port":0,"event":{"kind":"TopHandler","data":{"source":"isr","number":3,"name":null,)"
        R"("count":2,"total":7,"min":3,"avg":3.5,"max":4,"max_nesting":1,"share":0.1,"uncertain":0)" +
        std::string(extra) + R"(}},"source":"trace-top","clock":"cycles"})");
  };
  const auto task = [](std::string_view extra) {
    return check(
        R"({"timestamp":9,"port":0,"event":{"kind":"TopTask","data":{"task":null,"name":"idle","time":5,"share":0.5,)"
        R"("uncertain_time":0)" +
        std::string(extra) + R"(}},"source":"trace-top","clock":"cycles"})");
  };
  CHECK(handler("").empty());  // trace-top's own: no series
  CHECK(handler(R"(,"load_width":64,"load_first":2,"load":[0,7,18446744073709551615],"hist_first":3,"hist":[1,0,1],)"
                R"("p50":3,"p99":4,"worst_start":100,"worst_end":104)")
            .empty());
  CHECK(task(R"(,"load_width":1,"load_first":0,"load":[])").empty());
  std::string full_load = R"(,"load":[0)";
  for (int i = 1; i < 1024; ++i) full_load += ",1";
  CHECK(task(full_load + "]").empty());     // LoadSeries::max_bins
  CHECK(!task(full_load + ",1]").empty());  // one more
  std::string full_hist = R"(,"hist":[0)";
  for (int i = 1; i < 496; ++i) full_hist += ",1";
  CHECK(handler(full_hist + "]").empty());  // DurationHistogram::bucket_count
  CHECK(!handler(full_hist + ",1]").empty());
  for (const std::string_view bad :
       {R"("7")", "7", "null", R"({"0":1})", "[-1]", "[1.5]", R"(["1"])", "[true]", "[null]", "[[1]]"}) {
    CAPTURE(bad);
    CHECK(task(R"(,"load":)" + std::string(bad)).find(R"("load" is not what the record schema says)") !=
          std::string::npos);
    CHECK(handler(R"(,"hist":)" + std::string(bad)).find(R"("hist" is not what the record schema says)") !=
          std::string::npos);
  }
  CHECK(!task(R"(,"load":[18446744073709551616])").empty());  // past u64: simdjson refuses the line
  CHECK(handler(R"(,"hist_first":496)").find(R"("hist_first" is not)") != std::string::npos);  // past the last bucket
  for (const std::string_view field : {"load_width", "load_first", "p50", "p99", "worst_start", "worst_end"}) {
    CAPTURE(field);
    CHECK(handler(R"(,")" + std::string(field) + R"(":-1)").find("is not what the record schema says") !=
          std::string::npos);
    CHECK(handler(R"(,")" + std::string(field) + R"(":[1])").find("is not what the record schema says") !=
          std::string::npos);
  }
}

TEST_CASE("record check: good records and frames lines pass, each broken rule is named") {
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"hi"}},"source":"itm"})").empty());
  CHECK(check(R"({"event":{"data":{"message":"hi"},"kind":"Text"},"port":3,"timestamp":1})").empty());  // any order
  CHECK(check(R"({"timestamp":1,"port":255,"event":{"kind":"IdleEnter"},"clock":"cycles"})").empty());
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Marker","data":{"id":7,"name":null}}})").empty());
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Overflow","data":{}}})").empty());
  CHECK(
      check(R"({"timestamp":1,"port":0,"event":{"kind":"ThreadStat","data":{"name":"main","prio":1,"state":"CURRENT",)"
            R"("stack_begin":1,"stack_end":2,"stack_size":null,"stack_used":null,"stack_percent":null}}})")
          .empty());
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"SomeoneElses","data":{"x":[1]}},"extra":{}})").empty());
  CHECK(check(R"({"timestamp":5,"frames":[{"port":40,"data":[1,2],"timestamp":5}],"clock":"us"})").empty());

  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{}}})").find("without \"message\"") !=
        std::string::npos);
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Text"}})").find("without \"data\"") != std::string::npos);
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Marker","data":{"id":4294967296}}})").find("\"id\"") !=
        std::string::npos);
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Exception","data":{"number":3,"name":"HardFault",)"
              R"("action":"leave"}}})")
            .find("\"action\"") != std::string::npos);
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Raw","data":{"data":[256]}}})").find("\"data\"") !=
        std::string::npos);
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Itm"}})").find("reserved") != std::string::npos);
  CHECK(check(R"({"timestamp":1,"port":256,"event":{"kind":"IdleEnter"}})").find("\"port\"") != std::string::npos);
  CHECK(check(R"({"timestamp":-1,"port":0,"event":{"kind":"IdleEnter"}})").find("\"timestamp\"") != std::string::npos);
  CHECK(check(R"({"port":0,"event":{"kind":"IdleEnter"}})") == "no \"timestamp\"");
  CHECK(check(R"({"timestamp":1,"event":{"kind":"IdleEnter"}})") == "a record without \"port\"");
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"IdleEnter"},"clock":"minutes"})").find("clock") !=
        std::string::npos);
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"IdleEnter"},"source":1})").find("source") !=
        std::string::npos);
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":7}})").find("kind") != std::string::npos);
  CHECK(check(R"({"timestamp":5,"frames":[{"port":1,"data":[1,2,3,4,5],"timestamp":5}]})").find("data bytes") !=
        std::string::npos);
  CHECK(check(R"({"timestamp":5,"frames":[{"port":1,"data":[1]}]})").find("timestamp") != std::string::npos);
  CHECK(check(R"({"timestamp":5})").find("neither") != std::string::npos);
  CHECK(check(R"([1,2])") == "not a JSON object");
  // Two events (or ports, ...): one consumer would read the first, another the last.
  CHECK(
      check(
          R"({"timestamp":1,"port":0,"event":{"kind":"IdleEnter"},"event":{"kind":"Text","data":{"message":"x"}}})") ==
      "\"event\" appears twice");
  CHECK(check(R"({"timestamp":1,"port":0,"port":1,"event":{"kind":"IdleEnter"}})") == "\"port\" appears twice");
}

namespace {

// What the full check says of one line (its kind, clock, port, timestamp, source), or "bad".
std::string full_verdict(std::string_view line) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(line);
  simdjson::dom::object root;
  std::string problem;
  if (parser.parse(padded).get_object().get(root) != simdjson::SUCCESS) return "bad";
  const auto checked = check_record_line(root, problem);
  if (!checked) return "bad";
  return fmt::format("{} {} {} {} {}", checked->kind, checked->clock, checked->port, checked->timestamp,
                     checked->source ? *checked->source : "-");
}

std::string quick_verdict(RecordShapes& shapes, std::string_view line) {
  const CheckedLine* checked = shapes.match(line);
  if (checked == nullptr) return "no match";
  return fmt::format("{} {} {} {} {}", checked->kind, checked->clock, checked->port, checked->timestamp,
                     checked->source ? *checked->source : "-");
}

}  // namespace

TEST_CASE("record shapes: a learnt shape reads later lines as the full check does") {
  RecordShapes shapes;
  const std::string text = R"({"timestamp":9759,"port":0,"event":{"kind":"Text","data":{"message":"[1] task 2"}},)"
                           R"("source":"itm","clock":"cycles"})";
  CHECK(quick_verdict(shapes, text) == "no match");
  REQUIRE(shapes.learn(text));
  CHECK(shapes.shapes() == 1);
  const std::vector<std::string> same_shape = {
      text,
      R"({"timestamp":18446744073709551615,"port":255,"event":{"kind":"Text","data":{"message":""}},"source":"dwt","clock":"cycles"})",
      R"({"timestamp":0,"port":7,"event":{"kind":"Text","data":{"message":"esc \" \\ \/ \b\f\n\r\t \u00e9 \u20ac"}},"source":"x y","clock":"cycles"})",
      "{\"timestamp\":1,\"port\":1,\"event\":{\"kind\":\"Text\",\"data\":{\"message\":\"caf\xc3\xa9 \xe2\x82\xac\"}},"
      "\"source\":\"itm\",\"clock\":\"cycles\"}",
  };
  for (const std::string& line : same_shape) {
    CAPTURE(line);
    CHECK(quick_verdict(shapes, line) != "no match");
    CHECK(quick_verdict(shapes, line) == full_verdict(line));
  }
  // Each is a different value or form than the slot vouches for: the full check decides.
  const std::vector<std::string> left_to_full_check = {
      R"({"timestamp":18446744073709551616,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":1,"port":256,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":01,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":-1,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":1.0,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":1e3,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"bad \x"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"\ud83d\ude00"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"\u12"}},"source":"itm","clock":"cycles"})",
      "{\"timestamp\":1,\"port\":0,\"event\":{\"kind\":\"Text\",\"data\":{\"message\":\"tab\tin\"}},\"source\":\"itm\","
      "\"clock\":\"cycles\"}",
      "{\"timestamp\":1,\"port\":0,\"event\":{\"kind\":\"Text\",\"data\":{\"message\":\"\xc3\x28\"}},\"source\":"
      "\"itm\","
      "\"clock\":\"cycles\"}",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"i\"tm","clock":"cycles"})",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"ns"})",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"} )",
      R"({"timestamp":1, "port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"})",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles")",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"x)",
      R"({"timestamp":1,"port":0,"event":{"kind":"Text","data":{"message":"x"}},"source":"itm","clock":"cycles"}})",
  };
  for (const std::string& line : left_to_full_check) {
    CAPTURE(line);
    CHECK(quick_verdict(shapes, line) == "no match");
  }
}

TEST_CASE("record shapes: slots by the kind's rules; nulls, enums and other producers' fields") {
  RecordShapes shapes;
  const auto learn_and_read = [&](std::string_view learnt, std::string_view later) {
    CAPTURE(learnt);
    CAPTURE(later);
    REQUIRE(shapes.learn(learnt));
    const std::string quick = quick_verdict(shapes, later);
    CHECK(quick == full_verdict(later));
    return quick != "no match";
  };
  // A nullable field: null is part of the shape, a name is another shape.
  CHECK(learn_and_read(
      R"({"timestamp":1,"port":1,"event":{"kind":"IsrEnter","data":{"isr_id":3,"name":null}}})",
      R"({"timestamp":2,"port":1,"event":{"kind":"IsrEnter","data":{"isr_id":4294967295,"name":null}}})"));
  CHECK(
      quick_verdict(
          shapes, R"({"timestamp":2,"port":1,"event":{"kind":"IsrEnter","data":{"isr_id":4294967296,"name":null}}})") ==
      "no match");
  CHECK(quick_verdict(shapes,
                      R"({"timestamp":2,"port":1,"event":{"kind":"IsrEnter","data":{"isr_id":3,"name":"SysTick"}}})") ==
        "no match");
  CHECK(learn_and_read(R"({"timestamp":2,"port":1,"event":{"kind":"IsrEnter","data":{"isr_id":3,"name":"SysTick"}}})",
                       R"({"timestamp":2,"port":1,"event":{"kind":"IsrEnter","data":{"isr_id":3,"name":"PendSV"}}})"));
  // Enumerations are literal: another action is another shape.
  CHECK(learn_and_read(
      R"({"timestamp":7,"port":0,"event":{"kind":"Exception","data":{"number":15,"name":"SysTick","action":"enter"}},"source":"dwt"})",
      R"({"timestamp":8,"port":0,"event":{"kind":"Exception","data":{"number":511,"name":"IRQ495","action":"enter"}},"source":"dwt"})"));
  CHECK(
      quick_verdict(
          shapes,
          R"({"timestamp":8,"port":0,"event":{"kind":"Exception","data":{"number":512,"name":"x","action":"enter"}},"source":"dwt"})") ==
      "no match");
  CHECK(
      quick_verdict(
          shapes,
          R"({"timestamp":8,"port":0,"event":{"kind":"Exception","data":{"number":15,"name":"SysTick","action":"leave"}},"source":"dwt"})") ==
      "no match");
  // Booleans, byte arrays and non-negative numbers.
  CHECK(
      learn_and_read(R"({"timestamp":1,"port":0,"event":{"kind":"PcSample","data":{"pc":0,"sleep":true}}})",
                     R"({"timestamp":1,"port":0,"event":{"kind":"PcSample","data":{"pc":4294967295,"sleep":false}}})"));
  CHECK(learn_and_read(R"({"timestamp":4,"port":2,"event":{"kind":"Raw","data":{"data":[]}}})",
                       R"({"timestamp":4,"port":2,"event":{"kind":"Raw","data":{"data":[0,1,255]}}})"));
  CHECK(quick_verdict(shapes, R"({"timestamp":4,"port":2,"event":{"kind":"Raw","data":{"data":[256]}}})") ==
        "no match");
  CHECK(quick_verdict(shapes, R"({"timestamp":4,"port":2,"event":{"kind":"Raw","data":{"data":[1, 2]}}})") ==
        "no match");
  CHECK(learn_and_read(
      R"({"timestamp":5,"port":0,"event":{"kind":"ThreadUsage","data":{"name":"main","percent":12.5}}})",
      R"({"timestamp":5,"port":0,"event":{"kind":"ThreadUsage","data":{"name":"idle","percent":0.25e2}}})"));
  CHECK(quick_verdict(
            shapes, R"({"timestamp":5,"port":0,"event":{"kind":"ThreadUsage","data":{"name":"idle","percent":-1}}})") ==
        "no match");
  // Fields no rule names (another producer's): any value of the same type.
  CHECK(learn_and_read(
      R"({"timestamp":10,"port":3,"event":{"kind":"Counter","data":{"counter_id":1,"value":2,"note":"a"}},"score":-12.5e3,"ok":true,"n":null,"o":{"a":[1]}})",
      R"({"timestamp":11,"port":3,"event":{"kind":"Counter","data":{"counter_id":2,"value":3,"note":"b"}},"score":7,"ok":false,"n":null,"o":{"a":[1]}})"));
  CHECK(
      quick_verdict(
          shapes,
          R"({"timestamp":11,"port":3,"event":{"kind":"Counter","data":{"counter_id":2,"value":3,"note":"b"}},"score":7,"ok":false,"n":null,"o":{"a":[2]}})") ==
      "no match");
}

TEST_CASE("record shapes: what is not learnt, and the cap") {
  RecordShapes shapes;
  CHECK_FALSE(shapes.learn(R"({"timestamp":30,"frames":[{"port":0,"data":[65],"timestamp":30}]})"));  // frames line
  CHECK_FALSE(shapes.learn(R"({"timestamp":1,"port":0,"event":{"kind":"SomeoneElses","data":{"x":1}}})"));
  CHECK_FALSE(
      shapes.learn(R"({"time\u0073tamp":1,"port":0,"event":{"kind":"IdleEnter"}})"));  // a name written another way
  CHECK_FALSE(
      shapes.learn(R"({"timestamp":1,"port":0,"event":{"data":{"message":"x"},"kind":"Text"}})"));  // data first
  CHECK_FALSE(
      shapes.learn(R"({"timestamp":5,"port":0,"event":{"kind":"ThreadUsage","data":{"name":"idle","percent":-0}}})"));
  CHECK(shapes.shapes() == 0);
  for (std::size_t i = 0; i < RecordShapes::max_shapes; ++i) {
    CHECK(shapes.learn(fmt::format(R"({{"timestamp":1,"port":0,"event":{{"kind":"IdleEnter"}},"k{}":1}})", i)));
  }
  CHECK(shapes.full());
  const std::string one_more = R"({"timestamp":1,"port":0,"event":{"kind":"IdleExit"}})";
  CHECK_FALSE(shapes.learn(one_more));
  CHECK(quick_verdict(shapes, one_more) == "no match");
  CHECK(quick_verdict(shapes, R"({"timestamp":2,"port":9,"event":{"kind":"IdleEnter"},"k63":5})") ==
        "IdleEnter  9 2 -");
}

TEST_CASE("fleet fields: the stamp writes them last; the check and the shapes hold them to the contract") {
  const std::string_view record =
      R"({"timestamp":5,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":1,"to_task":2}},"source":"itm"})";
  std::string stamped;
  append_stamped(stamped, record, FleetStamp{"rack3-b07", "r_20261127", 41, 1795000000123456});
  CHECK(stamped ==
        R"({"timestamp":5,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":1,"to_task":2}},"source":"itm",)"
        R"("board":"rack3-b07","run":"r_20261127","seq":41,"host_us":1795000000123456})"
        "\n");
  const std::string line = stamped.substr(0, stamped.size() - 1);
  CHECK(check(line).empty());

  CHECK(is_fleet_name("b"));
  CHECK(is_fleet_name(std::string(fleet_name_max, 'x')));
  CHECK_FALSE(is_fleet_name(""));
  CHECK_FALSE(is_fleet_name(std::string(fleet_name_max + 1, 'x')));
  for (const std::string_view bad : {"rack.3", "b*", "b>", "b 7", "b\t", "b\xc3\xa9"}) {
    CAPTURE(bad);
    CHECK_FALSE(is_fleet_name(bad));
  }

  const std::string head = R"({"timestamp":1,"port":0,"event":{"kind":"IdleEnter"},)";
  CHECK(check(head + R"("board":"rack.3"})") == R"("board" is not a fleet name (1-64 of A-Z a-z 0-9 _ -))");
  CHECK(check(head + R"("run":7})") == R"("run" is not a fleet name (1-64 of A-Z a-z 0-9 _ -))");
  CHECK(check(head + R"("seq":-1})") == R"("seq" is not an unsigned integer)");
  CHECK(check(head + R"("host_us":1.5})") == R"("host_us" is not an unsigned integer)");
  CHECK(check(head + R"("seq":1,"seq":2})") == R"("seq" appears twice)");
  CHECK(check(head + R"("host_us":1,"board":"a","host_us":2})") == R"("host_us" appears twice)");

  // A learnt stamped shape vouches only for what the check would pass.
  RecordShapes shapes;
  REQUIRE(shapes.learn(line));
  const std::string other_values =
      R"({"timestamp":6,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":2,"to_task":1}},"source":"itm",)"
      R"("board":"B-9","run":"x","seq":18446744073709551615,"host_us":0})";
  CHECK(quick_verdict(shapes, other_values) == full_verdict(other_values));
  for (const std::string& bad :
       {std::string(R"({"timestamp":6,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":2,"to_task":1}},)"
                    R"("source":"itm","board":"a.b","run":"x","seq":1,"host_us":0})"),
        std::string(R"({"timestamp":6,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":2,"to_task":1}},)"
                    R"("source":"itm","board":"a","run":"","seq":1,"host_us":0})"),
        std::string(R"({"timestamp":6,"port":1,"event":{"kind":"TaskSwitch","data":{"from_task":2,"to_task":1}},)"
                    R"("source":"itm","board":"a","run":"x","seq":-1,"host_us":0})")}) {
    CAPTURE(bad);
    CHECK(quick_verdict(shapes, bad) == "no match");
    CHECK(full_verdict(bad) == "bad");
  }
}

TEST_CASE("Loss: the record trace-ship writes for numbered records it could not ship") {
  CHECK(check(R"({"timestamp":1,"port":0,"event":{"kind":"Loss","data":{"first_seq":10,"last_seq":19,"records":10,)"
              R"("reason":"buffer_full"}},"source":"trace-ship","clock":"us"})")
            .empty());
  CHECK_FALSE(check(R"({"timestamp":1,"port":0,"event":{"kind":"Loss","data":{"first_seq":10,"last_seq":19,)"
                    R"("records":10,"reason":"other"}}})")
                  .empty());
  CHECK_FALSE(check(R"({"timestamp":1,"port":0,"event":{"kind":"Loss","data":{"first_seq":10}}})").empty());
}
