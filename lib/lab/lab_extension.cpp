#include "lab/lab_extension.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/wall_clock.hpp"
#include "lab/lab_pages.hpp"
#include "serve/child_process.hpp"
#include "serve/viewer_assets.hpp"
#include "serve/websocket_frame.hpp"
#include "serve/ws_client.hpp"

namespace tp::lab {
namespace {

constexpr std::string_view viewer_folder = "/board/";

std::optional<serve::Asset> find_asset(std::span<const serve::Asset> assets, std::string_view path) {
  for (const serve::Asset& asset : assets) {
    if (asset.path == path) return asset;
  }
  return std::nullopt;
}

}  // namespace

LabExtension::LabExtension(FleetCommands commands, ApiSettings api, MonitorSettings monitor, const Logger& log)
    : commands_(std::move(commands)), api_settings_(std::move(api)), log_(log), monitor_(std::move(monitor), log) {}

LabExtension::~LabExtension() {
  stop();
}

void LabExtension::attach(serve::ExtensionHost& host) {
  host_ = &host;
  api_ = std::make_unique<LabApi>(api_settings_, monitor_, host.io(), log_);
}

// "/" is lab.html and the lab's other files by name; the viewer and its modules are under
// /board/ (its page names them relatively).
std::optional<serve::Asset> LabExtension::asset(std::string_view path) const {
  if (path == "/" || path == "/index.html") {
    if (auto page = find_asset(lab_page_assets(), "/lab.html")) return page;
    return serve::Asset{"/", "text/plain; charset=utf-8", "trace-lab: this build has no lab.html\n"};
  }
  if (path == "/board" || path == "/board/" || path == "/board/index.html") {
    return find_asset(serve::viewer_assets(), "/index.html");
  }
  if (path.starts_with(viewer_folder)) return find_asset(serve::viewer_assets(), path.substr(viewer_folder.size() - 1));
  return find_asset(lab_page_assets(), path);
}

bool LabExtension::get(std::string_view path, std::string_view target, const serve::AnswerHttp& answer) {
  return api_ && api_->get(path, target, answer);
}

void LabExtension::client_started(const std::shared_ptr<serve::WsClient>& client) {
  auto parsed = parse_view(client->view(), realtime_us());
  // Refused after the upgrade, so that the page can read which parameter and why; then closed
  // with a code the viewer does not retry on.
  if (const auto* bad = std::get_if<BadParameter>(&parsed)) {
    client->send_error(ErrorCode::invalid_parameters, bad->message());
    return client->close(serve::close_code::policy_violation, "view refused");
  }
  View view = std::get<View>(std::move(parsed));
  const std::string key = shared_view_key(view);
  std::shared_ptr<ViewSource> source;
  if (!key.empty()) {
    if (const auto found = shared_.find(key); found != shared_.end()) source = found->second.lock();
  }
  if (!source) {
    source = std::make_shared<ViewSource>(*host_, commands_, std::move(view));
    try {
      source->start();
    } catch (const Error& e) {
      log_.warn(fmt::format("a view could not start: {}", e.what()));
      // The protocol's code for it (a reader missing: PROBE_NOT_FOUND), as a reader's own error
      // gets; then closed (1011, the server's fault), or the viewer would wait for records.
      client->send_error(serve::callisto_code_for_child(error_code_name(e.error_code())), e.what());
      return client->close(serve::close_code::internal_error, "view could not start");
    }
    if (!key.empty()) shared_[key] = source;
  }
  source->add(client);
  viewers_[client.get()] = source;
  log_.verbose(fmt::format("client {} views {} ({} viewers)", client->id(), client->view(), source->clients()));
}

// The view's last viewer gone, its source goes (its child killed).
void LabExtension::client_stopped(const serve::WsClient& client) {
  const auto found = viewers_.find(&client);
  if (found == viewers_.end()) return;
  const std::shared_ptr<ViewSource> source = std::move(found->second);
  viewers_.erase(found);
  source->remove(client);
  if (source->clients() == 0) {
    const std::string key = shared_view_key(source->view());
    if (!key.empty()) shared_.erase(key);
  }
}

void LabExtension::client_drained(const serve::WsClient& client) {
  if (const auto found = viewers_.find(&client); found != viewers_.end()) found->second->drained();
}

void LabExtension::stop() {
  if (api_) api_->stop();
  viewers_.clear();
  shared_.clear();
}

}  // namespace tp::lab
