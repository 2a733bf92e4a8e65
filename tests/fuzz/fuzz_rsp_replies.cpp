// Fuzz target: what a GDB server sends (untrusted bytes from the network). The input goes
// to the RSP parser whole and byte by byte (the events must be the same), and every
// packet payload to the reply helpers (hex, E NN, stop replies, qSupported); the SWD reply
// parsers of the CMSIS-DAP backend get the same bytes. Nothing may crash.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "dap/swd_protocol.hpp"
#include "gdb/rsp_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tp::gdb;
  const std::span<const std::uint8_t> input(data, size);
  RspParser whole;
  RspParser split;
  std::vector<RspEvent> at_once;
  std::vector<RspEvent> one_by_one;
  whole.feed(input, at_once);
  for (std::size_t i = 0; i < size; ++i) split.feed(input.subspan(i, 1), one_by_one);
  if (at_once.size() != one_by_one.size()) std::abort();
  for (std::size_t i = 0; i < at_once.size(); ++i) {
    const auto& a = at_once[i];
    const auto& b = one_by_one[i];
    if (a.kind != b.kind || a.payload != b.payload || a.checksum_ok != b.checksum_ok) std::abort();
    if (a.payload.size() > RspParser::max_payload) std::abort();
    (void)decode_hex(a.payload);
    (void)error_number(a.payload);
    (void)is_stop_reply(a.payload);
    (void)stop_reply_pid(a.payload);
    (void)parse_supported(a.payload);
  }
  (void)tp::dap::parse_transfer_reply(input, size / 4);
  (void)tp::dap::parse_block_reply(input, true);
  return 0;
}
