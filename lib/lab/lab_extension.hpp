// trace-lab's part of the server (a serve::ServerExtension): its pages, its JSON APIs, and a
// source per view for the viewers (shared by the viewers of one live view, one viewer's for a
// stored view). Runs on the io_context thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "lab/board_monitor.hpp"
#include "lab/lab_api.hpp"
#include "lab/view_source.hpp"
#include "serve/server_extension.hpp"

namespace tp::lab {

class LabExtension final : public serve::ServerExtension {
 public:
  LabExtension(FleetCommands commands, ApiSettings api, MonitorSettings monitor, const Logger& log);
  LabExtension(const LabExtension&) = delete;
  LabExtension& operator=(const LabExtension&) = delete;
  LabExtension(LabExtension&&) = delete;
  LabExtension& operator=(LabExtension&&) = delete;
  ~LabExtension() override;

  void attach(serve::ExtensionHost& host) override;
  [[nodiscard]] std::optional<serve::Asset> asset(std::string_view path) const override;
  bool get(std::string_view path, std::string_view target, const serve::AnswerHttp& answer) override;
  void client_started(const std::shared_ptr<serve::WsClient>& client) override;
  void client_stopped(const serve::WsClient& client) override;
  void client_drained(const serve::WsClient& client) override;
  void tick() override {}
  void stop() override;

 private:
  FleetCommands commands_;
  ApiSettings api_settings_;
  const Logger& log_;
  BoardMonitor monitor_;
  serve::ExtensionHost* host_ = nullptr;
  std::unique_ptr<LabApi> api_;
  std::map<const serve::WsClient*, std::shared_ptr<ViewSource>> viewers_;
  std::map<std::string, std::weak_ptr<ViewSource>> shared_;  // live views by shared_view_key
};

}  // namespace tp::lab
