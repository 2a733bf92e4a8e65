// Fuzz target: the ChibiOS shell replies. Arbitrary text is split as a reply, parsed by
// every command's parser and as a save file; whatever parses is reconstructed, rendered
// and formatted. Nothing may crash; malformed input is a ShellError or tp::Error.
#include <string>
#include <string_view>
#include <vector>

#include "chibios/records.hpp"
#include "chibios/save_file.hpp"
#include "chibios/shell_output.hpp"
#include "chibios/shell_session.hpp"
#include "chibios/timeline.hpp"
#include "chibios/timeline_svg.hpp"
#include "core/error.hpp"

namespace {
template <typename F>
void guarded(F&& body) {
  try {
    body();
  } catch (const tp::chibios::ShellError&) {
  } catch (const tp::Error&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tp::chibios;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)split_reply("threads_list", text);
  const std::size_t cut = text.find("\n--\n");
  const std::vector<std::string> first = split_lines(text.substr(0, cut));
  const std::vector<std::string> second =
      cut == std::string_view::npos ? std::vector<std::string>{} : split_lines(text.substr(cut + 4));
  guarded([&] { (void)parse_threads_stat(first); });
  guarded([&] { (void)parse_threads_uc(first); });
  guarded([&] { (void)parse_trigger_reply(first); });
  guarded([&] { parse_run_reply(first); });
  guarded([&] {
    const ThreadList list = parse_threads_list(first);
    const TimestampLog log = parse_threads_timestamps(second);
    const Timeline timeline = reconstruct(list, log);
    (void)render_svg(timeline);
    for (const Format format : {Format::ndjson, Format::csv, Format::text}) {
      (void)format_timeline(timeline, format, RecordContext{});
    }
  });
  guarded([&] {
    const SavedData saved = parse_save(text);
    (void)format_save(saved);
  });
  return 0;
}
