#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/error_code.hpp"
#include "core/log.hpp"
#include "core/number.hpp"
#include "core/out_buffer.hpp"
#include "core/quantity.hpp"
#include "core/signals.hpp"

using namespace tp;

TEST_CASE("error codes: Callisto's are its schema's Error.code enum, in order; names round-trip") {
  std::ifstream schema_file(TRACEPIPE_SOURCE_DIR "/schemas/server-message.schema.json");
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

namespace {

// All a pipe's reader gets until the writer closes its end.
std::string read_to_end(int fd) {
  std::string all;
  char piece[65536];
  for (;;) {
    const ssize_t n = ::read(fd, piece, sizeof piece);
    if (n <= 0) return all;
    all.append(piece, static_cast<std::size_t>(n));
  }
}

// An encoder that writes each batch as it is.
void as_is(std::string_view batch, OutBuffer& out) {
  out += batch;
}

// Records of varying length (each numbered), as a decoder appends them.
std::string record(int i) {
  return std::to_string(i) + std::string(static_cast<std::size_t>(i % 97), 'x') + '\n';
}

}  // namespace

TEST_CASE("batched writer in the background: every batch, in order, written when flush returns, counted" *
          doctest::test_suite("threads")) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string got;
  std::thread reader([&] { got = read_to_end(fds[0]); });
  std::string sent;
  {
    BatchedWriter writer(fds[1], true, 4096);
    writer.write_in_background(as_is);
    for (int i = 0; i < 20000; ++i) {
      writer.buffer() += record(i);
      writer.commit();
      sent += record(i);
    }
    writer.flush();
    CHECK(writer.bytes_written() == sent.size());
    CHECK(writer.write_calls() >= sent.size() / 5120);  // batches of 4096 bytes and a record
  }                                                     // closes the pipe
  reader.join();
  ::close(fds[0]);
  CHECK(got.size() == sent.size());
  CHECK(got == sent);

  char path[] = "/tmp/tracepipe-writer-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  BatchedWriter to_file(fd, true, 1024);
  to_file.write_in_background(as_is);
  for (int i = 0; i < 1000; ++i) to_file.write(record(i));
  to_file.flush();
  CHECK(std::filesystem::file_size(path) == to_file.bytes_written());
  ::unlink(path);
}

TEST_CASE("batched writer with an encoder: every batch encoded once, in order, by the thread or by a waiting owner" *
          doctest::test_suite("threads")) {
  // The encoder writes each record twice: the output must be every record appended, twice,
  // in order. It is slow on the thread, so full batches find it busy and the owner encodes.
  const std::thread::id owner = std::this_thread::get_id();
  std::atomic<int> by_owner{0};
  std::atomic<int> by_thread{0};
  const auto twice = [&](std::string_view batch, OutBuffer& out) {
    if (std::this_thread::get_id() == owner) {
      ++by_owner;
    } else {
      ++by_thread;
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // pace: a slow encoder is the scenario
    }
    std::size_t start = 0;
    while (start < batch.size()) {
      const std::size_t end = batch.find('\n', start) + 1;
      REQUIRE(end != 0);  // batches are whole records
      out += batch.substr(start, end - start);
      out += batch.substr(start, end - start);
      start = end;
    }
  };
  char path[] = "/tmp/tracepipe-encoder-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  std::string expected;
  {
    BatchedWriter writer(fd, true, 2048);
    writer.buffer() += "before\n";  // appended before the encoder: written as it is
    writer.write_in_background(twice);
    expected = "before\n";
    for (int i = 0; i < 5000; ++i) {
      writer.buffer() += record(i);
      writer.commit();
      expected += record(i) + record(i);
    }
    const std::string large = std::string(4000, 'y') + "\n";  // larger than a batch: encoded too
    writer.write(large);
    expected += large + large;
    writer.buffer() += "last\n";  // less than a batch: flush() has the thread encode it
    writer.flush();
    expected += "last\nlast\n";
    CHECK(writer.bytes_written() == expected.size());
  }
  std::ifstream in(path, std::ios::binary);
  const std::string got{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ::unlink(path);
  CHECK(got == expected);
  CHECK(by_thread.load() > 0);
  CHECK(by_owner.load() > 0);
}

TEST_CASE("batched writer with an encoder: an encoder that throws is a failed write, reported to the owner" *
          doctest::test_suite("threads")) {
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  BatchedWriter writer(fd, true, 1024);
  writer.write_in_background([](std::string_view batch, OutBuffer& out) {
    if (batch.find("bad") != std::string_view::npos) throw Error(ExitCode::failure, "cannot encode: bad");
    out += batch;
  });
  for (int i = 0; i < 100; ++i) writer.write(record(i));
  writer.flush();
  CHECK(writer.bytes_written() > 0);
  writer.write("bad\n");
  CHECK_THROWS_WITH_AS(writer.flush(), doctest::Contains("cannot encode"), Error);
}

TEST_CASE("batched writer in the background: a reader gone is BrokenPipe, a full disk an error, both at the owner" *
          doctest::test_suite("threads")) {
  std::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);
  {
    BatchedWriter writer(fds[1], true, 1024);
    writer.write_in_background(as_is);
    const auto write_much = [&] {
      for (int i = 0; i < 1000; ++i) writer.write(record(i));  // a background write fails on the way
      writer.flush();
    };
    CHECK_THROWS_AS(write_much(), BrokenPipe);
    CHECK_THROWS_AS(writer.flush(), BrokenPipe);  // stays failed; nothing left to write at exit
  }
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE(full >= 0);
  BatchedWriter writer(full, true, 1024);
  writer.write_in_background(as_is);
  for (int i = 0; i < 10; ++i) writer.write(record(i));  // less than a batch: nothing handed over yet
  CHECK_THROWS_WITH_AS(
      [&] {
        for (int i = 0; i < 100; ++i) writer.write(record(i));
        writer.flush();
      }(),
      doctest::Contains("cannot write output"), Error);
}

TEST_CASE("batched writer in the background: its thread blocks every signal, so SIGTERM interrupts the owner" *
          doctest::test_suite("threads")) {
  int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const auto tasks = [] {
    std::vector<std::string> ids;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
      ids.push_back(entry.path().filename().string());
    }
    return ids;
  };
  const std::vector<std::string> before = tasks();
  BatchedWriter writer(fd, true, 1024);
  writer.write_in_background(as_is);
  const std::vector<std::string> after = tasks();
  REQUIRE(after.size() == before.size() + 1);
  // glibc's pthread_create starts a thread with every signal blocked and sets the mask it
  // inherits once it runs: read the mask once the thread waits for a batch (sleeping).
  const auto status_of = [](const std::string& id) {
    std::ifstream status("/proc/self/task/" + id + "/status");
    std::string line;
    std::string state;
    std::uint64_t blocked = 0;
    while (std::getline(status, line)) {
      if (line.rfind("State:", 0) == 0) state = line.substr(6);
      if (line.rfind("SigBlk:", 0) == 0) blocked = std::stoull(line.substr(7), nullptr, 16);
    }
    return std::pair{state.find('S') != std::string::npos, blocked};
  };
  for (const std::string& id : after) {
    if (std::find(before.begin(), before.end(), id) != before.end()) continue;
    auto [sleeping, blocked] = status_of(id);
    for (int tries = 0; !sleeping && tries < 60'000; ++tries) {
      // pace: the polling interval of a wait on /proc with a deadline (REQUIRE below)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::tie(sleeping, blocked) = status_of(id);
    }
    REQUIRE(sleeping);
    const auto bit = [](int signal) { return std::uint64_t{1} << static_cast<unsigned>(signal - 1); };
    CHECK((blocked & bit(SIGTERM)) != 0);
    CHECK((blocked & bit(SIGINT)) != 0);
    CHECK((blocked & bit(SIGHUP)) != 0);
  }
  sigset_t mine;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &mine);
  CHECK(::sigismember(&mine, SIGTERM) == 0);  // the owner's mask is as it was
}

TEST_CASE("parse_whole_number: all of the text, in range") {
  CHECK(tp::parse_whole_number<std::uint16_t>("65535") == 65535);
  CHECK_FALSE(tp::parse_whole_number<std::uint16_t>("65536"));
  CHECK_FALSE(tp::parse_whole_number<std::uint32_t>(""));
  CHECK_FALSE(tp::parse_whole_number<std::uint32_t>("12x"));
  CHECK_FALSE(tp::parse_whole_number<std::uint32_t>("-1"));
  CHECK(tp::parse_whole_number<std::uint64_t>("ffffffff80100580", 16) == 0xffffffff80100580ULL);
}

TEST_CASE("parse_byte_count: exact for whole numbers, bounded, never wrapped") {
  CHECK(tp::parse_byte_count("4G") == std::uint64_t{1} << 32U);
  CHECK(tp::parse_byte_count("4G", std::uint64_t{1} << 32U) == std::uint64_t{1} << 32U);
  CHECK_THROWS_AS((void)tp::parse_byte_count("5G", std::uint64_t{1} << 32U), tp::Error);
  CHECK_THROWS_AS((void)tp::parse_byte_count("4294967297", std::uint64_t{1} << 32U), tp::Error);
  CHECK_THROWS_AS((void)tp::parse_byte_count("4.5G", std::uint64_t{1} << 32U), tp::Error);
  // Exact past 2^53, where a double is not.
  CHECK(tp::parse_byte_count("9007199254740993") == 9007199254740993ULL);
  CHECK(tp::parse_byte_count("1.5K") == 1536);
  CHECK(tp::parse_byte_count("64KB") == 65536);
  // Past the default bound (2^62) or 2^64: refused, not wrapped.
  CHECK_THROWS_AS((void)tp::parse_byte_count("18446744073709551616"), tp::Error);
  CHECK_THROWS_AS((void)tp::parse_byte_count("17179869184G"), tp::Error);
  CHECK_THROWS_AS((void)tp::parse_byte_count("4611686018427387905"), tp::Error);
  CHECK_THROWS_AS((void)tp::parse_byte_count("-1"), tp::Error);
  CHECK_THROWS_AS((void)tp::parse_byte_count("G"), tp::Error);
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

// stop_with_parent_from_environment in a child of this test (fork), as a reader trace-lab
// starts runs it: the child's exit status says what it found (0: as expected).
namespace {
int stop_with_parent_in_child(const std::string& value, int expected_stop, int expected_death_signal) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::setenv(tp::stop_with_parent_variable, value.c_str(), 1);
    tp::install_stop_signal_handlers();
    tp::stop_with_parent_from_environment();
    int death_signal = 0;
    ::prctl(PR_GET_PDEATHSIG, &death_signal);
    const bool as_expected = tp::stop_requested() == expected_stop && death_signal == expected_death_signal &&
                             std::getenv(tp::stop_with_parent_variable) == nullptr;
    ::_exit(as_expected ? 0 : 1);
  }
  int status = -1;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
}  // namespace

TEST_CASE("stop with parent: the named parent's child stops when it dies, even before the request") {
  // A process that has ended (reaped): the child's named parent died before it got to ask.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  CHECK(stop_with_parent_in_child(std::to_string(gone), SIGTERM, 0) == 0);
  // Its parent alive: the kernel is asked for SIGTERM at its death, no stop now.
  CHECK(stop_with_parent_in_child(std::to_string(::getpid()), 0, SIGTERM) == 0);
  // A living process that is not its parent (inherited past a child): nothing asked.
  CHECK(stop_with_parent_in_child("1", 0, 0) == 0);
  // A zombie (its parent has not waited for it yet) has ended too.
  const pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  siginfo_t exited{};
  // Waits for its exit without reaping it (WNOWAIT): from then on it is a zombie.
  REQUIRE(::waitid(P_PID, static_cast<id_t>(zombie), &exited, WEXITED | WNOWAIT) == 0);
  CHECK(stop_with_parent_in_child(std::to_string(zombie), SIGTERM, 0) == 0);
  ::waitpid(zombie, nullptr, 0);
  // Not a pid as the kernel writes one (its parent with a leading zero, 0, signs, past the
  // pid range, text): nothing asked, and the variable is gone all the same.
  CHECK(stop_with_parent_in_child("0" + std::to_string(::getpid()), 0, 0) == 0);
  CHECK(stop_with_parent_in_child("0", 0, 0) == 0);
  CHECK(stop_with_parent_in_child("-1", 0, 0) == 0);
  CHECK(stop_with_parent_in_child("+1", 0, 0) == 0);
  CHECK(stop_with_parent_in_child("4194304", 0, 0) == 0);
  CHECK(stop_with_parent_in_child("99999999999999999999", 0, 0) == 0);
  CHECK(stop_with_parent_in_child("12ab", 0, 0) == 0);
  CHECK(stop_with_parent_in_child("", 0, 0) == 0);
}

TEST_CASE("printable: a peer's bytes cannot drive the terminal") {
  CHECK(tp::printable("plain text\twith a tab, é, ✓") == "plain text\twith a tab, é, ✓");
  CHECK(tp::printable("\x1b[2J\x1b]0;title\x07") == "\\x1b[2J\\x1b]0;title\\x07");
  CHECK(tp::printable("a\nb\rc\x7f") == "a\\x0ab\\x0dc\\x7f");
  CHECK(tp::printable("csi \xc2\x9b"
                      "31m") == "csi \\u009b31m");
  CHECK(tp::printable(std::string_view("nul\0x", 5)) == "nul\\x00x");
}
