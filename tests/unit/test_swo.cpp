#include <doctest/doctest.h>

#include <map>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "core/quantity.hpp"
#include "itm/decoder.hpp"
#include "probes/cmsis_dap_protocol.hpp"
#include "probes/lpclink2_protocol.hpp"
#include "probes/probe_catalog.hpp"
#include "probes/probe_link.hpp"
#include "probes/stlink_protocol.hpp"
#include "swo/lpclink2_poll_tracker.hpp"
#include "swo/pacer.hpp"
#include "swo/rate.hpp"
#include "swo/simulator.hpp"
#include "swo/stream_sources.hpp"

using namespace tp::swo;
using namespace tp::probes;
using Bytes = std::vector<std::uint8_t>;

namespace {

// An 04 reply: data is the bytes [before, after) of the epoch's buffer.
Bytes incremental(std::uint8_t epoch, std::size_t before, std::size_t after, std::uint8_t first_value) {
  const auto packed = static_cast<std::uint32_t>(before | after << 12U);
  Bytes reply{0x04, epoch, static_cast<std::uint8_t>(packed), static_cast<std::uint8_t>(packed >> 8U),
              static_cast<std::uint8_t>(packed >> 16U)};
  for (std::size_t i = before; i < after; ++i) reply.push_back(static_cast<std::uint8_t>(first_value + i));
  reply.resize(1024, 0);  // padded like the probe's packets
  return reply;
}

Bytes flush(std::uint8_t epoch, std::uint8_t first_value) {
  Bytes reply{0x82, epoch};
  for (std::size_t i = 0; i < tp::probes::lpclink2::buffer_size; ++i)
    reply.push_back(static_cast<std::uint8_t>(first_value + i));
  return reply;
}

Bytes buffer_bytes(std::size_t from, std::size_t to, std::uint8_t first_value) {
  Bytes bytes;
  for (std::size_t i = from; i < to; ++i) bytes.push_back(static_cast<std::uint8_t>(first_value + i));
  return bytes;
}

}  // namespace

TEST_CASE("lpclink2: commands and setup replies") {
  CHECK(tp::probes::lpclink2::ohai_command() == Bytes{0x1f, 0xff});
  CHECK(tp::probes::lpclink2::init_uart_command() == Bytes{0x03});
  CHECK(tp::probes::lpclink2::set_rate_command(2'000'000) == Bytes{0x01, 0x80, 0x84, 0x1e, 0x00});
  CHECK(tp::probes::lpclink2::poll_command() == Bytes{0x02});
  CHECK(tp::probes::lpclink2::is_ohai_reply(Bytes{0x1f, 0x38}));
  CHECK_FALSE(tp::probes::lpclink2::is_ohai_reply(Bytes{0x1f}));
  CHECK(tp::probes::lpclink2::parse_init_uart_reply(Bytes{0x03, 0, 0, 0, 0, 0x00, 0x1b, 0xb7, 0x00}) == 12'000'000U);
  CHECK_FALSE(tp::probes::lpclink2::parse_init_uart_reply(Bytes{0x03, 0, 0}));
  CHECK_FALSE(tp::probes::lpclink2::parse_init_uart_reply(Bytes{0x01, 0, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(tp::probes::lpclink2::parse_set_rate_reply(Bytes{0x01, 0x80, 0x84, 0x1e, 0x00}) == 2'000'000U);
  CHECK_FALSE(tp::probes::lpclink2::parse_set_rate_reply(Bytes{0x02, 0, 0, 0, 0}));
}

TEST_CASE("lpclink2: 04 runs then the 82 of the same epoch: every byte once") {
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  Bytes out;
  CHECK(tracker.on_reply(incremental(1, 0, 0, 0), out, counters) == 0);  // packed 0: nothing yet
  CHECK_FALSE(tracker.more_expected());
  CHECK(tracker.on_reply(incremental(1, 0, 300, 0), out, counters) == 300);
  CHECK(tracker.more_expected());
  CHECK(tracker.on_reply(incremental(1, 300, 1000, 0), out, counters) == 700);
  CHECK(tracker.on_reply(flush(1, 0), out, counters) == 22);  // only [1000, 1022) is new
  CHECK(tracker.more_expected());
  CHECK(tracker.on_reply(incremental(2, 0, 10, 50), out, counters) == 10);
  Bytes want = buffer_bytes(0, 1022, 0);
  const Bytes next = buffer_bytes(0, 10, 50);
  want.insert(want.end(), next.begin(), next.end());
  CHECK(out == want);
  CHECK(counters.lost_bytes == 0);
  CHECK(counters.duplicate_bytes == 0);
  CHECK(counters.lost_sync == 0);
  CHECK(counters.gaps == 0);
}

TEST_CASE("lpclink2: an 82 with no 04 before it is taken whole; the first reply whole") {
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  Bytes out;
  CHECK(tracker.on_reply(incremental(7, 500, 600, 0), out, counters) == 100);  // joins mid-epoch
  CHECK(tracker.on_reply(flush(7, 0), out, counters) == 422);
  CHECK(tracker.on_reply(flush(8, 3), out, counters) == 1022);
  CHECK(counters.lost_sync == 0);
  CHECK(out.size() == 100 + 422 + 1022);
}

TEST_CASE("lpclink2: epoch wrap-around is not lost sync") {
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  Bytes out;
  tracker.on_reply(flush(254, 0), out, counters);
  tracker.on_reply(flush(255, 0), out, counters);
  tracker.on_reply(flush(0, 0), out, counters);
  tracker.on_reply(flush(1, 0), out, counters);
  CHECK(counters.lost_sync == 0);
  CHECK(out.size() == 4 * 1022);
  tp::swo::lpclink2::PollTracker skips_zero;
  skips_zero.on_reply(flush(255, 0), out, counters);
  skips_zero.on_reply(flush(1, 0), out, counters);  // epochs start at 1: a wrap may skip 0
  CHECK(counters.lost_sync == 0);
}

TEST_CASE("lpclink2: a missed flush is counted as lost bytes, exactly") {
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  Bytes out;
  tracker.on_reply(incremental(3, 0, 400, 0), out, counters);
  tracker.on_reply(incremental(4, 0, 100, 0), out, counters);  // the 82 of epoch 3 never came
  CHECK(counters.lost_bytes == 622);
  CHECK(counters.gaps == 1);
  CHECK(counters.lost_sync == 0);
  CHECK(out.size() == 500);
}

TEST_CASE("lpclink2: an 82 after lost sync: counted, data taken whole") {
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  Bytes out;
  tracker.on_reply(flush(3, 0), out, counters);
  CHECK(tracker.on_reply(flush(9, 1), out, counters) == 1022);
  CHECK(counters.lost_sync == 1);
  CHECK(out.size() == 2044);
}

TEST_CASE("lpclink2: repeated and overlapping replies are dropped and counted") {
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  Bytes out;
  tracker.on_reply(incremental(1, 0, 200, 0), out, counters);
  CHECK(tracker.on_reply(incremental(1, 100, 300, 0), out, counters) == 100);  // [100,200) again
  CHECK(counters.duplicate_bytes == 100);
  CHECK(tracker.on_reply(incremental(1, 0, 300, 0), out, counters) == 0);
  CHECK(counters.duplicate_bytes == 400);
  tracker.on_reply(flush(1, 0), out, counters);
  CHECK(tracker.on_reply(flush(1, 0), out, counters) == 0);  // the same flush twice
  CHECK(counters.duplicate_bytes == 400 + 1022);
  CHECK(tracker.on_reply(incremental(1, 0, 10, 0), out, counters) == 0);  // after its flush
  CHECK(out == buffer_bytes(0, 1022, 0));
}

TEST_CASE("lpclink2: a gap inside an epoch is counted") {
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  Bytes out;
  tracker.on_reply(incremental(1, 0, 100, 0), out, counters);
  tracker.on_reply(incremental(1, 150, 200, 0), out, counters);
  CHECK(counters.lost_bytes == 50);
  CHECK(counters.gaps == 1);
}

TEST_CASE("lpclink2: malformed replies are counted and change nothing") {
  tp::swo::lpclink2::PollTracker tracker;
  SourceCounters counters;
  Bytes out;
  CHECK(tracker.on_reply(Bytes{}, out, counters) == 0);
  CHECK(tracker.on_reply(Bytes{0x99, 1, 2, 3, 4}, out, counters) == 0);
  CHECK(tracker.on_reply(Bytes{0x04, 1, 0x10}, out, counters) == 0);         // short
  CHECK(tracker.on_reply(incremental(1, 500, 100, 0), out, counters) == 0);  // after < before
  CHECK(tracker.on_reply(incremental(1, 0, 1023, 0), out, counters) == 0);   // past the buffer
  Bytes truncated = incremental(1, 0, 900, 0);
  truncated.resize(200);
  CHECK(tracker.on_reply(truncated, out, counters) == 0);             // data cut short
  CHECK(tracker.on_reply(Bytes{0x82, 1, 2, 3}, out, counters) == 0);  // short flush
  CHECK(counters.malformed_replies == 7);
  CHECK(out.empty());
  CHECK_FALSE(tracker.epoch().has_value());
}

TEST_CASE("lpclink2: random split of a stream into replies reproduces it") {
  std::mt19937 rng(5);
  for (int round = 0; round < 50; ++round) {
    tp::swo::lpclink2::PollTracker tracker;
    SourceCounters counters;
    Bytes out;
    Bytes want;
    auto epoch = static_cast<std::uint8_t>(rng() % 256);
    for (int e = 0; e < 6; ++e) {
      std::size_t position = 0;
      const auto value = static_cast<std::uint8_t>(rng());
      while (position < 1022 && rng() % 4 != 0) {
        const std::size_t after = std::min<std::size_t>(1022, position + rng() % 1019);
        tracker.on_reply(incremental(epoch, position, after, value), out, counters);
        position = after;
      }
      tracker.on_reply(flush(epoch, value), out, counters);
      const Bytes all = buffer_bytes(0, 1022, value);
      want.insert(want.end(), all.begin(), all.end());
      epoch = static_cast<std::uint8_t>(epoch + 1);
    }
    CHECK(out == want);
    CHECK(counters.lost_bytes + counters.duplicate_bytes + counters.lost_sync + counters.gaps == 0);
  }
}

TEST_CASE("cmsis-dap: commands and replies") {
  using namespace cmsis_dap;
  CHECK(info_command(InfoId::capabilities) == Bytes{0x00, 0xf0});
  CHECK(baudrate_command(4'500'000) == Bytes{0x19, 0x20, 0xaa, 0x44, 0x00});
  CHECK(data_command(508) == Bytes{0x1c, 0xfc, 0x01});
  CHECK(control_command(true) == Bytes{0x1a, 0x01});
  const Bytes info{0x00, 0x01, 0x4c};
  const auto caps = parse_capabilities(*parse_info_reply(info));
  CHECK(caps.swo_uart);
  CHECK(caps.swo_manchester);
  CHECK(caps.swo_streaming);
  CHECK(info_u32(*parse_info_reply(Bytes{0x00, 0x02, 0x00, 0x02})) == 512U);
  CHECK_FALSE(parse_info_reply(Bytes{0x00, 0x05, 1}));  // length past the reply
  CHECK_FALSE(info_u32(Bytes{1, 2, 3}));
  CHECK(parse_status_reply(Command::swo_mode, Bytes{0x18, 0x00}));
  CHECK_FALSE(parse_status_reply(Command::swo_mode, Bytes{0x18, 0xff}));
  CHECK_FALSE(parse_status_reply(Command::swo_mode, Bytes{0x17, 0x00}));
  CHECK(parse_baudrate_reply(Bytes{0x19, 0x20, 0xaa, 0x44, 0x00}) == 4'500'000U);
  const auto status = parse_swo_status_reply(Bytes{0x1b, 0x81, 0x10, 0, 0, 0});
  REQUIRE(status);
  CHECK(status->status == 0x81);
  CHECK(status->count == 16);
  const Bytes data_reply{0x1c, 0x01, 0x03, 0x00, 7, 8, 9};
  const auto data = parse_swo_data_reply(data_reply);
  REQUIRE(data);
  CHECK(Bytes(data->data.begin(), data->data.end()) == Bytes{7, 8, 9});
  CHECK_FALSE(parse_swo_data_reply(Bytes{0x1c, 0x01, 0x05, 0x00, 7, 8, 9}));  // count overruns
  CHECK_FALSE(parse_swo_data_reply(Bytes{0xff}));
}

TEST_CASE("stlink: models, commands and replies") {
  using namespace stlink;
  REQUIRE(model_for(0x374f));
  CHECK(model_for(0x374f)->generation == Generation::v3);
  CHECK(model_for(0x3748)->generation == Generation::v2);
  CHECK_FALSE(model_for(0x1234));
  CHECK(endpoints_for(Generation::v2).trace_in == 0x83);
  CHECK(endpoints_for(Generation::v3).trace_in == 0x82);
  const Bytes start = start_trace_command(2'000'000);
  CHECK(start.size() == 16);
  CHECK(Bytes(start.begin(), start.begin() + 8) == Bytes{0xf2, 0x40, 0x00, 0x10, 0x80, 0x84, 0x1e, 0x00});
  const auto version = parse_version_reply(Bytes{0x26, 0x40, 0x83, 0x04, 0x48, 0x37});  // V2J25
  REQUIRE(version);
  CHECK(version->stlink == 2);
  CHECK(version->jtag == 25);
  CHECK(firmware_has_trace(Generation::v2, *version));
  CHECK_FALSE(firmware_has_trace(Generation::v2, Version{2, 12}));
  CHECK(parse_trace_count_reply(Bytes{0x34, 0x12}) == 0x1234);
  CHECK_FALSE(parse_trace_count_reply(Bytes{0x34}));
  CHECK(parse_ok_reply(Bytes{0x80, 0x00}));
  CHECK_FALSE(parse_ok_reply(Bytes{0x01, 0x00}));
}

TEST_CASE("rate negotiation") {
  // A probe whose UART divides 96 MHz (divider >= 8), rounding the rate down.
  std::vector<std::uint32_t> asked;
  const auto probe = [&](std::uint32_t hz) {
    asked.push_back(hz);
    const std::uint32_t divider = std::max<std::uint32_t>(8, (96'000'000 + hz - 1) / hz);
    return 96'000'000 / divider;
  };
  const auto exact = negotiate_rate({2'000'000}, 12'000'000, "probe", probe);
  CHECK(exact.exact());
  CHECK(exact.attempts == 1);
  asked.clear();
  const auto second = negotiate_rate({5'000'000}, 12'000'000, "probe", probe);
  CHECK(second.achieved == 96'000'000 / 19);
  CHECK(second.attempts == 2);
  CHECK(second.error() < 0.02);
  try {
    negotiate_rate({11'000'000}, 12'000'000, "probe", probe);
    FAIL("expected BAUD_RATE_ERROR");
  } catch (const tp::Error& e) {
    CHECK(e.code() == tp::ExitCode::unsupported);
    CHECK(e.error_code() == tp::ErrorCode::baud_rate_error);
  }
  asked.clear();
  const auto approx = negotiate_rate({11'000'000, 0.02, true}, 12'000'000, "probe", probe);
  CHECK(approx.achieved == 96'000'000 / 9);
  CHECK(probe(asked.back()) == approx.achieved);  // the probe is left on the best rate
  CHECK_THROWS_AS(negotiate_rate({20'000'000}, 12'000'000, "probe", probe), tp::Error);
  CHECK_THROWS_AS(negotiate_rate({1'000'000}, 0, "probe", [](std::uint32_t) { return 0U; }), tp::Error);
}

TEST_CASE("probe selectors, endpoints and quantities") {
  CHECK(parse_probe_selector("lpclink2", "").kind == ProbeKind::lpclink2);
  const auto by_id = parse_probe_selector("0483:374F", "SN1");
  CHECK(by_id.vendor_id == 0x0483);
  CHECK(by_id.product_id == 0x374f);
  CHECK(by_id.serial_number == "SN1");
  CHECK_FALSE(parse_probe_selector("auto", "").kind);
  CHECK_THROWS_AS(parse_probe_selector("jlink", ""), tp::Error);
  CHECK_THROWS_AS(parse_probe_selector("12345:1", ""), tp::Error);
  CHECK_THROWS_AS(parse_probe_selector("zz:11", ""), tp::Error);
  CHECK(tp::net::parse_tcp_endpoint("localhost:3443", "--tcp").port == "3443");
  CHECK(tp::net::parse_tcp_endpoint(":2332", "--tcp").host == "localhost");
  CHECK(tp::net::parse_tcp_endpoint("[::1]:3443", "--tcp").host == "::1");
  CHECK_THROWS_AS(tp::net::parse_tcp_endpoint("localhost", "--tcp"), tp::Error);
  CHECK(tp::parse_duration("500ms").count() == 500);
  CHECK(tp::parse_duration("1.5s").count() == 1500);
  CHECK(tp::parse_duration("2m").count() == 120'000);
  CHECK_THROWS_AS(tp::parse_duration("-1s"), tp::Error);
  CHECK_THROWS_AS(tp::parse_duration("soon"), tp::Error);
  CHECK(tp::parse_byte_count("64K") == 65536);
  CHECK(tp::parse_byte_count("10M") == 10U * 1048576U);
  CHECK(tp::parse_byte_count("4096") == 4096);
  CHECK_THROWS_AS(tp::parse_byte_count("10X"), tp::Error);
}

TEST_CASE("probe catalog: recognised from descriptors") {
  tp::usb::DeviceInfo lpc;
  lpc.vendor_id = 0x1fc9;
  lpc.product_id = 0x0090;
  lpc.serial_number = "A";
  lpc.interfaces = {{4, 3, "LPC-LINK2 DATA PORT", {}}};
  CHECK(classify_probe(lpc)->kind == ProbeKind::lpclink2);
  tp::usb::DeviceInfo dap;
  dap.vendor_id = 0x2e8a;
  dap.product_id = 0x000c;
  dap.interfaces = {{0,
                     0xff,
                     "CMSIS-DAP v2 Interface",
                     {{0x01, tp::usb::TransferType::bulk, 64}, {0x81, tp::usb::TransferType::bulk, 64}}}};
  CHECK(classify_probe(dap)->kind == ProbeKind::cmsis_dap);
  dap.interfaces[0].class_code = 3;  // v1 (HID): not ours
  CHECK_FALSE(classify_probe(dap));
  tp::usb::DeviceInfo locked = lpc;  // no permission to open: strings unknown, listed with the reason
  locked.interfaces[0].name.clear();
  locked.open_error = "cannot open: Access denied (insufficient permissions)";
  const auto listed = classify_probe(locked);
  REQUIRE(listed);
  CHECK(probe_text_line(*listed).find("[cannot open: Access denied") != std::string::npos);
  CHECK(probe_json_line(*listed).find(R"("error":"cannot open: Access denied)") != std::string::npos);
  try {
    (void)select_probe({*listed}, parse_probe_selector("lpclink2", ""));
    FAIL("expected PERMISSION_DENIED");
  } catch (const tp::Error& e) {
    CHECK(e.code() == tp::ExitCode::permission_denied);
  }
  tp::usb::DeviceInfo mouse;
  mouse.vendor_id = 0x046d;
  CHECK_FALSE(classify_probe(mouse));
  const std::vector<ProbeInfo> probes{*classify_probe(lpc)};
  CHECK(select_probe(probes, parse_probe_selector("auto", "")).device.serial_number == "A");
  CHECK_THROWS_AS(select_probe(probes, parse_probe_selector("stlink", "")), tp::Error);
  CHECK_THROWS_AS(select_probe(probes, parse_probe_selector("lpclink2", "B")), tp::Error);
  CHECK_THROWS_AS(select_probe({probes[0], probes[0]}, parse_probe_selector("lpclink2", "")), tp::Error);
}

TEST_CASE("pacer") {
  Pacer pacer(100'000);
  CHECK(pacer.allowance(1'000'000, 100'000) == 500);  // a 5 ms burst at first
  pacer.sent(500);
  CHECK(pacer.allowance(1'000'000, 100'000) == 0);
  CHECK(pacer.wait_us(1'000'000, 1) == 10);
  CHECK(pacer.wait_us(1'000'000, 100) == 1000);
  CHECK(pacer.allowance(1'100'000, 100'000) == 10'000);
  pacer.sent(10'000);
  // Descheduled for a second: it may catch up 100 ms of the rate (and the burst), not the
  // whole second, and goes on at the rate from there.
  CHECK(pacer.allowance(2'100'000, 1'000'000) == 10'000 + 500);
  pacer.sent(10'500);
  CHECK(pacer.allowance(2'100'000, 1'000'000) == 0);
  CHECK(pacer.allowance(2'110'000, 1'000'000) == 1'000);
  CHECK(pacer.wait_us(2'110'000, 1'001) == 10);
  // A year into a run at 2.5 MB/s (a 25 Mbit/s link): no product overflows.
  Pacer soak(2'500'000);
  const std::uint64_t start = 1'000'000;
  const std::uint64_t year_us = 365ULL * 24 * 3600 * 1'000'000;
  CHECK(soak.allowance(start, 1) == 1);
  soak.sent(2'500'000ULL * (year_us / 1'000'000) - 12'500);
  CHECK(soak.allowance(start + year_us, 1'000'000'000) == 12'500 + 12'500);
  CHECK(soak.wait_us(start + year_us, 12'500 + 12'500 + 2'500) == 1'000);
  // A whole event larger than the catch-up (rate 100: 10 bytes) still goes once it is due.
  Pacer slow(100);
  CHECK(slow.allowance(1'000'000, 1000, 150) == 1);  // the burst: not yet
  CHECK(slow.wait_us(1'000'000, 150) == 1'490'000);
  CHECK(slow.allowance(2'490'000, 1000, 150) == 150);
  slow.sent(150);
  CHECK(slow.allowance(9'000'000, 1000, 150) == 151);  // long behind: catches up 150 and the burst
  Pacer unpaced(0);
  CHECK(unpaced.allowance(5, 12345) == 12345);
}

TEST_CASE("simulator: deterministic, every event decodes, whole events") {
  SimulatedTarget a({77, 64'000'000});
  SimulatedTarget b({77, 64'000'000});
  Bytes stream_a;
  Bytes stream_b;
  std::string truth;
  for (int i = 0; i < 5000; ++i) {
    a.next(stream_a, &truth);
    b.next(stream_b, nullptr);
  }
  CHECK(stream_a == stream_b);
  CHECK(a.counts() == b.counts());
  std::uint64_t events = 0;
  for (const auto count : a.counts()) {
    CHECK(count > 0);  // every kind occurs
    events += count;
  }
  std::uint64_t lines = 0;
  std::uint64_t previous = 0;
  for (std::size_t at = 0; at < truth.size(); at = truth.find('\n', at) + 1) {
    ++lines;
    REQUIRE(truth.compare(at, 13, R"({"timestamp":)") == 0);
    const std::uint64_t timestamp = std::stoull(truth.substr(at + 13, 20));
    CHECK(timestamp > 0);
    CHECK(timestamp >= previous);
    previous = timestamp;
  }
  CHECK(events == lines);
  tp::itm::ItmDecoder decoder;
  std::uint64_t malformed = 0;
  decoder.feed(stream_a,
               [&](const tp::itm::Packet& p) { malformed += p.kind == tp::itm::PacketKind::malformed ? 1 : 0; });
  CHECK(malformed == 0);
  a.forget_last();
  std::uint64_t after_forget = 0;
  for (const auto count : a.counts()) after_forget += count;
  CHECK(after_forget < events);
}

TEST_CASE("adaptive poll interval") {
  AdaptiveInterval interval;
  std::vector<long> delays;
  for (int i = 0; i < 7; ++i) delays.push_back(interval.next_delay().count());
  CHECK(delays == std::vector<long>{1, 2, 4, 8, 10, 10, 10});
  interval.data();
  CHECK(interval.next_delay().count() == 1);
}
