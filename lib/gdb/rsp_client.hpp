// A GDB Remote Serial Protocol client for memory access on a halted target, tolerant of
// how real servers differ (QEMU's gdbstub, OpenOCD, GNU gdbserver):
// - QEMU halts a running VM on connect and sends an unsolicited stop reply before it acks
//   anything; stop replies that answer nothing are dropped (and counted).
// - No-ack mode only when the stub offers it and says OK.
// - Reads are split to fit the stub's PacketSize; `E NN` becomes a MemoryError.
// - A packet sent while the target runs is never sent: the client interrupts (0x03) and
//   waits for the stop reply first.
// - Leaving: `D` (QEMU and gdbserver resume the target on detach), `D;pid` when the stub
//   negotiated multiprocess earlier; probe servers (qXfer:memory-map, e.g. OpenOCD) keep
//   the target halted on `D`, so they get `c` and a close instead. `k` is never sent.
// Hostile or broken servers: the timeout bounds each whole exchange (request, acks, reply and
// whatever the server floods in between: console output, stop replies, bad checksums), the
// packets queued while waiting for an ack are bounded; an exchange cut short is settled before
// leaving (the reply still owed read, 0x03 when a `c` or 0x03 went unanswered: a packet that
// reaches a running QEMU halts it and is dropped); and after SIGINT/SIGTERM the poll under
// way gets 250 ms to finish, then release() 500 ms to resume the target.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/file_descriptor.hpp"
#include "gdb/rsp_codec.hpp"
#include "net/tcp_connect.hpp"
#include "target/target_memory.hpp"

namespace tp::gdb {

struct RspStatistics {
  std::uint64_t round_trips = 0;        // request/reply exchanges, interrupts included
  std::uint64_t retransmissions = 0;    // packets sent again after a `-`
  std::uint64_t unsolicited_stops = 0;  // stop replies that answered nothing (QEMU on connect)
  std::uint64_t bad_checksums = 0;      // replies whose trailer did not match
};

class RspClient final : public target::TargetMemory {
 public:
  // Takes a connected socket (non-blocking); `name` appears in messages.
  RspClient(FileDescriptor socket, std::string name, int timeout_ms);
  static std::unique_ptr<RspClient> connect(const net::TcpEndpoint& endpoint, int timeout_ms);

  RspClient(const RspClient&) = delete;
  RspClient& operator=(const RspClient&) = delete;
  RspClient(RspClient&&) = delete;
  RspClient& operator=(RspClient&&) = delete;
  ~RspClient() override { RspClient::release(); }

  // qSupported, no-ack mode when offered, `?`. Afterwards the target is halted.
  void start();

  // One request and its reply (unsolicited stop replies skipped).
  std::string request(std::string_view payload);

  void halt() override;
  void resume() override;
  [[nodiscard]] bool halted() const noexcept override { return halted_; }
  std::vector<std::uint8_t> read(std::uint64_t address, std::size_t length) override;
  void write(std::uint64_t address, std::span<const std::uint8_t> bytes) override;
  void release() noexcept override;
  // `D`, then `D;pid` if the plain form is refused. True when the stub said OK.
  bool detach();

  [[nodiscard]] std::uint64_t round_trips() const noexcept override { return stats_.round_trips; }
  [[nodiscard]] std::string description() const override;
  [[nodiscard]] std::string link_statistics() const override;
  [[nodiscard]] const RspStatistics& statistics() const noexcept { return stats_; }
  [[nodiscard]] const StubFeatures& features() const noexcept { return features_; }
  [[nodiscard]] bool no_ack() const noexcept { return no_ack_; }
  [[nodiscard]] std::size_t max_read() const noexcept;
  [[nodiscard]] std::size_t packet_size() const noexcept;

 private:
  void send_raw(std::string_view bytes);
  void send_packet(std::string_view payload);
  std::string receive_packet();
  RspEvent next_event();
  std::string next_reply();  // the next packet that answers a request (stop replies, console output skipped)
  void read_more();          // waits for at least one more event, until the exchange's deadline
  void begin_exchange();
  // Polls for `events` until the exchange's deadline; throws on the deadline or a stop request.
  void wait_for(short events, std::string_view what);
  void check_queue() const;
  [[noreturn]] void lost(std::string_view why);
  void close_gracefully() noexcept;
  void settle_run_state() noexcept;

  FileDescriptor socket_;
  std::string name_;
  int timeout_ms_;
  std::uint64_t exchange_deadline_ms_ = 0;  // monotonic; set by begin_exchange()
  std::uint64_t release_deadline_ms_ = 0;   // while releasing: no exchange lasts past it
  std::uint64_t stop_deadline_ms_ = 0;      // after a stop signal: the grace for the poll under way
  bool releasing_ = false;
  RspParser parser_;
  std::vector<RspEvent> events_;
  std::size_t next_event_ = 0;
  StubFeatures features_;
  RspStatistics stats_;
  std::uint64_t pid_ = 1;
  bool no_ack_ = false;
  bool halted_ = false;
  bool run_state_unknown_ = false;  // `c` without its ack, 0x03 without its stop reply: running or not
  bool reply_owed_ = false;         // a request's reply not read yet (the request was cut short)
  bool connected_ = true;
};

}  // namespace tp::gdb
