// Fuzz target: replies from USB probes (untrusted bytes from a device). The input is a
// sequence of replies, each prefixed by a 2-byte length; each goes to the LPC-Link2 poll
// tracker and to every CMSIS-DAP and ST-Link reply parser. Nothing may crash, and the
// tracker may never hand out more bytes than the replies carried.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "probes/cmsis_dap_protocol.hpp"
#include "probes/lpclink2_protocol.hpp"
#include "probes/stlink_protocol.hpp"
#include "swo/lpclink2_poll_tracker.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tp::swo;
  using namespace tp::probes;
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  std::vector<std::uint8_t> out;
  std::size_t carried = 0;
  std::span<const std::uint8_t> input(data, size);
  while (input.size() >= 2) {
    const std::size_t length =
        std::min<std::size_t>(input[0] | static_cast<std::size_t>(input[1]) << 8U, input.size() - 2);
    const auto reply = input.subspan(2, length);
    input = input.subspan(2 + length);
    carried += reply.size();
    const std::size_t before = out.size();
    const std::size_t added = tracker.on_reply(reply, out, counters);
    if (added != out.size() - before || out.size() > carried || tracker.position() > tp::probes::lpclink2::buffer_size)
      std::abort();
    (void)tp::probes::lpclink2::parse_init_uart_reply(reply);
    (void)tp::probes::lpclink2::parse_set_rate_reply(reply);
    if (const auto info = cmsis_dap::parse_info_reply(reply)) {
      (void)cmsis_dap::parse_capabilities(*info);
      (void)cmsis_dap::info_u32(*info);
    }
    (void)cmsis_dap::parse_baudrate_reply(reply);
    (void)cmsis_dap::parse_swo_status_reply(reply);
    if (const auto swo = cmsis_dap::parse_swo_data_reply(reply)) {
      if (swo->data.data() + swo->data.size() > reply.data() + reply.size()) std::abort();
    }
    (void)stlink::parse_version_reply(reply);
    (void)stlink::parse_trace_count_reply(reply);
  }
  return 0;
}
