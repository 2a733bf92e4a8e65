#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "core/batched_writer.hpp"
#include "core/byte_source.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/number.hpp"

using namespace tp;

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
