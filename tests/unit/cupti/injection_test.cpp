// The built libckptscope_cupti.so as the CUDA driver uses it: dlopen, then
// InitializeInjection. Each case runs in a forked child, as the library's
// init runs once per process.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "cupti_test_support.h"

namespace ckpt::cupti {
namespace {

struct ChildResult {
  int init_returned = -1;
  int second_returned = -1;
  std::string err;  // the child's stderr
  int exit_code = -1;
};

// In a child: set or unset the socket variable, dlopen the library, call
// InitializeInjection twice, report. stderr is captured through a pipe.
ChildResult run_injection(const char* socket_path) {
  int out[2], err[2];
  EXPECT_EQ(::pipe(out), 0);
  EXPECT_EQ(::pipe(err), 0);
  std::fflush(nullptr);  // or the child's exit() prints the parent's buffered output again
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(err[1], STDERR_FILENO);
    ::close(out[0]);
    ::close(err[0]);
    if (socket_path)
      ::setenv("CKPTSCOPE_CUPTI_SOCKET", socket_path, 1);
    else
      ::unsetenv("CKPTSCOPE_CUPTI_SOCKET");
    void* lib = ::dlopen(CKPTSCOPE_CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
      ::_exit(3);
    }
    auto init = reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection"));
    if (!init) ::_exit(4);
    const int a = init();
    const int b = init();  // the driver calls it once; a second call does nothing
    const int results[2] = {a, b};
    (void)!::write(out[1], results, sizeof(results));
    std::exit(0);  // atexit handlers and destructors run, as in a job
  }
  ::close(out[1]);
  ::close(err[1]);
  ChildResult r;
  int results[2] = {-1, -1};
  if (::read(out[0], results, sizeof(results)) == sizeof(results)) {
    r.init_returned = results[0];
    r.second_returned = results[1];
  }
  std::array<char, 4096> buf;
  ssize_t n;
  while ((n = ::read(err[0], buf.data(), buf.size())) > 0) r.err.append(buf.data(), n);
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

TEST(Injection, WithoutTheSocketVariableItReturnsDoingNothing) {
  const ChildResult r = run_injection(nullptr);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.init_returned, 1);
  EXPECT_EQ(r.second_returned, 1);
  EXPECT_EQ(r.err,
            "ckptscope-cupti: CKPTSCOPE_CUPTI_SOCKET is not set: GPU copies are not traced "
            "(`ckptscope run` sets it along with CUDA_INJECTION64_PATH)\n")
      << "one line, once, and nothing from CUPTI";
}

TEST(Injection, NobodyListeningItReturnsDoingNothing) {
  const ChildResult r = run_injection("/nonexistent/ckptscope-cupti.sock");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.init_returned, 1);
  EXPECT_NE(r.err.find("ckptscope-cupti: cannot connect to the collector at "
                       "/nonexistent/ckptscope-cupti.sock: No such file or directory"),
            std::string::npos)
      << r.err;
}

TEST(Injection, NoGpuHereTheCollectorHearsWhy) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("ckpt-cupti-inject-" + std::to_string(::getpid()) + ".sock");
  ::unlink(path.c_str());
  const int listener = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 4), 0);

  const ChildResult r = run_injection(path.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.init_returned, 1);
  EXPECT_EQ(r.second_returned, 1);
  EXPECT_NE(r.err.find("ckptscope-cupti: cuptiSubscribe_v2 returned CUPTI_ERROR_UNKNOWN: no CUDA "
                       "driver or GPU"),
            std::string::npos)
      << r.err;

  const int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(conn, 0);
  const auto got = test::receive_all(conn);
  ASSERT_EQ(got.messages.size(), 1u) << "one HELLO, from one InitializeInjection";
  const auto& h = std::get<ckpt_gpu_hello>(got.messages[0]);
  EXPECT_EQ(h.status, uint32_t{CKPT_GPU_NO_GPU});
  EXPECT_NE(h.hdr.pid, static_cast<uint32_t>(::getpid())) << "the child's pid";
  EXPECT_TRUE(got.eof);
  ::fcntl(listener, F_SETFL, O_NONBLOCK);
  EXPECT_LT(::accept4(listener, nullptr, nullptr, 0), 0) << "one connection only";
  ::close(conn);
  ::close(listener);
  ::unlink(path.c_str());
}

TEST(Injection, ExportsInitializeInjectionOnly) {
  FILE* p = ::popen("nm -D --defined-only '" CKPTSCOPE_CUPTI_LIB "'", "r");
  ASSERT_NE(p, nullptr);
  std::set<std::string> exported;
  char line[1024];
  while (std::fgets(line, sizeof(line), p)) {
    std::istringstream in(line);
    std::string addr, type, name;
    in >> addr >> type >> name;
    if (!name.empty()) exported.insert(name);
  }
  ASSERT_EQ(::pclose(p), 0);
  EXPECT_EQ(exported, std::set<std::string>{"InitializeInjection"});
}

}  // namespace
}  // namespace ckpt::cupti
