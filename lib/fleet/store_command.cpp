#include "fleet/store_command.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "clickhouse/clickhouse_rows.hpp"
#include "core/clock.hpp"
#include "core/json_writer.hpp"
#include "core/signals.hpp"
#include "fleet/fleet_subject.hpp"
#include "fleet/payload_lines.hpp"
#include "nats/nats_consumer.hpp"
#include "records/fleet_fields.hpp"

namespace tp {
namespace {

constexpr std::uint64_t bad_lines_reported = 10;

// Where a line came from: the subject and, when the message has one, its Nats-Msg-Id (the
// chunk's board.run.first-seq): a line that is no record has no board, run or seq of its own.
std::string message_origin(const NatsMessage& message) {
  const std::optional<std::string_view> id = message.header("Nats-Msg-Id");
  if (!id) return std::string(message.subject());
  constexpr std::size_t id_shown = 200;  // the header is the publisher's: cut, and quoted as JSON
  std::string quoted;
  append_json_string(quoted, id->substr(0, id_shown));
  return fmt::format("{} (message {})", message.subject(), quoted);
}

// How many messages to fetch for the batch to fill up to `batch_rows` and no further, from the
// lines per message seen so far (a first guess before any came).
int messages_to_fetch(std::size_t batch_rows, std::size_t batch_count, std::uint64_t lines, std::uint64_t messages) {
  constexpr std::uint64_t first_guess = 64;
  constexpr std::size_t most = 1024;
  const std::uint64_t per_message = messages == 0 ? first_guess : std::max<std::uint64_t>(1, lines / messages);
  const std::size_t room = batch_rows > batch_count ? batch_rows - batch_count : 1;
  return static_cast<int>(std::clamp<std::uint64_t>((room + per_message - 1) / per_message, 1, most));
}

// Rows of whole messages, inserted together; the messages are acknowledged after.
struct Batch {
  std::string rows;
  std::vector<NatsMessage> messages;
  std::size_t count = 0;
};

// 200 ms doubling to 5 s with the failures in a row.
std::int64_t backoff_ms(unsigned failures) {
  return std::min<std::int64_t>(std::int64_t{100} << std::min(failures, 6U), 5000);
}

// Inserts batches on a thread of its own, so the next batch's rows are made while ClickHouse
// takes this one (one batch in flight: submit() waits while one is). Acknowledges a batch's
// messages after HTTP 200, or once the rows ClickHouse refused for their data are found and
// skipped (the others stored); otherwise (ClickHouse away, overloaded) they are redelivered
// after a back-off, during which it takes no other batch (it would be refused too).
class Inserter {
 public:
  struct Counts {
    std::uint64_t rows = 0;
    std::uint64_t inserts = 0;
    std::uint64_t failed_inserts = 0;
    std::uint64_t refused_rows = 0;  // refused by ClickHouse for their data: skipped
  };

  Inserter(ClickHouseHttp& clickhouse, std::string insert, std::int64_t give_up_after_s, const Logger& log)
      : clickhouse_(clickhouse),
        insert_(std::move(insert)),
        give_up_after_ms_(static_cast<std::uint64_t>(give_up_after_s) * 1000),
        log_(log),
        thread_([this] { run(); }) {}
  ~Inserter() { finish(); }
  Inserter(const Inserter&) = delete;
  Inserter& operator=(const Inserter&) = delete;
  Inserter(Inserter&&) = delete;
  Inserter& operator=(Inserter&&) = delete;

  void submit(Batch&& batch) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !pending_; });
    pending_ = std::move(batch);
    changed_.notify_all();
  }
  // The rows buffer of the last batch inserted, emptied, for the next batch to grow into (tens
  // of MB: fresh ones cost page faults and the copies of doubling).
  std::string take_spare() {
    const std::lock_guard lock(mutex_);
    std::string spare = std::move(spare_);
    spare_ = std::string();
    spare.clear();
    return spare;
  }
  [[nodiscard]] bool idle() const {
    const std::lock_guard lock(mutex_);
    return !pending_ && !busy_;
  }
  void finish() {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !pending_; });
      done_ = true;
      changed_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] Counts counts() const {
    const std::lock_guard lock(mutex_);
    return counts_;
  }
  // Why inserts were given up (--give-up-after), once they were: then every batch is handed
  // back unstored.
  [[nodiscard]] std::optional<std::string> gave_up() const {
    const std::lock_guard lock(mutex_);
    return gave_up_;
  }

 private:
  void run() {
    for (;;) {
      Batch batch;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return pending_.has_value() || done_; });
        if (!pending_) return;
        batch = std::move(*pending_);
        busy_ = true;
      }
      if (gave_up()) {
        for (NatsMessage& message : batch.messages) message.nak_with_delay(0);
      } else {
        insert(batch);
      }
      const std::lock_guard lock(mutex_);
      spare_ = std::move(batch.rows);
      pending_.reset();
      busy_ = false;
      changed_.notify_all();
    }
  }

  enum class Outcome : std::uint8_t { stored, refused_for_data, failed };

  Outcome post_rows(std::string_view rows, std::string& why) {
    try {
      const HttpReply reply = clickhouse_.post(insert_, rows);
      if (reply.status == 200) return Outcome::stored;
      why = fmt::format("HTTP {}: {}", reply.status, clickhouse_error_line(reply.body));
      return refused_for_data(reply) ? Outcome::refused_for_data : Outcome::failed;
    } catch (const Error& error) {
      why = error.what();
      return Outcome::failed;
    }
  }

  // Rows of a batch ClickHouse refused for their data: halves are inserted apart until each
  // refused row is alone; those are reported, counted and skipped, the others stored. False
  // when ClickHouse failed otherwise on the way: the batch is then retried whole (a row
  // stored twice is one row under FINAL).
  bool store_all_but_refused(std::string_view rows, std::uint64_t& stored, std::string& why) {
    const std::size_t count = line_count(rows);  // each row ends with its newline
    if (count <= 1) {
      if (count == 1) report_refused(rows, why);
      return true;
    }
    const std::string_view second = lines_after(rows, count / 2);
    for (const std::string_view half : {rows.substr(0, rows.size() - second.size()), second}) {
      switch (post_rows(half, why)) {
        case Outcome::stored:
          stored += line_count(half);
          break;
        case Outcome::refused_for_data:
          if (!store_all_but_refused(half, stored, why)) return false;
          break;
        case Outcome::failed:
          return false;
      }
    }
    return true;
  }

  void report_refused(std::string_view row, std::string_view why) {
    std::uint64_t refused = 0;
    {
      const std::lock_guard lock(mutex_);
      refused = ++counts_.refused_rows;
    }
    if (refused <= refused_reported) {
      log_.warn(fmt::format("{}: ClickHouse refused the row ({}); not stored, its message acknowledged{}",
                            row_identity(row.substr(0, row.find('\n'))), why,
                            refused == refused_reported ? " (further refused rows are only counted: --stats)" : ""));
    }
  }

  void insert(Batch& batch) {
    std::string why;
    std::uint64_t stored = 0;
    bool done = false;
    switch (post_rows(batch.rows, why)) {
      case Outcome::stored:
        stored = batch.count;
        done = true;
        break;
      case Outcome::refused_for_data:
        done = store_all_but_refused(batch.rows, stored, why);
        if (done && stored == 0 && batch.count > 1) {
          log_.warn(
              fmt::format("ClickHouse refused every row of a batch of {} for its data: are the table's columns "
                          "those trace-store creates?",
                          batch.count));
        }
        break;
      case Outcome::failed:
        break;
    }
    if (done) {
      for (NatsMessage& message : batch.messages) message.ack();
      failures_in_a_row_ = 0;
      failing_since_ms_ = 0;
      const std::lock_guard lock(mutex_);
      counts_.rows += stored;
      ++counts_.inserts;
      return;
    }
    failed(batch, why);
  }

  // A batch not stored: redelivered after a back-off (which keeps a dead ClickHouse from
  // being hammered), or at once to another store when inserts have failed for
  // --give-up-after. An insert answered after --clickhouse-timeout may have been stored
  // all the same: each retry of it may add a copy (one row under FINAL).
  void failed(Batch& batch, std::string_view why) {
    const std::uint64_t now = monotonic_ms();
    if (failures_in_a_row_++ == 0) failing_since_ms_ = now;
    const std::uint64_t failing_ms = now - failing_since_ms_;
    const bool give_up = give_up_after_ms_ > 0 && failing_ms >= give_up_after_ms_;
    const std::int64_t delay_ms = give_up ? 0 : backoff_ms(failures_in_a_row_);
    for (NatsMessage& message : batch.messages) message.nak_with_delay(delay_ms);
    const std::lock_guard lock(mutex_);
    ++counts_.failed_inserts;
    if (give_up) {
      gave_up_ = fmt::format(
          "giving up: inserts have failed for {} s ({} attempts in a row; --give-up-after {}), the last ({}); "
          "their messages are not acknowledged (another store takes them)",
          failing_ms / 1000, failures_in_a_row_, give_up_after_ms_ / 1000, why);
      return;
    }
    log_.warn(
        fmt::format("insert of {} rows failed (attempt {}, failing for {} s: {}); the messages come again in "
                    "{} ms",
                    batch.count, failures_in_a_row_, failing_ms / 1000, why, delay_ms));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }

  static constexpr std::uint64_t refused_reported = 100;

  ClickHouseHttp& clickhouse_;
  std::string insert_;
  std::uint64_t give_up_after_ms_;
  const Logger& log_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Batch> pending_;
  std::string spare_;
  bool busy_ = false;
  bool done_ = false;
  unsigned failures_in_a_row_ = 0;
  std::uint64_t failing_since_ms_ = 0;  // monotonic, when the failures in a row began
  std::optional<std::string> gave_up_;
  Counts counts_;
  std::thread thread_;
};

// The table's columns, asked until ClickHouse answers (away at the start, it is waited for
// as an insert would be); nothing when a stop was requested meanwhile.
std::optional<HttpReply> table_columns(ClickHouseHttp& clickhouse, const std::string& sql, const Logger& log) {
  for (unsigned failures = 0; stop_requested() == 0;) {
    try {
      return clickhouse.post(sql, {});
    } catch (const Error& error) {
      if (++failures == 1) log.warn(fmt::format("{}; waiting for it", error.what()));
    }
    const auto until = monotonic_ms() + static_cast<std::uint64_t>(backoff_ms(failures));
    while (stop_requested() == 0 && monotonic_ms() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a stop is seen within 50 ms
    }
  }
  return std::nullopt;
}

// A table that is not there, or cannot hold the rows as they are, is said at the start: its
// every insert would fail (retried forever) or store other values than the records'. False
// when stopped before ClickHouse answered.
bool check_table(ClickHouseHttp& clickhouse, const std::string& database, const std::string& table, const Logger& log) {
  const std::optional<HttpReply> reply = table_columns(clickhouse, table_columns_sql(database, table), log);
  if (!reply) return false;
  if (reply->status != 200) {
    throw Error(ExitCode::failure, fmt::format("ClickHouse: the columns of {}.{}: {}", database, table,
                                               clickhouse_error_line(reply->body)));
  }
  if (reply->body.empty()) {
    throw Error(ExitCode::not_found, fmt::format("no table {}.{} (--create-table makes it)", database, table));
  }
  if (const std::string problems = unfit_columns(reply->body); !problems.empty()) {
    throw Error(ExitCode::failure, fmt::format("the table {}.{} cannot hold the records as they are ({}): not one "
                                               "trace-store created",
                                               database, table, problems));
  }
  return true;
}

// The table's rows, inserted where the options say (created first with --create-table, its
// columns checked, then its counts view made: over a table not the store's, the view's error
// would hide what check_table says): the INSERT statement; nothing when stopped before
// ClickHouse answered.
std::optional<std::string> prepare_table(ClickHouseHttp& clickhouse, const StoreOptions& o, const Logger& log) {
  const std::string& database = o.clickhouse.database;
  if (o.create_table) {
    clickhouse.execute(create_table_sql(database, o.table));
    if (!o.distributed.empty()) clickhouse.execute(create_distributed_sql(database, o.table, o.distributed));
  }
  const std::string target = o.distributed.empty() ? o.table : o.table + "_all";
  if (!check_table(clickhouse, database, target, log)) return std::nullopt;
  if (o.create_table) {
    clickhouse.execute(create_counts_view_sql(database, o.table));
    if (!o.distributed.empty()) clickhouse.execute(create_distributed_counts_sql(database, o.table, o.distributed));
  }
  return insert_sql(database, target);
}

// A message delivered and not acknowledged in this time is delivered again (to any store).
constexpr std::int64_t ack_wait_s = 120;

// The durable consumer the stores share: explicit acks, from the start of the stream.
ConsumerSettings consumer_settings(const StoreOptions& o) {
  return ConsumerSettings{.stream = o.stream,
                          .subject = all_boards_subject(o.prefix),
                          .durable = o.durable,
                          .from = DeliverFrom::all,
                          .max_ack_pending = 100'000,
                          .ack_wait_s = ack_wait_s};
}

// What keeps --until-idle from ending while this store holds nothing: the consumer's state as
// the server says it (-v, every few seconds).
std::string not_idle_yet(const std::string& durable, const ConsumerState& c, std::uint64_t dropped) {
  return fmt::format(
      "not idle yet: the durable consumer {} has {} messages not yet delivered and {} delivered and not "
      "acknowledged (ack floor {}, last delivered {}, {} deliveries, {} redelivered, {} pull requests waiting); "
      "this store holds none ({} dropped by its NATS client so far): another store holds them, or they come again "
      "after the ack wait ({} s)",
      durable, c.undelivered, c.unacknowledged, c.ack_floor, c.last_delivered, c.deliveries, c.redelivered,
      c.waiting_requests, dropped, ack_wait_s);
}

// Messages fetched, their records made rows, in batches to the inserter.
class Storer {
 public:
  Storer(const StoreOptions& o, NatsConsumer& consumer, Inserter& inserter, const Logger& log)
      : o_(o), consumer_(consumer), inserter_(inserter), log_(log) {}

  void run() {
    RepeatedRequest fetching(fmt::format("fetching from the durable consumer {}", o_.durable), log_);
    RepeatedRequest asking_state(fmt::format("reading the state of the durable consumer {}", o_.durable), log_);
    while (stop_requested() == 0 && !inserter_.gave_up()) {
      const int want = messages_to_fetch(o_.batch_rows, batch_.count, lines_fetched_, messages_);
      NatsConsumer::Fetched fetched = consumer_.fetch(want, 200);
      if (fetched.error) {
        fetching.failed(*fetched.error);
      } else {
        fetching.succeeded();
      }
      if (fetched.dropped > 0) report_dropped(fetched.dropped);
      const auto got = static_cast<int>(fetched.messages.size());
      for (NatsMessage& message : fetched.messages) take(std::move(message));
      // A short fetch under --until-idle is the stream's end: nothing would join the batch.
      const bool drained = o_.until_idle && got < want;
      const bool due =
          !batch_.messages.empty() && (batch_.count >= o_.batch_rows || drained ||
                                       static_cast<std::int64_t>(monotonic_ms()) - batch_started_ >= o_.batch_ms);
      if (due) insert_batch();
      if (o_.until_idle && got == 0 && batch_.messages.empty() && inserter_.idle()) {
        if (consumer_.caught_up(asking_state, true)) break;
        tell_not_idle();
      }
    }
    insert_batch();
  }

  [[nodiscard]] std::uint64_t messages() const noexcept { return messages_; }
  [[nodiscard]] std::uint64_t bad_lines() const noexcept { return bad_lines_; }

 private:
  void take(NatsMessage message) {
    ++messages_;
    const std::string_view payload = message.data();
    // Batches are cut at whole messages, before the one that would take them past the bound.
    const std::size_t lines = line_count(payload);
    lines_fetched_ += lines;
    if (!batch_.messages.empty() && batch_.count + lines > o_.batch_rows) insert_batch();
    for_each_line(payload, [&](std::string_view line) {
      if (line.empty()) return;
      std::string problem;
      if (append_clickhouse_row(parser_, line, batch_.rows, problem)) {
        ++batch_.count;
      } else if (++bad_lines_ <= bad_lines_reported) {
        log_.warn(
            fmt::format("a line on {} is not a stamped record ({}): not stored{}", message_origin(message), problem,
                        bad_lines_ == bad_lines_reported ? " (further bad lines are only counted: --stats)" : ""));
      }
    });
    if (batch_.messages.empty()) batch_started_ = static_cast<std::int64_t>(monotonic_ms());
    batch_.messages.push_back(std::move(message));
  }

  // The messages are not acknowledged: the server sends them again after the ack wait, which
  // --until-idle waits for.
  void report_dropped(std::int64_t dropped) {
    dropped_ += static_cast<std::uint64_t>(dropped);
    log_.warn(
        fmt::format("the NATS client dropped {} messages it could not hold (a slow consumer); they come again "
                    "after the ack wait ({} s)",
                    dropped, ack_wait_s));
  }

  void tell_not_idle() {
    constexpr std::uint64_t every_ms = 5000;
    const std::optional<ConsumerState>& state = consumer_.last_state();
    if (!state || monotonic_ms() < next_not_idle_ms_) return;
    next_not_idle_ms_ = monotonic_ms() + every_ms;
    log_.verbose(not_idle_yet(o_.durable, *state, dropped_));
  }

  void insert_batch() {
    if (!batch_.messages.empty()) inserter_.submit(std::move(batch_));
    batch_ = Batch{};
    batch_.rows = inserter_.take_spare();
  }

  const StoreOptions& o_;
  NatsConsumer& consumer_;
  Inserter& inserter_;
  const Logger& log_;
  simdjson::dom::parser parser_;
  Batch batch_;
  std::int64_t batch_started_ = 0;
  std::uint64_t bad_lines_ = 0;
  std::uint64_t messages_ = 0;
  std::uint64_t lines_fetched_ = 0;
  std::uint64_t dropped_ = 0;           // by the NATS client, not acknowledged
  std::uint64_t next_not_idle_ms_ = 0;  // monotonic, when tell_not_idle speaks next
};

}  // namespace

ExitCode store(const StoreOptions& o, const Logger& log) {
  if (!is_fleet_name(o.table) || !is_fleet_name(o.clickhouse.database)) {
    throw Error(ExitCode::usage, "--table and --database are names of A-Z a-z 0-9 _ -");
  }
  stop_on_hangup_and_quit();  // what was fetched is inserted and acknowledged on those too
  // Stopped, it inserts (and acknowledges) what it fetched: a signal does not cut an insert short.
  ClickHouseSettings settings = o.clickhouse;
  settings.stop_ends_wait = false;
  ClickHouseHttp clickhouse(settings);
  const std::optional<std::string> insert = prepare_table(clickhouse, o, log);
  if (!insert) return ExitCode::ok;  // stopped: 128+signal
  NatsLink link(o.nats, report_nats_events(log));
  NatsConsumer consumer(link, ConsumerKind::pulled, consumer_settings(o), log);
  Inserter inserter(clickhouse, *insert, o.give_up_after_s, log);
  Storer storer(o, consumer, inserter, log);
  storer.run();
  inserter.finish();
  const Inserter::Counts counts = inserter.counts();
  const std::uint64_t bad_lines = storer.bad_lines();
  if (o.stats) {
    log.report(fmt::format(
        R"(stats {{"messages":{},"rows":{},"inserts":{},"failed_inserts":{},"bad_lines":{},"refused_rows":{}}})",
        storer.messages(), counts.rows, counts.inserts, counts.failed_inserts, bad_lines, counts.refused_rows));
  }
  if (const std::optional<std::string> why = inserter.gave_up()) throw Error(ExitCode::timeout, *why);
  if (bad_lines + counts.refused_rows > 0) {
    log.warn(fmt::format("{} lines not stored: {} not valid stamped records, {} refused by ClickHouse",
                         bad_lines + counts.refused_rows, bad_lines, counts.refused_rows));
  }
  return ExitCode::ok;
}

}  // namespace tp
