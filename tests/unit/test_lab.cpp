// trace-lab's parsers and builders (lib/lab): views and their parameters, times, globs, the
// APIs' requests, the SQL built from hostile values, ClickHouse's answers read back (malformed
// too), search cursors, the seam of a stored view going on live, the JSON answers; and the
// one escaping function every literal goes through.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "clickhouse/clickhouse_rows.hpp"
#include "core/error.hpp"
#include "core/wall_clock.hpp"
#include "lab/lab_api.hpp"
#include "lab/lab_queries.hpp"
#include "lab/lab_view.hpp"
#include "lab/view_source.hpp"

using namespace tp;
using namespace tp::lab;

namespace {

constexpr std::int64_t now = 1'795'900'000'000'000;

View view_of(std::string_view target) {
  auto parsed = parse_view(target, now);
  REQUIRE_MESSAGE(std::holds_alternative<View>(parsed), std::string(target));
  return std::get<View>(parsed);
}

std::string refusal(std::string_view target) {
  const auto parsed = parse_view(target, now);
  REQUIRE_MESSAGE(std::holds_alternative<BadParameter>(parsed), std::string(target));
  return std::get<BadParameter>(parsed).name;
}

// The hostile values every escaping test goes through.
std::vector<std::string> hostile_strings() {
  return {"'",
          "\\",
          "\\'",
          "a' OR '1'='1",
          "%",
          "_",
          "*",
          ">",
          std::string("a\0b", 3),
          "\xff\xfe",
          "板 🙂",
          "`; DROP TABLE trace; --",
          std::string(1 << 20, '\''),
          "\n\t\r"};
}

// Whether `literal` is one ClickHouse string literal: quotes inside escaped, no raw control byte.
bool one_literal(const std::string& literal) {
  if (literal.size() < 2 || literal.front() != '\'' || literal.back() != '\'') return false;
  for (std::size_t i = 1; i + 1 < literal.size(); ++i) {
    const auto c = static_cast<unsigned char>(literal[i]);
    if (c < 0x20U || c == 0x7FU) return false;
    if (literal[i] == '\\') {
      ++i;
      if (i + 1 >= literal.size()) return false;  // the closing quote escaped
      continue;
    }
    if (literal[i] == '\'') return false;
  }
  return true;
}

}  // namespace

TEST_SUITE("lab") {
  TEST_CASE("views: live, a range, a run, with then and mark") {
    const View live = view_of("/ws?board=rack3-b07&live=1");
    CHECK(live.board == "rack3-b07");
    CHECK(live.mode == ViewMode::live);
    CHECK(!live.since_us);
    CHECK(shared_view_key(live) == "live:rack3-b07");
    const View since = view_of("/ws?board=b&live=1&since=10m");
    CHECK(since.since_us == now - 600'000'000);
    CHECK(shared_view_key(since).empty());  // one viewer's: its own start
    const View range = view_of("/board/?board=b&from=2026-11-29T02:13:00.250Z&to=1795918380250001&then=live&mark=5");
    CHECK(range.mode == ViewMode::range);
    CHECK(range.from_us == parse_rfc3339_utc("2026-11-29T02:13:00.250Z"));
    CHECK(range.to_us == 1'795'918'380'250'001);
    CHECK(range.then_live);
    CHECK(range.mark_us == 5);
    CHECK(shared_view_key(range).empty());
    const View run = view_of("/ws?board=b&run=20261127T101056Z-4242");
    CHECK(run.mode == ViewMode::run);
    CHECK(run.run == "20261127T101056Z-4242");
    CHECK(view_of("/ws?board=a%2Db&live=1").board == "a-b");  // percent-decoded first
  }

  TEST_CASE("views: every malformed parameter refused, naming it") {
    CHECK(refusal("/ws") == "board");
    CHECK(refusal("/ws?board=") == "board");
    CHECK(refusal("/ws?board=a*&live=1") == "board");
    CHECK(refusal("/ws?board=a%27&live=1") == "board");
    CHECK(refusal("/ws?board=a.b&live=1") == "board");
    CHECK(refusal("/ws?board=a%00&live=1") == "board");
    CHECK(refusal("/ws?board=" + std::string(65, 'a') + "&live=1") == "board");
    CHECK(refusal("/ws?board=a&board=b&live=1") == "board");
    CHECK(refusal("/ws?board=b") == "live");
    CHECK(refusal("/ws?board=b&live=2") == "live");
    CHECK(refusal("/ws?board=b&live=1&from=1&to=2") == "live");
    CHECK(refusal("/ws?board=b&live=1&since=tomorrow") == "since");
    CHECK(refusal("/ws?board=b&from=1") == "to");
    CHECK(refusal("/ws?board=b&to=1") == "from");
    CHECK(refusal("/ws?board=b&from=5&to=5") == "to");
    CHECK(refusal("/ws?board=b&from=2026-02-30T00:00:00Z&to=1") == "from");
    CHECK(refusal("/ws?board=b&from=99999999999999999999&to=1") == "from");
    CHECK(refusal("/ws?board=b&from=-5&to=1") == "from");
    CHECK(refusal("/ws?board=b&from=1&to=2&then=later") == "then");
    CHECK(refusal("/ws?board=b&from=1&to=2&mark=x") == "mark");
    CHECK(refusal("/ws?board=b&run=a%27b") == "run");
    CHECK(refusal("/ws?board=b&run=") == "run");
  }

  TEST_CASE("times: RFC 3339, microseconds, ages only where meant") {
    CHECK(std::get<std::int64_t>(parse_time("t", "0", now, false)) == 0);
    CHECK(std::get<std::int64_t>(parse_time("t", "2026-11-29T00:00:00Z", now, false)) ==
          parse_rfc3339_utc("2026-11-29T00:00:00Z"));
    CHECK(std::get<std::int64_t>(parse_time("t", "1h", now, true)) == now - 3'600'000'000);
    CHECK(std::holds_alternative<BadParameter>(parse_time("t", "1h", now, false)));
    CHECK(std::holds_alternative<BadParameter>(parse_time("t", "", now, true)));
    CHECK(std::holds_alternative<BadParameter>(parse_time("t", "1e9", now, false)));
    CHECK(std::holds_alternative<BadParameter>(parse_time("t", "1 ", now, false)));
    CHECK(std::get<BadParameter>(parse_time("from", "x", now, false)).name == "from");
  }

  TEST_CASE("globs: names, matching, and SQL") {
    CHECK(is_board_glob("rack3-*"));
    CHECK(is_board_glob("b?"));
    CHECK_FALSE(is_board_glob(""));
    CHECK_FALSE(is_board_glob("a%"));
    CHECK_FALSE(is_board_glob("a>"));
    CHECK_FALSE(is_board_glob("a b"));
    CHECK_FALSE(is_board_glob(std::string(65, '*')));
    CHECK(glob_matches("rack3-*", "rack3-b07"));
    CHECK(glob_matches("*", ""));
    CHECK(glob_matches("r*3*7", "rack3-b07"));
    CHECK(glob_matches("b?", "b1"));
    CHECK_FALSE(glob_matches("b?", "b"));
    CHECK_FALSE(glob_matches("rack3-*", "rack4-b07"));
    CHECK_FALSE(glob_matches("a_c", "abc"));  // _ is itself, as in the SQL below
    CHECK(board_glob_condition("a_b*") == "board LIKE 'a\\\\_b%'");
    CHECK(board_glob_condition("x?") == "board LIKE 'x_'");
    CHECK_THROWS_AS((void)board_glob_condition("a'"), Error);
  }

  TEST_CASE("sql_string: one literal for every hostile value, and back to the same bytes") {
    for (const std::string& value : hostile_strings()) {
      const std::string literal = sql_string(value);
      CHECK_MESSAGE(one_literal(literal), literal.substr(0, 40));
      // ClickHouse's unescaping (the TSV one is the same set plus \xHH here).
      std::string back;
      for (std::size_t i = 1; i + 1 < literal.size(); ++i) {
        if (literal[i] == '\\' && literal[i + 1] == 'x') {
          back += static_cast<char>(std::stoi(literal.substr(i + 2, 2), nullptr, 16));
          i += 3;
        } else if (literal[i] == '\\') {
          back += literal[++i];
        } else {
          back += literal[i];
        }
      }
      CHECK(back == value);
    }
    CHECK(sql_string(std::string("a\0b", 3)) == "'a\\x00b'");
    CHECK(quote_identifier("a\x01") == "`a\\x01`");
  }

  TEST_CASE("boards: the request, its SQL, and the answer read back") {
    const auto request = std::get<BoardsRequest>(parse_boards_request("/api/boards?window=60&boards=rack3-*"));
    CHECK(request.window_s == 60);
    CHECK(request.glob == "rack3-*");
    CHECK(std::get<BoardsRequest>(parse_boards_request("/api/boards")).window_s == default_window_s);
    for (const char* bad :
         {"/api/boards?window=0", "/api/boards?window=2592001", "/api/boards?window=x", "/api/boards?window=1&window=1",
          "/api/boards?boards=%27", "/api/boards?boards=a&boards=b"}) {
      CHECK_MESSAGE(std::holds_alternative<BadParameter>(parse_boards_request(bad)), bad);
    }
    const std::string sql = boards_sql(StoreTable{"db", "t_all"}, request, now);
    // The window and the glob are PREWHERE: FINAL merges the window's rows only, not the table's.
    CHECK(sql.find("FROM `db`.`t_all` FINAL PREWHERE day >= toDate('2026-11-28') AND day <= toDate('2026-11-28') "
                   "AND host_us >= 1795899940000000 AND host_us <= 1795900000000000 AND board LIKE 'rack3-%' "
                   "GROUP BY board, run)") != std::string::npos);
    CHECK(sql.find(" WHERE ") == std::string::npos);
    const auto boards = parse_boards_answer(
        "b1\t10\t3\t2\t1\t0\t4\t99\tr1\tlast\\tline\t98\n"
        "b2\t5\t0\t0\t0\t0\t0\t50\tr2\t\t0\n");
    REQUIRE(boards.size() == 2);
    CHECK(boards[0].board == "b1");
    CHECK(boards[0].lost == 3);
    CHECK(boards[0].gaps == 2);
    CHECK(boards[0].malformed == 4);
    CHECK(boards[0].last_text == "last\tline");
    CHECK(boards[0].last_text_us == 98U);
    CHECK(!boards[1].last_text);
    CHECK_THROWS_AS((void)parse_boards_answer("b1\t10\n"), Error);
    CHECK_THROWS_AS((void)parse_boards_answer("b1\tx\t3\t2\t1\t0\t4\t99\tr1\t\t0\n"), Error);
    CHECK_THROWS_AS((void)parse_boards_answer("Code: 60, e.displayText() = DB::Exception: Table missing\n"), Error);
    CHECK(parse_boards_answer("").empty());
    const std::string long_text(5000, 'x');
    CHECK(parse_boards_answer("b\t1\t0\t0\t0\t0\t0\t1\tr\t" + long_text + "\t1\n")[0].last_text->size() ==
          max_last_text);
  }

  TEST_CASE("search: the request, hostile text through one literal, the cursor") {
    const auto request = std::get<SearchRequest>(
        parse_search_request("/api/search?text=a%27%25_*%3E%5C&boards=r*&from=1&to=9&limit=5", now));
    CHECK(request.text == "a'%_*>\\");
    CHECK(request.kinds == std::vector<std::string>{"Text"});
    CHECK(request.limit == 5);
    const std::string sql = search_sql(StoreTable{}, request);
    CHECK(sql.find("position(visitParamExtractString(data, 'message'), 'a\\'%_*>\\\\') > 0") != std::string::npos);
    CHECK(sql.find("LIMIT 6 FORMAT TabSeparated") != std::string::npos);
    // What the small columns decide is PREWHERE; only the text, which needs `data`, is WHERE.
    CHECK(sql.find(" FINAL PREWHERE day >= toDate('1970-01-01') AND day <= toDate('1970-01-01') AND host_us >= 1 AND "
                   "host_us < 9 AND board LIKE 'r%' AND kind IN ('Text') AND kind = 'Text' WHERE "
                   "position(visitParamExtractString(data, 'message'), ") != std::string::npos);
    SearchRequest far;
    far.from_us = 1'795'900'000'000'000;
    far.to_us = 9'000'000'000'000'000;  // past ClickHouse's last Date: no upper day
    CHECK(search_sql(StoreTable{}, far).find("PREWHERE day >= toDate('2026-11-28') AND host_us >= ") !=
          std::string::npos);
    CHECK(search_sql(StoreTable{}, SearchRequest{}).find("PREWHERE") == std::string::npos);
    SearchRequest past_dates;
    past_dates.from_us = 9'000'000'000'000'000;
    CHECK(search_sql(StoreTable{}, past_dates).find("PREWHERE host_us >= 9000000000000000 ORDER BY") !=
          std::string::npos);
    const auto kinds =
        std::get<SearchRequest>(parse_search_request("/api/search?kind=Exception&kind=Loss&kind=Loss", now));
    CHECK(kinds.kinds == std::vector<std::string>{"Exception", "Loss"});
    CHECK(std::get<SearchRequest>(parse_search_request("/api/search", now)).kinds.empty());
    for (const std::string& bad :
         {std::string("/api/search?kind=Nope"), std::string("/api/search?limit=0"),
          std::string("/api/search?limit=501"), std::string("/api/search?from=x"),
          std::string("/api/search?from=5&to=5"), std::string("/api/search?before=x"),
          std::string("/api/search?text=a&text=b"), "/api/search?text=" + std::string(4097, 'a'),
          std::string("/api/search?boards=a%25")}) {
      CHECK_MESSAGE(std::holds_alternative<BadParameter>(parse_search_request(bad, now)), bad);
    }
    for (const std::string& value : hostile_strings()) {
      SearchRequest hostile;
      hostile.text = value;
      const std::string built = search_sql(StoreTable{}, hostile);
      const std::size_t at = built.find("position(visitParamExtractString(data, 'message'), ") + 51;
      const std::size_t end = built.rfind(") > 0");
      CHECK(one_literal(built.substr(at, end - at)));
    }
    const SearchCursor cursor{123, "rack3-b07", "run-1", 9};
    CHECK(format_cursor(cursor) == "123.rack3-b07.run-1.9");
    const auto back = parse_cursor(format_cursor(cursor));
    REQUIRE(back);
    CHECK(back->board == "rack3-b07");
    CHECK(back->seq == 9U);
    for (const char* bad : {"", "1.b.r", "1.b.r.2.3", "x.b.r.2", "1.b'.r.2", "1.b.r.-2", "1..r.2"}) {
      CHECK_MESSAGE(!parse_cursor(bad), bad);
    }
    SearchRequest paged;
    paged.before = cursor;
    CHECK(search_sql(StoreTable{}, paged).find("(host_us < 123 OR (host_us = 123 AND (board < 'rack3-b07'") !=
          std::string::npos);
  }

  TEST_CASE("runs: the request, its SQL, the answer") {
    CHECK(std::get<std::string>(parse_runs_request("/api/runs?board=b1")) == "b1");
    CHECK(std::holds_alternative<BadParameter>(parse_runs_request("/api/runs")));
    CHECK(std::holds_alternative<BadParameter>(parse_runs_request("/api/runs?board=b%27")));
    CHECK(runs_sql(StoreTable{}, "b1").find("WHERE board = 'b1' GROUP BY run") != std::string::npos);
    CHECK_THROWS_AS((void)runs_sql(StoreTable{}, "b'"), Error);
    const auto runs = parse_runs_answer("r2\t5\t9\t3\nr1\t1\t4\t2\n");
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].run == "r2");
    CHECK(runs[1].records == 2U);
    CHECK(
        runs_json(runs) ==
        R"({"runs":[{"run":"r2","first_us":5,"last_us":9,"records":3},{"run":"r1","first_us":1,"last_us":4,"records":2}]})");
    CHECK_THROWS_AS((void)parse_runs_answer("r\t1\t2\n"), Error);
  }

  TEST_CASE("the JSON answers: boards merged from both engines, search hits with their cursor") {
    std::vector<StoredBoard> stored(1);
    stored[0].board = "b1";
    stored[0].records = 7;
    stored[0].last_us = 40;
    stored[0].last_run = "r0";
    stored[0].last_text = "a \"quoted\" line";
    stored[0].last_text_us = 30;
    LiveSnapshot live;
    live.boards["b1"] = LiveBoard{"r1", 50, 2.5, true};
    live.boards["b2"] = LiveBoard{"r9", 10, 0, false};
    live.boards["c3"] = LiveBoard{};
    const std::string json = boards_json(100, 60, StoreFigures{stored, ""}, live, "b*");
    simdjson::dom::parser parser;
    const simdjson::dom::element root = parser.parse(json);
    const simdjson::dom::array boards = root["boards"];
    REQUIRE(boards.size() == 2);  // c3 is not in the glob
    CHECK(std::string_view(boards.at(0)["run"]) == "r1");
    CHECK(std::uint64_t(boards.at(0)["last_seen_us"]) == 50U);
    CHECK(std::uint64_t(boards.at(0)["records"]) == 7U);
    CHECK(std::string_view(boards.at(0)["last_text"]) == "a \"quoted\" line");
    CHECK(bool(boards.at(1)["live"]) == false);
    CHECK(boards.at(1)["last_text"].is_null());
    CHECK(root["away"].is_null());
    // One engine away: the other's figures, the away one's null, and which is named.
    LiveSnapshot nats_away = live;
    nats_away.error = "Timeout";
    const simdjson::dom::element no_nats =
        parser.parse(boards_json(100, 60, StoreFigures{stored, ""}, nats_away, "b*"));
    CHECK(std::string_view(no_nats["away"]["engine"]) == "nats");
    CHECK(no_nats["boards"].at(0)["live"].is_null());
    CHECK(no_nats["boards"].at(0)["records_per_s"].is_null());
    CHECK(std::uint64_t(no_nats["boards"].at(0)["records"]) == 7U);
    const simdjson::dom::element no_store =
        parser.parse(boards_json(100, 60, StoreFigures{std::nullopt, "ClickHouse is away"}, live, "b*"));
    CHECK(std::string_view(no_store["away"]["engine"]) == "clickhouse");
    CHECK(std::string_view(no_store["away"]["why"]) == "ClickHouse is away");
    CHECK(bool(no_store["boards"].at(0)["live"]) == true);
    CHECK(no_store["boards"].at(0)["records"].is_null());
    CHECK(no_store["boards"].at(0)["gaps"].is_null());
    CHECK(error_json("a \"b\"\n") == R"({"error":"a \"b\"\n"})");

    const std::string row1 =
        "b1\tr1\t5\t1795900000000000\t2026-11-28\t10\tcycles\t0\titm\t1\tText\t{\"message\":\"hi\"}\t";
    const std::string row2 =
        "b1\tr1\t4\t1795899999999999\t2026-11-28\t9\tcycles\t0\titm\t1\tText\t{\"message\":\"ho\"}\t";
    std::uint64_t bad_rows = 0;
    SearchAnswer answer = search_json("not a row\n" + row1 + "\n" + row2 + "\n", 1, bad_rows);
    CHECK(answer.hits == 1);
    CHECK(answer.json.find(R"("next":"1795900000000000.b1.r1.5")") != std::string::npos);
    CHECK(bad_rows == 1);
    answer = search_json(row1 + "\n", 5, bad_rows);
    CHECK(answer.json.find(R"("next":null)") != std::string::npos);
    const simdjson::dom::element hits = parser.parse(answer.json);
    const std::string_view line = hits["hits"].at(0)["line"];
    CHECK(line.find(R"("event":{"kind":"Text","data":{"message":"hi"}})") != std::string_view::npos);
  }

  TEST_CASE("the seam of then=live: nothing twice, nothing newer missed") {
    const auto line = [](std::string_view run, int seq, std::uint64_t host_us) {
      return fmt::format(
          R"({{"timestamp":1,"event":{{"kind":"Marker","data":{{"id":1}}}},"board":"b","run":"{}","seq":{},"host_us":{}}})",
          run, seq, host_us);
    };
    SeamFilter range(1'000'000'000);
    range.stored(line("r", 1, 999'000'000));
    range.stored(line("r", 2, 999'999'999));
    CHECK(range.live_since_us(5) == 1'000'000'000);
    CHECK_FALSE(range.fresh(line("r", 2, 999'999'999)));  // sent in the stored part
    CHECK(range.fresh(line("r", 3, 999'999'999)));        // before the end, but not stored when read
    CHECK(range.fresh(line("r", 4, 1'000'000'000)));      // the range's end is exclusive
    CHECK_FALSE(range.fresh(line("r", 0, 1)));            // far older than the seam: the stored part's
    SeamFilter run(std::nullopt);
    CHECK(run.live_since_us(77) == 77);  // nothing stored: from now
    run.stored(line("r", 1, 500));
    CHECK(run.live_since_us(77) == 500);
    CHECK_FALSE(run.fresh(line("r", 1, 500)));
    CHECK(run.fresh(line("r", 2, 500)));
    CHECK(run.fresh("not json"));
  }

  TEST_CASE("the children's argv: options as arguments, never a shell") {
    FleetCommands commands;
    commands.nats.domain = "rack3";
    commands.nats.creds = "/etc/nats.creds";
    commands.table = "trace_all";
    const auto live = live_argv(commands, "rack3-b07", 0);
    CHECK(live == std::vector<std::string>{"trace-pull", "--board", "rack3-b07", "--follow", "--since",
                                           "1970-01-01T00:00:00.000000Z", "--server", "nats://127.0.0.1:4222",
                                           "--creds", "/etc/nats.creds", "--domain", "rack3", "--stream", "TRACE",
                                           "--subject-prefix", "trace"});
    View range = view_of("/ws?board=b&from=1&to=2000001");
    const auto stored = stored_argv(commands, range);
    CHECK(std::vector<std::string>(stored.begin(), stored.begin() + 7) ==
          std::vector<std::string>{"trace-query", "--board", "b", "--since", "1970-01-01T00:00:00.000001Z", "--until",
                                   "1970-01-01T00:00:02.000001Z"});
    CHECK(std::find(stored.begin(), stored.end(), "trace_all") != stored.end());
    const auto run = stored_argv(commands, view_of("/ws?board=b&run=r-1"));
    CHECK(std::vector<std::string>(run.begin(), run.begin() + 5) ==
          std::vector<std::string>{"trace-query", "--board", "b", "--run", "r-1"});
  }
}
