#include "test_support.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

namespace usbemu {
namespace {

using Clock = std::chrono::steady_clock;
int passed = 0;
int failed = 0;

}  // namespace

void check(bool ok, const std::string& name, const std::string& detail) {
  if (ok) {
    ++passed;
    std::printf("ok   %s\n", name.c_str());
  } else {
    ++failed;
    std::printf("FAIL %s%s%s\n", name.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  }
  std::fflush(stdout);
}

int summary() {
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Run run_program(const std::string& program, const std::string& work_dir, const std::vector<std::string>& args,
                const std::function<void(pid_t, std::size_t)>& watch) {
  const std::string out_path = work_dir + "/out.bin";
  const std::string err_path = work_dir + "/err.txt";
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  Run run;
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::seconds(120);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, WNOHANG, &usage) == 0) {
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      run.err = "killed after 120 s\n";
      break;
    }
    if (watch) {
      std::ifstream out(out_path, std::ios::binary | std::ios::ate);
      watch(pid, out ? static_cast<std::size_t>(out.tellg()) : 0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // pace: the polling interval of a wait with a deadline
  }
  run.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  run.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = read_file(out_path);
  run.err += read_file(err_path);
  return run;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace usbemu
