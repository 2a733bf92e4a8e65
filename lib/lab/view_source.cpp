#include "lab/view_source.hpp"

#include <fmt/format.h>
#include <simdjson.h>
#include <unistd.h>

#include <filesystem>

#include "core/byte_source.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/wall_clock.hpp"
#include "serve/ws_client.hpp"

namespace tp::lab {
namespace {

constexpr std::size_t longest_stderr_line = 65536;  // a runaway line is not a report
constexpr std::size_t paced_batch_bytes = 256U << 10U;
constexpr int paced_in_flight = 4;

void add_option(std::vector<std::string>& argv, std::string_view option, const std::string& value) {
  if (value.empty()) return;
  argv.emplace_back(option);
  argv.push_back(value);
}

}  // namespace

std::string fleet_program(std::string_view name) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path beside = self.parent_path() / name;
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return std::string(name);
}

std::vector<std::string> live_argv(const FleetCommands& c, std::string_view board, std::int64_t since_us) {
  std::vector<std::string> argv{c.trace_pull, "--board", std::string(board),
                                "--follow",   "--since", format_rfc3339_utc(since_us)};
  add_option(argv, "--server", c.nats.servers);
  add_option(argv, "--creds", c.nats.creds);
  add_option(argv, "--tls-ca", c.nats.tls_ca);
  add_option(argv, "--tls-cert", c.nats.tls_cert);
  add_option(argv, "--tls-key", c.nats.tls_key);
  add_option(argv, "--domain", c.nats.domain);
  if (c.nats.only_given_servers) argv.emplace_back("--only-given-servers");
  add_option(argv, "--stream", c.stream);
  add_option(argv, "--subject-prefix", c.prefix);
  return argv;
}

std::vector<std::string> stored_argv(const FleetCommands& c, const View& view) {
  std::vector<std::string> argv{c.trace_query, "--board", view.board};
  if (view.mode == ViewMode::run) {
    add_option(argv, "--run", view.run);
  } else {
    add_option(argv, "--since", format_rfc3339_utc(view.from_us));
    add_option(argv, "--until", format_rfc3339_utc(view.to_us));
  }
  add_option(argv, "--clickhouse", c.clickhouse.url);
  add_option(argv, "--clickhouse-creds", c.clickhouse.creds);
  add_option(argv, "--database", c.clickhouse.database);
  add_option(argv, "--table", c.table);
  add_option(argv, "--clickhouse-timeout", std::to_string(c.clickhouse.timeout_ms));
  return argv;
}

// ---- the seam ------------------------------------------------------------------------------

std::optional<SeamFilter::Key> SeamFilter::key_of(std::string_view line) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(line.data(), line.size()).get(root) != simdjson::SUCCESS) return std::nullopt;
  std::string_view run;
  std::uint64_t seq = 0;
  std::uint64_t host_us = 0;
  if (root["run"].get(run) != simdjson::SUCCESS || root["seq"].get(seq) != simdjson::SUCCESS ||
      root["host_us"].get(host_us) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  return Key{std::string(run), seq, host_us};
}

void SeamFilter::stored(std::string_view line) {
  const auto key = key_of(line);
  if (!key) return;
  newest_us_ = std::max(newest_us_, key->host_us);
  const std::uint64_t end = stored_end_us_ ? static_cast<std::uint64_t>(*stored_end_us_) : newest_us_;
  if (key->host_us + seam_window_us >= end) recent_.emplace(key->run, key->seq);
}

bool SeamFilter::fresh(std::string_view line) {
  const auto key = key_of(line);
  if (!key) return true;
  const std::uint64_t end = stored_end_us_ ? static_cast<std::uint64_t>(*stored_end_us_) : newest_us_;
  if (key->host_us + seam_window_us < end) return false;  // far older than the seam: the stored part's
  return !recent_.contains({key->run, key->seq});
}

std::int64_t SeamFilter::live_since_us(std::int64_t now_us) const {
  if (stored_end_us_) return *stored_end_us_;
  return newest_us_ == 0 ? now_us : static_cast<std::int64_t>(newest_us_);
}

// ---- the view's source ---------------------------------------------------------------------

ViewSource::ViewSource(serve::ExtensionHost& host, const FleetCommands& commands, View view)
    : host_(host), commands_(commands), view_(std::move(view)) {
  serve::ChannelSettings settings;
  settings.paced = stored();
  if (settings.paced) settings.max_in_flight = paced_in_flight;
  serve::ChannelEvents events;
  events.bad_line = [&log = host.log(), board = view_.board](std::uint64_t line, std::string_view problem) {
    log.verbose(fmt::format("board {}: line {} of its reader: {}", board, line, problem));
  };
  events.ended = [this](const std::string& error) { part_ended(error); };
  channel_ = std::make_shared<serve::Channel>(host.io(), host.kinds(), std::move(settings), std::move(events));
}

ViewSource::~ViewSource() {
  channel_->stop();
  if (child_) child_->terminate(true);
  if (stderr_) {
    boost::system::error_code ignored;
    stderr_->close(ignored);
  }
  channel_.reset();  // joins its reader: the child is gone, its pipe ends
}

void ViewSource::start() {
  if (!stored()) {
    const std::int64_t since = view_.since_us.value_or(realtime_us() - default_live_lookback_us);
    live_part_ = true;
    return spawn(live_argv(commands_, view_.board, since), {});
  }
  serve::PumpOptions pump;
  if (view_.then_live) {
    seam_ = std::make_shared<SeamFilter>(view_.mode == ViewMode::range ? std::optional(view_.to_us) : std::nullopt);
    pump.keep = [seam = seam_](std::string_view line) {
      seam->stored(line);
      return true;
    };
  }
  spawn(stored_argv(commands_, view_), std::move(pump));
}

void ViewSource::spawn(const std::vector<std::string>& argv, serve::PumpOptions pump) {
  host_.log().verbose(fmt::format("board {}: running {}", view_.board, fmt::join(argv, " ")));
  // A reader ends with trace-lab, however trace-lab ends (killed: nothing else would stop it).
  child_.emplace(serve::ChildProcess::spawn(argv, {.stop_with_parent = true}));
  FileDescriptor out = child_->take_stdout();
  FileDescriptor err = child_->take_stderr();
  stderr_ = std::make_shared<boost::asio::posix::stream_descriptor>(host_.io(), err.release());
  stderr_line_.clear();
  read_stderr();
  pump.top_interval_s = host_.options().top_interval_s;  // the charts' statistics
  // A paced batch must fit a viewer's queue whole.
  pump.batch_bytes = std::min(paced_batch_bytes, host_.options().queue_limit / 4);
  channel_->start(ByteSource::from_fd(out.release(), fmt::format("{}'s output", argv.front()), true), std::move(pump));
}

void ViewSource::read_stderr() {
  auto buffer = std::make_shared<std::array<char, 4096>>();
  stderr_->async_read_some(boost::asio::buffer(*buffer), [weak = weak_from_this(), buffer, descriptor = stderr_](
                                                             boost::system::error_code ec, std::size_t n) {
    const auto self = weak.lock();
    if (!self || ec || self->stderr_ != descriptor) return;
    self->stderr_line_.append(buffer->data(), n);
    std::size_t newline = 0;
    while ((newline = self->stderr_line_.find('\n')) != std::string::npos) {
      self->stderr_line(std::string_view(self->stderr_line_).substr(0, newline));
      self->stderr_line_.erase(0, newline + 1);
    }
    if (self->stderr_line_.size() > longest_stderr_line) self->stderr_line_.clear();
    self->read_stderr();
  });
}

// The reader's errors go to the view's viewers (with Callisto's codes), the rest to -v.
void ViewSource::stderr_line(std::string_view line) {
  const auto error = serve::parse_child_error_line(line);
  if (!error) return host_.log().verbose(fmt::format("board {}: {}", view_.board, line));
  host_.log().warn(fmt::format("board {}: {}", view_.board, error->message));
  for (const auto& client : clients_) {
    client->send_error(serve::callisto_code_for_child(error->code),
                       fmt::format("reading board {}: {}", view_.board, error->message));
  }
}

void ViewSource::part_ended(const std::string& error) {
  if (!error.empty()) host_.log().warn(fmt::format("board {}: {}", view_.board, error));
  if (stored() && view_.then_live && !live_part_ && error.empty()) {
    live_part_ = true;
    serve::PumpOptions pump;
    pump.keep = [seam = seam_](std::string_view line) { return seam->fresh(line); };
    pump.statistics = channel_->take_statistics();  // the charts go on over the stored part
    return spawn(live_argv(commands_, view_.board, seam_->live_since_us(realtime_us())), std::move(pump));
  }
  // The stored part has all come (or the reader failed): the viewers are told it is whole.
  for (const auto& client : clients_) client->send_stats(0, 1, true);
}

void ViewSource::add(const std::shared_ptr<serve::WsClient>& client) {
  clients_.push_back(client);
  channel_->add(client);
}

void ViewSource::remove(const serve::WsClient& client) {
  std::erase_if(clients_, [&](const auto& c) { return c.get() == &client; });
  channel_->remove(client);
}

}  // namespace tp::lab
