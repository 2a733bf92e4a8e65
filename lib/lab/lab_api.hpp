// trace-lab's JSON APIs (docs/tools/trace-lab.md): /api/boards, /api/search, /api/runs. The
// parameters are parsed on the io thread (a bad one is 400 at once, no engine asked); the
// query runs on a worker thread with its own ClickHouse client, so the io thread never waits
// on an engine, and its answer is posted back. At most max_waiting_requests wait for the
// worker (past that: 503, busy); every answer is bounded in rows and bytes. Each request is
// answered within ApiSettings::deadline_s of its arrival (504 past it: one slow store must not
// stall the pages' polls queued behind each other), and identical /api/boards polls waiting
// together share one query.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "clickhouse/clickhouse_http.hpp"
#include "core/log.hpp"
#include "lab/board_monitor.hpp"
#include "lab/lab_queries.hpp"
#include "net/asio.hpp"
#include "serve/server_extension.hpp"

namespace tp::lab {

struct ApiSettings {
  ClickHouseSettings clickhouse;
  StoreTable table;
  // Every API request is answered within this many seconds of its arrival (--api-deadline),
  // 504 past it: a page polling every 2 s is not kept waiting behind a slow store.
  double deadline_s = 10;
};

inline constexpr std::size_t max_waiting_requests = 16;
inline constexpr std::size_t max_search_answer_bytes = std::size_t{16} << 20;

// The JSON answers, from what the engines said (pure: the tests build them).
[[nodiscard]] std::string error_json(std::string_view message);
// `stored` absent: ClickHouse is away (`store_away` says why), and live.error set: NATS is;
// the figures of the engine away are null and "away" names it.
struct StoreFigures {
  std::optional<std::vector<StoredBoard>> boards;
  std::string away;  // why, when boards is absent
};
[[nodiscard]] std::string boards_json(std::int64_t now_us, std::int64_t window_s, const StoreFigures& stored,
                                      const LiveSnapshot& live, std::string_view glob);
[[nodiscard]] std::string runs_json(const std::vector<StoredRun>& runs);
struct SearchAnswer {
  std::string json;
  std::size_t hits = 0;
};
// The hits of search_sql's TabSeparated answer (rows as trace-query reads them), newest
// first; `limit` of them, the next cursor when there was one more; a row that is not the
// store's is left out (counted in `bad_rows`).
[[nodiscard]] SearchAnswer search_json(std::string_view tsv, std::size_t limit, std::uint64_t& bad_rows);

class LabApi {
 public:
  LabApi(ApiSettings settings, const BoardMonitor& monitor, boost::asio::io_context& io, const Logger& log);
  LabApi(const LabApi&) = delete;
  LabApi& operator=(const LabApi&) = delete;
  LabApi(LabApi&&) = delete;
  LabApi& operator=(LabApi&&) = delete;
  ~LabApi();

  // On the io thread: false when `path` is none of the APIs.
  bool get(std::string_view path, std::string_view target, const serve::AnswerHttp& answer);
  void stop();

 private:
  using Work = std::function<serve::HttpAnswer(ClickHouseHttp&)>;
  struct Job {
    std::string key;  // identical requests' (those may share one answer); empty: not shared
    std::chrono::steady_clock::time_point deadline;
    Work work;
    std::vector<serve::AnswerHttp> answers;
  };
  void queue(std::string key, Work work, const serve::AnswerHttp& answer);
  void work();
  serve::HttpAnswer run(Job& job, std::optional<ClickHouseHttp>& clickhouse);
  [[nodiscard]] std::string too_late_message() const;
  serve::HttpAnswer boards(ClickHouseHttp& clickhouse, const BoardsRequest& request);
  serve::HttpAnswer search(ClickHouseHttp& clickhouse, const SearchRequest& request);
  serve::HttpAnswer runs(ClickHouseHttp& clickhouse, const std::string& board);
  // The whole answer of a SELECT (at most `max_bytes`: past it, whole rows only and
  // `cut` set); throws EngineAway.
  std::string select(ClickHouseHttp& clickhouse, const std::string& sql, std::size_t max_bytes, bool& cut);

  ApiSettings settings_;
  const BoardMonitor& monitor_;
  boost::asio::io_context& io_;
  const Logger& log_;
  std::mutex mutex_;  // guards jobs_ and stopping_
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread worker_;  // last: starts after everything it uses
};

}  // namespace tp::lab
