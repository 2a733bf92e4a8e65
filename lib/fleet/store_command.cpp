#include "fleet/store_command.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/signals.hpp"
#include "fleet/clickhouse_rows.hpp"
#include "fleet/fleet_subject.hpp"
#include "records/fleet_fields.hpp"

namespace tp {
namespace {

std::int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct MessageDeleter {
  void operator()(natsMsg* message) const noexcept { natsMsg_Destroy(message); }
};
using Message = std::unique_ptr<natsMsg, MessageDeleter>;

bool caught_up(natsSubscription* subscription) {
  jsConsumerInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  if (natsSubscription_GetConsumerInfo(&info, subscription, nullptr, &code) != NATS_OK) return false;
  const bool done = info->NumPending == 0 && info->NumAckPending == 0;
  jsConsumerInfo_Destroy(info);
  return done;
}

// 200 ms doubling to 5 s with the failures in a row.
std::int64_t backoff_ms(unsigned failures) {
  return std::min<std::int64_t>(std::int64_t{100} << std::min(failures, 6U), 5000);
}

}  // namespace

ExitCode store(const StoreOptions& o, const Logger& log) {
  if (!is_fleet_name(o.table) || !is_fleet_name(o.clickhouse.database)) {
    throw Error(ExitCode::usage, "--table and --database are names of A-Z a-z 0-9 _ -");
  }
  ClickHouseHttp clickhouse(o.clickhouse);
  if (o.create_table) {
    clickhouse.execute(create_table_sql(o.clickhouse.database, o.table));
    if (!o.distributed.empty()) clickhouse.execute(create_distributed_sql(o.clickhouse.database, o.table, o.distributed));
  }
  const std::string target = o.distributed.empty() ? o.table : o.table + "_all";
  const std::string insert =
      fmt::format("INSERT INTO {}.{} ({}) FORMAT JSONEachRow", o.clickhouse.database, target, clickhouse_columns());

  NatsLink link(o.nats, [&](NatsEvent, std::string_view text) { log.verbose(text); });
  jsCtx* jetstream = link.jetstream();
  jsSubOptions options;
  jsSubOptions_Init(&options);
  options.Stream = o.stream.c_str();
  options.Config.AckPolicy = js_AckExplicit;
  options.Config.MaxAckPending = 100'000;
  options.Config.AckWait = std::int64_t{120} * 1'000'000'000;
  options.Config.DeliverPolicy = js_DeliverAll;
  natsSubscription* raw_subscription = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  const std::string subject = all_boards_subject(o.prefix);
  const natsStatus status =
      js_PullSubscribe(&raw_subscription, jetstream, subject.c_str(), o.durable.c_str(), nullptr, &options, &code);
  if (status == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
    throw Error(ExitCode::not_found, fmt::format("no JetStream stream {} (--stream)", o.stream));
  }
  check_nats(status, fmt::format("the durable consumer {} on stream {}", o.durable, o.stream));
  const std::unique_ptr<natsSubscription, void (*)(natsSubscription*)> subscription(raw_subscription,
                                                                                    natsSubscription_Destroy);

  simdjson::dom::parser parser;
  std::string rows;
  std::vector<Message> batch;
  std::size_t batch_rows = 0;
  std::int64_t batch_started = 0;
  std::uint64_t inserted_rows = 0, inserts = 0, failed_inserts = 0, bad_lines = 0, messages = 0;
  unsigned failures_in_a_row = 0;

  const auto insert_batch = [&] {
    if (batch.empty()) return;
    bool stored = false;
    std::string why;
    try {
      const HttpReply reply = clickhouse.post(insert, rows);
      stored = reply.status == 200;
      if (!stored) why = fmt::format("HTTP {}: {}", reply.status, clickhouse_error_line(reply.body));
    } catch (const Error& error) {
      why = error.what();
    }
    if (stored) {
      for (Message& message : batch) natsMsg_Ack(message.get(), nullptr);
      inserted_rows += batch_rows;
      ++inserts;
      failures_in_a_row = 0;
    } else {
      // Redelivered after the delay; the back-off keeps a dead ClickHouse from being hammered.
      const std::int64_t delay_ms = backoff_ms(failures_in_a_row + 1);
      for (Message& message : batch) natsMsg_NakWithDelay(message.get(), delay_ms, nullptr);
      ++failed_inserts;
      ++failures_in_a_row;
      log.warn(fmt::format("insert of {} rows refused ({}); the messages come again in {} ms", batch_rows, why,
                           delay_ms));
    }
    batch.clear();
    rows.clear();
    batch_rows = 0;
    // Nothing is fetched during the back-off: the redelivery would only be refused again.
    if (!stored) std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms(failures_in_a_row)));
  };

  while (stop_requested() == 0) {
    natsMsgList list{nullptr, 0};
    const int want = static_cast<int>(std::min<std::size_t>(1024, std::max<std::size_t>(o.batch_rows / 32, 16)));
    const natsStatus fetched = natsSubscription_Fetch(&list, raw_subscription, want, 200, &code);
    if (fetched != NATS_OK && fetched != NATS_TIMEOUT) {
      log.verbose(fmt::format("fetch: {}", nats_error_text(fetched)));
    }
    for (int i = 0; i < list.Count; ++i) {
      Message message(list.Msgs[i]);
      list.Msgs[i] = nullptr;
      ++messages;
      std::string_view payload(natsMsg_GetData(message.get()), static_cast<std::size_t>(natsMsg_GetDataLength(message.get())));
      while (!payload.empty()) {
        const std::size_t newline = payload.find('\n');
        const std::string_view line = payload.substr(0, newline);
        payload.remove_prefix(newline == std::string_view::npos ? payload.size() : newline + 1);
        if (line.empty()) continue;
        std::string problem;
        if (append_clickhouse_row(parser, line, rows, problem)) {
          ++batch_rows;
        } else if (++bad_lines <= 10) {
          log.warn(fmt::format("a line on {} is not a stamped record ({}): not stored", natsMsg_GetSubject(message.get()),
                               problem));
        }
      }
      if (batch.empty()) batch_started = monotonic_ms();
      batch.push_back(std::move(message));
    }
    natsMsgList_Destroy(&list);
    const bool due = !batch.empty() && (batch_rows >= o.batch_rows || monotonic_ms() - batch_started >= o.batch_ms);
    if (due) insert_batch();
    if (o.until_idle && list.Count == 0 && batch.empty() && caught_up(raw_subscription)) break;
  }
  insert_batch();
  if (o.stats) {
    log.report(fmt::format(R"(stats {{"messages":{},"rows":{},"inserts":{},"failed_inserts":{},"bad_lines":{}}})",
                           messages, inserted_rows, inserts, failed_inserts, bad_lines));
  }
  return ExitCode::ok;
}

}  // namespace tp
