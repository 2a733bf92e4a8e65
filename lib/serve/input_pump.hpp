// Reads NDJSON records on a thread of its own (stdin or a capture command's output),
// classifies and frames them into batches, and hands each batch to the server. It never
// waits for clients: the server decides what each client gets.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "core/byte_source.hpp"
#include "json/ndjson_reader.hpp"
#include "records/record_shapes.hpp"
#include "serve/broadcast.hpp"
#include "serve/record_classifier.hpp"
#include "serve/record_symbols.hpp"
#include "serve/run_statistics.hpp"

namespace tp::serve {

struct PumpOptions {
  std::shared_ptr<const RecordSymbols> symbols;  // --elf: names added to records that lack them
  // trace-top's snapshot records (TopSummary, TopFunction, TopHandler, TopTask) over what was
  // read, every this many seconds while records come (0: none): the viewer's Statistics tab.
  double top_interval_s = 0;
  // The statistics an earlier source's pump left (a stored view going on live): counted on.
  std::optional<RunStatistics> statistics;
  std::size_t batch_bytes = 256U << 10U;
  // When set, a good line it returns false for is left out, of the statistics too (trace-lab's
  // seam between a stored view and its live part: records already sent); on the pump's thread.
  std::function<bool(std::string_view line)> keep;
};

struct PumpCallbacks {
  std::function<void(std::shared_ptr<const Batch>)> publish;                   // on the pump's thread
  std::function<void(std::uint64_t line, std::string_view problem)> bad_line;  // on the pump's thread
  std::function<void(std::string_view error)> ended;                           // once; error empty at end of input
};

class InputPump {
 public:
  InputPump(ByteSource source, KindTable& kinds, PumpCallbacks callbacks, PumpOptions options = {});
  InputPump(const InputPump&) = delete;
  InputPump& operator=(const InputPump&) = delete;
  InputPump(InputPump&&) = delete;
  InputPump& operator=(InputPump&&) = delete;
  ~InputPump();

  // Stops reading at the next poll (within 20 ms); what was read is still published.
  void stop() noexcept { stop_.store(true); }
  [[nodiscard]] std::uint64_t records() const noexcept { return records_.load(); }
  [[nodiscard]] std::uint64_t bad_lines() const noexcept { return bad_lines_.load(); }
  [[nodiscard]] bool saw_cycles_clock() const noexcept { return cycles_clock_.load(); }
  // After the end of input (its `ended` called): waits for the reader and gives its statistics
  // (nothing without top_interval_s).
  [[nodiscard]] std::optional<RunStatistics> statistics_at_end();

 private:
  void run();
  simdjson::error_code take(NdjsonLine& line, std::uint64_t now);
  // A line not parsed, taken when a shape learnt from good lines vouches for it.
  bool take_quick(std::string_view text, std::uint64_t now);
  // Whether lines can be routed without their DOM: nothing reads more than the route
  // (--elf names records from their fields, --top-interval observes them).
  [[nodiscard]] bool routes_without_dom() const noexcept { return !options_.symbols && options_.top_interval_s <= 0; }
  void publish_routed(std::string_view text, const RecordRoute& route, std::uint64_t now);
  void add_snapshot(std::uint64_t now, bool final);

  ByteSource source_;
  RecordClassifier classifier_;
  RecordShapes shapes_;
  PumpCallbacks callbacks_;
  PumpOptions options_;
  BatchBuilder builder_;
  RunStatistics statistics_;
  std::uint64_t records_at_snapshot_ = 0;
  std::uint64_t next_snapshot_us_ = 0;
  std::string problem_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> bad_lines_{0};
  std::atomic<bool> cycles_clock_{false};
  std::thread thread_;  // last: starts after everything it uses
};

}  // namespace tp::serve
