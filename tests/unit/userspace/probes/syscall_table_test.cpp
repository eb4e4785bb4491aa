// The fallback mode's copies (issue 18): copy_file_range, sendfile and
// splice are traced, by this architecture's numbers, with the kinds the BPF
// side reads their fds and lengths by.
#include "probes/syscall_table.h"

#include <sys/syscall.h>

#include <set>

#include <gtest/gtest.h>

#include "jobio.h"

namespace ckpt {
namespace {

const TracedSyscall* find(std::string_view name) {
  for (const auto& sc : traced_syscalls())
    if (sc.name == name) return &sc;
  return nullptr;
}

TEST(SyscallTable, CopiesBetweenFilesAreTracedWithTheirKinds) {
  struct Expected {
    std::string_view name;
    long number;
    unsigned kind;
  };
  for (const auto& e : {Expected{"copy_file_range", SYS_copy_file_range, CKPT_SC_COPY_FILE_RANGE},
                        Expected{"sendfile", SYS_sendfile, CKPT_SC_SENDFILE},
                        Expected{"splice", SYS_splice, CKPT_SC_SPLICE}}) {
    const TracedSyscall* sc = find(e.name);
    ASSERT_NE(sc, nullptr) << e.name;
    EXPECT_EQ(sc->number, e.number) << e.name;
    EXPECT_EQ(sc->kind, e.kind) << e.name;
  }
}

// Linux AIO (bpf/jobio_aio.bpf.h): io_submit's requests, io_getevents' and
// io_pgetevents' completions (the same first four arguments).
TEST(SyscallTable, LinuxAioIsTracedWithItsKinds) {
  struct Expected {
    std::string_view name;
    long number;
    unsigned kind;
  };
  for (const auto& e : {Expected{"io_submit", SYS_io_submit, CKPT_SC_IO_SUBMIT},
                        Expected{"io_getevents", SYS_io_getevents, CKPT_SC_IO_GETEVENTS},
                        Expected{"io_pgetevents", SYS_io_pgetevents, CKPT_SC_IO_GETEVENTS}}) {
    const TracedSyscall* sc = find(e.name);
    ASSERT_NE(sc, nullptr) << e.name;
    EXPECT_EQ(sc->number, e.number) << e.name;
    EXPECT_EQ(sc->kind, e.kind) << e.name;
  }
}

TEST(SyscallTable, EveryNumberFitsTheTableAndAppearsOnce) {
  std::set<long> seen;
  for (const auto& sc : traced_syscalls()) {
    EXPECT_GE(sc.number, 0) << sc.name;
    EXPECT_LT(sc.number, CKPT_MAX_SYSCALLS) << sc.name;
    EXPECT_TRUE(seen.insert(sc.number).second) << sc.name << " twice";
    EXPECT_GT(sc.kind, static_cast<unsigned>(CKPT_SC_NONE)) << sc.name;
    EXPECT_LT(sc.kind, static_cast<unsigned>(CKPT_SC_KIND_MAX)) << sc.name;
  }
}

}  // namespace
}  // namespace ckpt
