// SWO bit-rate negotiation shared by the probes: ask for a rate, see what the probe can
// do, go back and forth a few times (as NXP's own tools do), and accept the result only
// within a tolerance.
//
// Why 2 %: an NRZ (UART) receiver samples mid-bit and re-synchronises on each start bit,
// so over 10 bits the two clocks may differ by about 4-5 % before a bit is misread; the
// target's own divider (TPIU ACPR) takes part of that budget, the probe gets the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace tp::swo {

struct RateRequest {
  std::uint32_t hz = 0;
  double tolerance = 0.02;    // relative error accepted without --allow-approx
  bool allow_approx = false;  // accept any rate the probe offers (warned)
};

struct NegotiatedRate {
  std::uint32_t requested = 0;
  std::uint32_t achieved = 0;
  int attempts = 0;
  [[nodiscard]] double error() const noexcept;  // |achieved - requested| / requested
  [[nodiscard]] bool exact() const noexcept { return achieved == requested; }
};

// `ask(hz)` configures the probe and returns the rate it achieved (0 = refused). Throws
// tp::Error(unsupported, ..., "BAUD_RATE_ERROR") when no rate within tolerance is found
// (unless allow_approx) or when the request exceeds `max_hz` (0 = unknown). On return
// the probe is configured with the returned rate.
NegotiatedRate negotiate_rate(const RateRequest& request, std::uint32_t max_hz, std::string_view probe,
                              const std::function<std::uint32_t(std::uint32_t)>& ask);

}  // namespace tp::swo
