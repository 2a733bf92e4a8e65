#include "lab/lab_api.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <set>

#include "clickhouse/clickhouse_rows.hpp"
#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/number.hpp"
#include "core/wall_clock.hpp"

namespace tp::lab {
namespace {

constexpr std::size_t max_answer_bytes = std::size_t{8} << 20;  // boards, runs
constexpr std::size_t store_columns = 13;

// An engine that did not answer, or refused: 503, naming it; 504 when it did not answer by the
// request's deadline (`late`).
struct EngineAway {
  std::string message;
  bool late = false;
};

serve::HttpAnswer json_answer(std::string body) {
  return serve::HttpAnswer{200, "application/json", std::move(body)};
}
serve::HttpAnswer error_answer(unsigned status, std::string_view message) {
  return serve::HttpAnswer{status, "application/json", error_json(message)};
}

void append_optional_text(std::string& out, const std::optional<std::string>& text) {
  if (text) {
    append_json_string(out, *text);
  } else {
    out += "null";
  }
}
void append_optional_uint(std::string& out, std::optional<std::uint64_t> value) {
  if (value) {
    append_uint(out, *value);
  } else {
    out += "null";
  }
}

// What each engine knows of the boards; an engine away knows nothing (its figures null).
struct Known {
  bool live = true;
  bool stored = true;
};

void append_stored_figures(std::string& out, const StoredBoard* stored, bool known) {
  const StoredBoard none;
  const StoredBoard& s = stored != nullptr ? *stored : none;
  if (known) {
    out += fmt::format(R"(,"records":{},"lost":{},"gaps":{},"exceptions":{},"overflows":{},"malformed":{})", s.records,
                       s.lost, s.gaps, s.exceptions, s.overflows, s.malformed);
  } else {
    out += R"(,"records":null,"lost":null,"gaps":null,"exceptions":null,"overflows":null,"malformed":null)";
  }
  out += R"(,"last_text":)";
  append_optional_text(out, s.last_text);
  out += R"(,"last_text_us":)";
  append_optional_uint(out, s.last_text_us);
}

void append_board(std::string& out, std::string_view name, const StoredBoard* stored, const LiveBoard* live,
                  Known known) {
  out += R"({"board":)";
  append_json_string(out, name);
  out += known.live ? fmt::format(R"(,"live":{},"run":)", live != nullptr && live->live) : R"(,"live":null,"run":)";
  std::optional<std::string> run;
  if (live != nullptr && !live->run.empty()) run = live->run;
  if (!run && stored != nullptr && !stored->last_run.empty()) run = stored->last_run;
  append_optional_text(out, run);
  out += R"(,"records_per_s":)";
  if (known.live) {
    append_double(out, live != nullptr ? live->records_per_s : 0.0);
  } else {
    out += "null";
  }
  out += R"(,"last_seen_us":)";
  std::optional<std::uint64_t> last =
      live != nullptr && live->last_seen_us != 0 ? std::optional(live->last_seen_us) : std::nullopt;
  if (stored != nullptr && stored->last_us != 0) last = std::max(last.value_or(0), stored->last_us);
  append_optional_uint(out, last);
  append_stored_figures(out, stored, known.stored);
  out += '}';
}

// One row of the store's as a hit; false when it is not the store's.
bool append_hit(simdjson::dom::parser& parser, std::string_view row, std::string& out, SearchCursor& cursor) {
  std::vector<std::string_view> fields;
  for (std::string_view rest = row; fields.size() <= store_columns;) {
    const std::size_t tab = rest.find('\t');
    fields.push_back(rest.substr(0, tab));
    if (tab == std::string_view::npos) break;
    rest.remove_prefix(tab + 1);
  }
  if (fields.size() != store_columns) return false;
  const auto seq = parse_whole_number<std::uint64_t>(fields[2]);
  const auto host_us = parse_whole_number<std::uint64_t>(fields[3]);
  std::string line;
  std::string problem;
  if (!seq || !host_us || !append_record_from_tsv(parser, row, line, problem)) return false;
  if (!line.empty() && line.back() == '\n') line.pop_back();
  cursor = SearchCursor{*host_us, unescape_tsv(fields[0]), unescape_tsv(fields[1]), *seq};
  out += R"({"board":)";
  append_json_string(out, cursor.board);
  out += R"(,"run":)";
  append_json_string(out, cursor.run);
  out += fmt::format(R"(,"seq":{},"host_us":{},"kind":)", *seq, *host_us);
  append_json_string(out, unescape_tsv(fields[10]));
  out += R"(,"line":)";
  append_json_string(out, line);
  out += '}';
  return true;
}

}  // namespace

std::string error_json(std::string_view message) {
  std::string out = R"({"error":)";
  append_json_string(out, message);
  out += '}';
  return out;
}

std::string boards_json(std::int64_t now_us, std::int64_t window_s, const StoreFigures& stored,
                        const LiveSnapshot& live, std::string_view glob) {
  const Known known{!live.error, stored.boards.has_value()};
  std::set<std::string_view> names;
  std::map<std::string_view, const StoredBoard*> by_name;
  const std::vector<StoredBoard> none;
  for (const StoredBoard& board : stored.boards ? *stored.boards : none) {
    names.insert(board.board);
    by_name[board.board] = &board;
  }
  for (const auto& [name, board] : live.boards) {
    if (glob.empty() || glob_matches(glob, name)) names.insert(name);
  }
  std::string out = fmt::format(R"({{"now_us":{},"window_s":{},"away":)", now_us, window_s);
  if (!known.live || !known.stored) {
    out += !known.live ? R"({"engine":"nats","why":)" : R"({"engine":"clickhouse","why":)";
    append_json_string(out, !known.live ? "NATS: " + *live.error : stored.away);
    out += '}';
  } else {
    out += "null";
  }
  out += R"(,"boards":[)";
  bool first = true;
  for (const std::string_view name : names) {
    if (!first) out += ',';
    first = false;
    const auto s = by_name.find(name);
    const auto l = live.boards.find(std::string(name));
    append_board(out, name, s == by_name.end() ? nullptr : s->second, l == live.boards.end() ? nullptr : &l->second,
                 known);
  }
  out += "]}";
  return out;
}

std::string runs_json(const std::vector<StoredRun>& runs) {
  std::string out = R"({"runs":[)";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i > 0) out += ',';
    out += R"({"run":)";
    append_json_string(out, runs[i].run);
    out += fmt::format(R"(,"first_us":{},"last_us":{},"records":{}}})", runs[i].first_us, runs[i].last_us,
                       runs[i].records);
  }
  out += "]}";
  return out;
}

SearchAnswer search_json(std::string_view tsv, std::size_t limit, std::uint64_t& bad_rows) {
  simdjson::dom::parser parser;
  SearchAnswer answer;
  answer.json = R"({"hits":[)";
  SearchCursor last;
  bool more = false;
  while (!tsv.empty()) {
    const std::size_t newline = tsv.find('\n');
    const std::string_view row = tsv.substr(0, newline);
    tsv.remove_prefix(newline == std::string_view::npos ? tsv.size() : newline + 1);
    if (row.empty()) continue;
    if (answer.hits == limit) {
      more = true;
      break;
    }
    std::string hit;
    SearchCursor cursor;
    if (!append_hit(parser, row, hit, cursor)) {
      ++bad_rows;
      continue;
    }
    answer.json += answer.hits == 0 ? "" : ",";
    answer.json += hit;
    last = std::move(cursor);
    ++answer.hits;
  }
  answer.json += R"(],"next":)";
  if (more) {
    append_json_string(answer.json, format_cursor(last));
  } else {
    answer.json += "null";
  }
  answer.json += '}';
  return answer;
}

// ---- the worker ----------------------------------------------------------------------------

LabApi::LabApi(ApiSettings settings, const BoardMonitor& monitor, boost::asio::io_context& io, const Logger& log)
    : settings_(std::move(settings)), monitor_(monitor), io_(io), log_(log), worker_([this] { work(); }) {}

LabApi::~LabApi() {
  stop();
  if (worker_.joinable()) worker_.join();
}

void LabApi::stop() {
  {
    const std::scoped_lock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

bool LabApi::get(std::string_view path, std::string_view target, const serve::AnswerHttp& answer) {
  const auto refuse = [&](const BadParameter& bad) { answer(error_answer(400, bad.message())); };
  if (path == "/api/boards") {
    const auto request = parse_boards_request(target);
    if (const auto* bad = std::get_if<BadParameter>(&request)) return refuse(*bad), true;
    const auto& r = std::get<BoardsRequest>(request);
    queue(
        fmt::format("boards {} {}", r.window_s, r.glob), [this, r](ClickHouseHttp& ch) { return boards(ch, r); },
        answer);
  } else if (path == "/api/search") {
    const auto request = parse_search_request(target, realtime_us());
    if (const auto* bad = std::get_if<BadParameter>(&request)) return refuse(*bad), true;
    queue(
        {}, [this, r = std::get<SearchRequest>(request)](ClickHouseHttp& ch) { return search(ch, r); }, answer);
  } else if (path == "/api/runs") {
    const auto board = parse_runs_request(target);
    if (const auto* bad = std::get_if<BadParameter>(&board)) return refuse(*bad), true;
    queue(
        {}, [this, b = std::get<std::string>(board)](ClickHouseHttp& ch) { return runs(ch, b); }, answer);
  } else {
    return false;
  }
  return true;
}

void LabApi::queue(std::string key, Work work, const serve::AnswerHttp& answer) {
  {
    const std::scoped_lock lock(mutex_);
    // An identical request waiting already (a page's poll, from several browsers): its answer is this one's too.
    const auto same =
        std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& job) { return !key.empty() && job.key == key; });
    if (same != jobs_.end() && !stopping_) {
      same->answers.push_back(answer);
      return;
    }
    if (jobs_.size() < max_waiting_requests && !stopping_) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                   std::chrono::duration<double>(settings_.deadline_s));
      jobs_.push_back(Job{std::move(key), deadline, std::move(work), {answer}});
      wake_.notify_one();
      return;
    }
  }
  answer(error_answer(503, fmt::format("busy: {} requests wait for the store already", max_waiting_requests)));
}

void LabApi::work() {
  std::optional<ClickHouseHttp> clickhouse;
  while (true) {
    Job next;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      next = std::move(jobs_.front());
      jobs_.pop_front();
    }
    const serve::HttpAnswer answer = run(next, clickhouse);
    boost::asio::post(io_, [replies = std::move(next.answers), answer]() mutable {
      for (const serve::AnswerHttp& reply : replies) reply(serve::HttpAnswer(answer));
    });
  }
}

// A request already past its deadline is answered at once, without asking the store.
serve::HttpAnswer LabApi::run(Job& job, std::optional<ClickHouseHttp>& clickhouse) {
  if (std::chrono::steady_clock::now() >= job.deadline) return error_answer(504, too_late_message());
  try {
    if (!clickhouse) clickhouse.emplace(settings_.clickhouse);
    clickhouse->set_deadline(job.deadline);
    return job.work(*clickhouse);
  } catch (const EngineAway& away) {
    clickhouse.reset();  // a new connection next time
    return error_answer(away.late ? 504 : 503, away.message);
  } catch (const Error& e) {
    clickhouse.reset();
    log_.warn(fmt::format("an API request failed: {}", e.what()));
    return error_answer(503, fmt::format("ClickHouse: {}", e.what()));
  }
}

std::string LabApi::too_late_message() const {
  return fmt::format("ClickHouse did not answer within {} s", settings_.deadline_s);
}

std::string LabApi::select(ClickHouseHttp& clickhouse, const std::string& sql, std::size_t max_bytes, bool& cut) {
  log_.verbose(sql);
  std::string body;
  cut = false;
  HttpReply reply;
  try {
    reply = clickhouse.stream(sql, [&](std::string_view piece) {
      if (cut) return;
      if (body.size() + piece.size() > max_bytes) {
        cut = true;
        piece = piece.substr(0, max_bytes - body.size());
      }
      body += piece;
    });
  } catch (const Error& e) {
    if (e.code() == ExitCode::timeout && clickhouse.past_deadline()) throw EngineAway{too_late_message(), true};
    throw EngineAway{fmt::format("ClickHouse is away ({}): {}", settings_.clickhouse.url, e.what())};
  }
  if (reply.status != 200) {
    log_.warn(fmt::format("ClickHouse refused a query: {}", clickhouse_error_line(reply.body)));
    throw EngineAway{fmt::format("ClickHouse refused the query (code {}): is --table a trace-store table?",
                                 clickhouse_error_code(reply.body))};
  }
  // An error met after the status was sent ends the body as text (no row of ours starts so).
  const std::size_t last_line = body.rfind('\n', body.size() >= 2 ? body.size() - 2 : 0);
  const std::string_view tail = std::string_view(body).substr(last_line == std::string::npos ? 0 : last_line + 1);
  if (tail.find('\t') == std::string_view::npos && clickhouse_error_code(tail) != 0) {
    throw EngineAway{fmt::format("ClickHouse failed while answering (code {})", clickhouse_error_code(tail))};
  }
  if (cut) body.erase(body.rfind('\n') == std::string::npos ? 0 : body.rfind('\n') + 1);
  return body;
}

serve::HttpAnswer LabApi::boards(ClickHouseHttp& clickhouse, const BoardsRequest& request) {
  const std::int64_t now = realtime_us();
  const LiveSnapshot live = monitor_.snapshot(static_cast<std::uint64_t>(now));
  StoreFigures stored;
  bool cut = false;
  try {
    stored.boards =
        parse_boards_answer(select(clickhouse, boards_sql(settings_.table, request, now), max_answer_bytes, cut));
  } catch (const EngineAway& away) {
    if (live.error) {
      return error_answer(away.late ? 504 : 503, fmt::format("{}; and NATS: {}", away.message, *live.error));
    }
    stored.away = away.message;  // what NATS knows is answered, the store's figures null
  }
  return json_answer(boards_json(now, request.window_s, stored, live, request.glob));
}

serve::HttpAnswer LabApi::search(ClickHouseHttp& clickhouse, const SearchRequest& request) {
  bool cut = false;
  const std::string tsv = select(clickhouse, search_sql(settings_.table, request), max_search_answer_bytes, cut);
  std::uint64_t bad_rows = 0;
  // A cut answer holds whole rows only: it ends a page early, and the cursor goes on from there.
  const std::size_t rows = static_cast<std::size_t>(std::count(tsv.begin(), tsv.end(), '\n'));
  const std::size_t limit = cut ? std::min(request.limit, rows >= 2 ? rows - 1 : rows) : request.limit;
  SearchAnswer answer = search_json(tsv, limit, bad_rows);
  if (bad_rows > 0) log_.warn(fmt::format("search: {} rows that are not the store's left out", bad_rows));
  return json_answer(std::move(answer.json));
}

serve::HttpAnswer LabApi::runs(ClickHouseHttp& clickhouse, const std::string& board) {
  bool cut = false;
  const std::string tsv = select(clickhouse, runs_sql(settings_.table, board), max_answer_bytes, cut);
  return json_answer(runs_json(parse_runs_answer(tsv)));
}

}  // namespace tp::lab
