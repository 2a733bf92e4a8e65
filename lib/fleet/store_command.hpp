// trace-store: a durable JetStream consumer that inserts records into ClickHouse (docs/
// design.md "The fleet"). Messages are fetched in batches, their records turned into rows
// (clickhouse_rows) and inserted with one HTTP POST of at most batch_rows rows (whole
// messages) or after batch_ms (fewer, larger inserts: ClickHouse 18.16 answers many small
// ones with TOO_MANY_PARTS). The messages are acknowledged only after ClickHouse answered 200, and
// negatively acknowledged (redelivered after a delay) when it did not, so a crash of either
// side loses nothing; a batch inserted twice (acks lost in a crash) is one row per record
// in the ReplacingMergeTree (SELECT ... FINAL).
#pragma once

#include <cstdint>
#include <string>

#include "clickhouse/clickhouse_http.hpp"
#include "clickhouse/clickhouse_rows.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "fleet/fleet_subject.hpp"
#include "nats/nats_link.hpp"
#include "nats/stream_check.hpp"

namespace tp {

struct StoreOptions {
  NatsSettings nats;
  std::string stream{default_stream_name};
  std::string prefix{default_subject_prefix};
  std::string durable = "trace-store";
  ClickHouseSettings clickhouse;
  std::string table{default_table};
  bool create_table = false;
  std::string distributed;           // a cluster: create and insert into TABLE_all, Distributed by board
  std::size_t batch_rows = 100'000;  // 10,000 took a third longer per row (ClickHouse 18.16, 1.27M rows)
  std::int64_t batch_ms = 1000;
  bool until_idle = false;             // end once everything stored so far is in ClickHouse
  std::int64_t give_up_after_s = 300;  // inserts failing this long end the store (exit 8); 0: never
  bool stats = false;
};

ExitCode store(const StoreOptions& options, const Logger& log);

}  // namespace tp
