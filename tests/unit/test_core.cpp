#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/error_code.hpp"
#include "core/log.hpp"
#include "core/number.hpp"
#include "core/signals.hpp"

using namespace tp;

TEST_CASE("error codes: Callisto's are its schema's Error.code enum, in order; names round-trip") {
  std::ifstream schema_file(TRACEPIPE_SOURCE_DIR "/lib/serve/schema/server-message.schema.json");
  REQUIRE(schema_file);
  const std::string schema((std::istreambuf_iterator<char>(schema_file)), std::istreambuf_iterator<char>());
  std::smatch found;
  REQUIRE(std::regex_search(
      schema, found,
      std::regex(R"re("code":\s*\{\s*"oneOf":\s*\[\s*\{\s*"type":\s*"null"\s*\},\s*\{\s*"enum":\s*\[([^\]]*)\])re")));
  const std::string listed = found[1].str();
  std::vector<std::string> from_schema;
  const std::regex quoted(R"re("(\w+)")re");
  for (auto it = std::sregex_iterator(listed.begin(), listed.end(), quoted); it != std::sregex_iterator(); ++it) {
    from_schema.push_back((*it)[1].str());
  }
  REQUIRE(from_schema.size() == 12);
  std::vector<std::string> callisto;
  for (int i = 0; i <= static_cast<int>(ErrorCode::memory_access_error); ++i) {
    const auto code = static_cast<ErrorCode>(i);
    const std::string name(error_code_name(code));
    CHECK(parse_error_code(name) == code);
    if (is_callisto_code(code)) callisto.push_back(name);
  }
  CHECK(callisto == from_schema);
  CHECK_FALSE(parse_error_code("probe_not_found"));
  CHECK_FALSE(parse_error_code(""));
  CHECK(error_code_for_exit(ExitCode::usage) == ErrorCode::invalid_parameters);
  CHECK(error_code_for_exit(ExitCode::timeout) == ErrorCode::target_not_responding);
  CHECK(error_code_for_exit(ExitCode::internal) == ErrorCode::internal_error);
  CHECK(Error(ExitCode::io_error, "x").error_code() == ErrorCode::io_error);
  CHECK(Error(ExitCode::unsupported, "x", ErrorCode::baud_rate_error).error_code() == ErrorCode::baud_rate_error);
}

TEST_CASE("byte source: missing file and directory give clear errors and exit codes") {
  try {
    (void)ByteSource::open("/nonexistent/tracepipe.bin");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::not_found);
    CHECK(std::string(e.what()).find("/nonexistent/tracepipe.bin") != std::string::npos);
  }
  try {
    (void)ByteSource::open("/");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
  }
}

TEST_CASE("byte source: a pipe times out when quiet, then reads, then ends") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ByteSource source = ByteSource::from_fd(fds[0], "pipe", true);
  std::uint8_t buffer[16];
  CHECK(source.read(buffer, 10).status == ReadStatus::timeout);
  REQUIRE(::write(fds[1], "abc", 3) == 3);
  const ReadResult r = source.read(buffer, 10);
  CHECK(r.status == ReadStatus::data);
  CHECK(r.size == 3);
  ::close(fds[1]);
  CHECK(source.read(buffer, 10).status == ReadStatus::end_of_input);
}

TEST_CASE("batched writer: few writes, flush on capacity, EPIPE becomes BrokenPipe") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  {
    BatchedWriter writer(fds[1], false, 1024);
    for (int i = 0; i < 100; ++i) writer.write("0123456789\n");  // 1100 bytes
    CHECK(writer.write_calls() == 1);
    writer.flush();
    CHECK(writer.write_calls() == 2);
    CHECK(writer.bytes_written() == 1100);
  }
  ::close(fds[0]);
  std::signal(SIGPIPE, SIG_IGN);
  BatchedWriter writer(fds[1], true, 1024);
  writer.write("x");
  CHECK_THROWS_AS(writer.flush(), BrokenPipe);
}

TEST_CASE("batched writer: flush_if_stale bounds the delay") {
  char path[] = "/tmp/tracepipe-writer-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  BatchedWriter writer(fd, true);
  writer.set_max_delay_us(1000);
  writer.flush();
  writer.write("a");
  writer.flush_if_stale(monotonic_us());  // well within the delay: nothing written
  struct stat st {};
  ::fstat(fd, &st);
  CHECK(st.st_size == 0);
  writer.flush_if_stale(monotonic_us() + 2000);
  ::fstat(fd, &st);
  CHECK(st.st_size == 1);
  ::unlink(path);
}

TEST_CASE("parse_whole_number: all of the text, in range") {
  CHECK(tp::parse_whole_number<std::uint16_t>("65535") == 65535);
  CHECK_FALSE(tp::parse_whole_number<std::uint16_t>("65536"));
  CHECK_FALSE(tp::parse_whole_number<std::uint32_t>(""));
  CHECK_FALSE(tp::parse_whole_number<std::uint32_t>("12x"));
  CHECK_FALSE(tp::parse_whole_number<std::uint32_t>("-1"));
  CHECK(tp::parse_whole_number<std::uint64_t>("ffffffff80100580", 16) == 0xffffffff80100580ULL);
}

TEST_CASE("tool options: negative numbers and numbers past 2^64 are usage errors, whatever the option's type") {
  const auto run = [](std::vector<std::string> args) {
    CLI::App app{"test", "test"};
    tp::CommonOptions common;
    std::uint64_t limit = 0;
    double rate = 1;
    std::string name;
    app.add_option("--limit", limit);
    app.add_option("--rate", rate);
    app.add_option("--name", name);
    auto* sub = app.add_subcommand("sub", "a subcommand");
    std::uint64_t every = 0;
    sub->add_option("--every", every);
    tp::add_common_options(app, common);
    args.insert(args.begin(), "test");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::uint64_t seen = 0;
    const int code = tp::run_tool(app, common, static_cast<int>(argv.size()), argv.data(), [&](const tp::Logger&) {
      seen = limit + every;
      return tp::ExitCode::ok;
    });
    return std::pair{code, seen};
  };
  CHECK(run({"--limit", "5"}) == std::pair{0, std::uint64_t{5}});
  CHECK(run({"--limit", "0x10"}) == std::pair{0, std::uint64_t{16}});
  CHECK(run({"--limit", "18446744073709551615"}).first == 0);
  CHECK(run({"--limit", "-1"}).first == 2);
  CHECK(run({"--limit=-1"}).first == 2);
  CHECK(run({"--limit", "18446744073709551616"}).first == 2);
  CHECK(run({"--limit", "0x10000000000000000"}).first == 2);
  CHECK(run({"--rate", "-0.5"}).first == 2);
  CHECK(run({"--rate", "-.5"}).first == 2);
  CHECK(run({"--limit", "-0x10"}).first == 2);
  CHECK(run({"--rate", "-1e3"}).first == 2);
  CHECK(run({"sub", "--every", "-3"}).first == 2);
  CHECK(run({"sub", "--every", "3"}) == std::pair{0, std::uint64_t{3}});
  CHECK(run({"--name", "-"}).first == 0);  // '-' for stdin, text with a dash: not numbers
  CHECK(run({"--name", "-x"}).first == 0);
  CHECK(run({"--name", "-1abc"}).first == 0);  // a token that starts like a number is text
  tp::reset_stop_request();
}

TEST_CASE("printable: a peer's bytes cannot drive the terminal") {
  CHECK(tp::printable("plain text\twith a tab, é, ✓") == "plain text\twith a tab, é, ✓");
  CHECK(tp::printable("\x1b[2J\x1b]0;title\x07") == "\\x1b[2J\\x1b]0;title\\x07");
  CHECK(tp::printable("a\nb\rc\x7f") == "a\\x0ab\\x0dc\\x7f");
  CHECK(tp::printable("csi \xc2\x9b"
                      "31m") == "csi \\u009b31m");
  CHECK(tp::printable(std::string_view("nul\0x", 5)) == "nul\\x00x");
}
