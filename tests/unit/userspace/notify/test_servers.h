// Test helpers for the notify tests: temporary directories, files, and the
// Python servers of tests/notify/ run as child processes that are always
// killed and reaped, whatever the test's outcome.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/scratch_dir.h"

extern char** environ;  // NOLINT(readability-redundant-declaration)

namespace ckpt::notify::testutil {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

using TempDir = ckpt::test::ScratchDir;

// Runs a command to completion; its exit status (-1 when it could not start).
inline int run_quietly(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// libcurl honours http_proxy/all_proxy; the test servers are on loopback.
inline void bypass_proxies_for_loopback() {
  setenv("no_proxy", "127.0.0.1,localhost", 1);  // NOLINT(concurrency-mt-unsafe)
  setenv("NO_PROXY", "127.0.0.1,localhost", 1);  // NOLINT(concurrency-mt-unsafe)
}

constexpr const char* kPython = "/usr/bin/python3";

inline bool python_has_aiosmtpd() {
  static const bool has = run_quietly({kPython, "-c", "import aiosmtpd.controller"}) == 0;
  return has;
}

inline std::string server_script(const std::string& name) {
  return std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/notify/" + name;
}

// One of the Python servers. It writes its port to a file once it is
// listening; start() waits for that, or for the process to die.
class ServerProcess {
 public:
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() { stop(); }

  // Empty string on success, otherwise why it did not come up.
  std::string start(const std::string& script, const std::vector<std::string>& args,
                    const std::string& work_dir) {
    port_file_ = work_dir + "/port";
    log_ = work_dir + "/server.log";
    std::vector<std::string> argv = {kPython, server_script(script), "--port-file", port_file_};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargs;
    for (const auto& a : argv) cargs.push_back(const_cast<char*>(a.c_str()));
    cargs.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    int rc = posix_spawn(&pid_, kPython, &fa, nullptr, cargs.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      pid_ = -1;
      return "posix_spawn " + std::string(kPython) + " failed";
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      std::string text = read_file(port_file_);
      if (!text.empty()) {
        port_ = std::stoi(text);
        return {};
      }
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return script + " exited before listening:\n" + read_file(log_);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return script + " did not write its port within 15 s:\n" + read_file(log_);
  }

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {  // 2 s to shut down cleanly, then SIGKILL
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string log() const { return read_file(log_); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string port_file_;
  std::string log_;
};

}  // namespace ckpt::notify::testutil
