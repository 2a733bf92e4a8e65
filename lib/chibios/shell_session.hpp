// Talks to the ChibiOS shell over a serial port (docs/design.md "Peers and their protocols"; "Shell
// behaviour"): finds the prompt, sends a command, and collects the reply up to the next
// prompt with an overall timeout (the reference tool waits forever). Echo, banners, noise
// before the echo and partial lines are tolerated.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serial/serial_port.hpp"

namespace tp::chibios {

inline constexpr std::string_view prompt = "ch> ";

// Splits a reply into lines: the echoed command and everything before it are dropped,
// and so is the final prompt. nullopt when the text does not end with a prompt yet.
std::optional<std::vector<std::string>> split_reply(std::string_view command, std::string_view text);

class ShellSession {
 public:
  ShellSession(SerialPort port, std::chrono::milliseconds timeout) : port_(std::move(port)), timeout_(timeout) {}

  // Drains what the port holds and waits for a prompt. Throws tp::Error(timeout) when no
  // prompt comes.
  void synchronise();
  // Sends `command` and returns its reply lines. Throws tp::Error: timeout when the prompt
  // does not come back, io_error when the port goes away.
  std::vector<std::string> run(std::string_view command);

 private:
  SerialPort port_;
  std::chrono::milliseconds timeout_;
  std::string raw_;  // the reply so far
};

}  // namespace tp::chibios
