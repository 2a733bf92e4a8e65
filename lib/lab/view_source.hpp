// Where a view's records come from: a child process of the fleet's own readers, argv only
// (never a shell), found beside trace-lab (or on PATH): live is `trace-pull --board B --follow
// --since T`, stored is `trace-query --board B --since F --until T` (or `--run R`). Its stdout
// feeds a serve::Channel: shared and broadcast for a live view (a slow viewer drops, as in
// trace-serve), paced for a stored one (it waits for its viewer: nothing dropped). With
// then=live the stored part is followed by trace-pull from where it ended, the records
// already sent left out at the seam (SeamFilter). The child is killed when the view's last
// viewer leaves. Everything here runs on the io_context thread but SeamFilter's calls.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/clickhouse_http.hpp"
#include "lab/lab_view.hpp"
#include "nats/nats_link.hpp"
#include "serve/channel.hpp"
#include "serve/child_process.hpp"
#include "serve/server_extension.hpp"

namespace tp::lab {

// What the children are told: the programs, and the options of trace-lab's they share.
struct FleetCommands {
  std::string trace_pull = "trace-pull";
  std::string trace_query = "trace-query";
  NatsSettings nats;
  std::string stream = "TRACE";
  std::string prefix = "trace";
  ClickHouseSettings clickhouse;
  std::string table = "trace";
};

// The program `name` beside this executable when it is there, else `name` (PATH).
[[nodiscard]] std::string fleet_program(std::string_view name);

[[nodiscard]] std::vector<std::string> live_argv(const FleetCommands& commands, std::string_view board,
                                                 std::int64_t since_us);
[[nodiscard]] std::vector<std::string> stored_argv(const FleetCommands& commands, const View& view);

// The seam of a stored view going on live. The stored part's records are noted: the largest
// host_us (where the live part starts: JetStream's time of a chunk is never before its
// records' host_us) and the (run, seq) of those within seam_window_us of it. The live part
// then leaves out a record noted, and one older than the window (stored, or lost to the
// store before the view opened: not shown twice either way).
class SeamFilter {
 public:
  static constexpr std::uint64_t seam_window_us = 10'000'000;
  explicit SeamFilter(std::optional<std::int64_t> stored_end_us) : stored_end_us_(stored_end_us) {}
  void stored(std::string_view line);               // the stored part's reader
  [[nodiscard]] bool fresh(std::string_view line);  // the live part's reader
  // Where the live part starts: the range's end, or the newest stored record (now if none).
  [[nodiscard]] std::int64_t live_since_us(std::int64_t now_us) const;

 private:
  struct Key {
    std::string run;
    std::uint64_t seq = 0;
    std::uint64_t host_us = 0;
  };
  static std::optional<Key> key_of(std::string_view line);
  std::optional<std::int64_t> stored_end_us_;  // a range's end (exclusive)
  std::uint64_t newest_us_ = 0;
  std::set<std::pair<std::string, std::uint64_t>> recent_;  // bounded by the records of seam_window_us
};

class ViewSource : public std::enable_shared_from_this<ViewSource> {
 public:
  ViewSource(serve::ExtensionHost& host, const FleetCommands& commands, View view);
  ViewSource(const ViewSource&) = delete;
  ViewSource& operator=(const ViewSource&) = delete;
  ViewSource(ViewSource&&) = delete;
  ViewSource& operator=(ViewSource&&) = delete;
  ~ViewSource();

  // Starts the child (stored part, or live). Throws tp::Error when it cannot be started.
  void start();
  void add(const std::shared_ptr<serve::WsClient>& client);
  void remove(const serve::WsClient& client);
  [[nodiscard]] std::size_t clients() const noexcept { return clients_.size(); }
  void drained() { channel_->drained(); }
  [[nodiscard]] const View& view() const noexcept { return view_; }

 private:
  void spawn(const std::vector<std::string>& argv, serve::PumpOptions pump);
  void read_stderr();
  void stderr_line(std::string_view line);
  void part_ended(const std::string& error);
  [[nodiscard]] bool stored() const noexcept { return view_.mode != ViewMode::live; }

  serve::ExtensionHost& host_;
  const FleetCommands& commands_;
  View view_;
  std::shared_ptr<serve::Channel> channel_;
  std::optional<serve::ChildProcess> child_;
  std::shared_ptr<boost::asio::posix::stream_descriptor> stderr_;
  std::string stderr_line_;
  std::vector<std::shared_ptr<serve::WsClient>> clients_;
  std::shared_ptr<SeamFilter> seam_;
  bool live_part_ = false;
};

}  // namespace tp::lab
