#include "decode/decode_loop.hpp"

namespace tp {
namespace {

class SessionHandler final : public StreamHandler {
 public:
  explicit SessionHandler(ItmSession& session) : session_(session) {}
  void on_data(std::span<const std::uint8_t> bytes, std::uint64_t now_us) override { session_.feed(bytes, now_us); }
  void on_idle(std::uint64_t now_us) override { session_.idle(now_us); }
  [[nodiscard]] bool wants_idle() const override { return session_.wants_idle(); }
  void on_end(std::uint64_t now_us) override { session_.finish(now_us); }

 private:
  ItmSession& session_;
};

}  // namespace

void run_decode_loop(ByteSource& source, ItmSession& session, BatchedWriter& writer, Progress& progress,
                     const StreamLoopOptions& options) {
  SessionHandler handler(session);
  run_stream_loop(source, handler, writer, progress, options);
}

}  // namespace tp
