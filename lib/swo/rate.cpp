#include "swo/rate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "core/error.hpp"

namespace tp::swo {
namespace {

constexpr int max_attempts = 4;

double relative_error(std::uint32_t requested, std::uint32_t achieved) {
  return std::abs(static_cast<double>(achieved) - static_cast<double>(requested)) / static_cast<double>(requested);
}

Error rate_error(std::string_view message) {
  return {ExitCode::unsupported, std::string(message), ErrorCode::baud_rate_error};
}

}  // namespace

double NegotiatedRate::error() const noexcept {
  return requested == 0 ? 0.0 : relative_error(requested, achieved);
}

NegotiatedRate negotiate_rate(const RateRequest& request, std::uint32_t max_hz, std::string_view probe,
                              const std::function<std::uint32_t(std::uint32_t)>& ask) {
  if (request.hz == 0) throw Error(ExitCode::usage, "the SWO bit rate must be above 0");
  if (max_hz != 0 && request.hz > max_hz) {
    throw rate_error(
        fmt::format("{} cannot capture SWO at {} bit/s: its maximum is {} bit/s", probe, request.hz, max_hz));
  }
  std::map<std::uint32_t, std::uint32_t> tried;  // what we asked -> what the probe achieved
  NegotiatedRate best{request.hz, 0, 0};
  std::uint32_t ask_for = request.hz;
  std::uint32_t best_asked = 0;
  std::uint32_t last_asked = 0;
  for (int attempt = 0; attempt < max_attempts && !tried.contains(ask_for); ++attempt) {
    const std::uint32_t achieved = ask(ask_for);
    ++best.attempts;
    tried[ask_for] = achieved;
    last_asked = ask_for;
    if (achieved != 0 && (best.achieved == 0 || relative_error(request.hz, achieved) < best.error())) {
      best.achieved = achieved;
      best_asked = ask_for;
    }
    if (achieved == 0 || best.error() <= request.tolerance) break;
    // The probe rounds to its own divider: ask as far beyond the target as it fell short.
    const double next = static_cast<double>(ask_for) * static_cast<double>(request.hz) / static_cast<double>(achieved);
    ask_for = static_cast<std::uint32_t>(std::lround(max_hz != 0 ? std::min(next, static_cast<double>(max_hz)) : next));
  }
  if (best.achieved == 0) {
    throw rate_error(fmt::format("{} refused the SWO bit rate {} bit/s", probe, request.hz));
  }
  if (best.error() > request.tolerance && !request.allow_approx) {
    throw rate_error(
        fmt::format("{} can only get {} bit/s for the requested {} bit/s ({:.2f} % off; the limit is {:.1f} %): "
                    "choose a rate the probe can reach, or --allow-approx to capture anyway",
                    probe, best.achieved, request.hz, best.error() * 100, request.tolerance * 100));
  }
  if (last_asked != best_asked) {
    ask(best_asked);  // leave the probe on the best rate found
    ++best.attempts;
  }
  return best;
}

}  // namespace tp::swo
