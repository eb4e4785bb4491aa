// The program selection over the three kernels' measured BTF (design of
// issue 18: bpftool on each kernel's vmlinux): 6.1 (no filp_flush, no
// io_uring_submit_req, no mm_filemap_fault/map_pages tracepoints), 6.12
// (everything, io_uring_complete in the 7-argument form), and this project's
// host, 6.18 (everything, io_uring_complete as (ctx, req, cqe), fentry
// refused with EPERM). Each kernel's facts give a known mode, program list
// and notes.
#include "probes/jobio_programs.h"

#include <algorithm>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jobio.h"

namespace ckpt {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using Set = std::set<std::string>;

const Set kAllFunctions = {
    "vfs_read",        "vfs_write",        "vfs_readv",           "vfs_writev",
    "vfs_fsync_range", "filp_flush",       "filp_close",          "do_sys_ftruncate",
    "do_sys_openat2",  "do_renameat2",     "do_mkdirat",          "do_unlinkat",
    "do_rmdir",        "vfs_statx",        "vfs_copy_file_range", "do_splice_direct",
    "filemap_fault",   "set_pte_range",    "do_set_pte",          "do_set_pmd",
    "io_submit_one",   "do_io_getevents",  "ksys_read",           "__x64_sys_openat",
    "__x64_sys_chdir", "__x64_sys_fchdir", "vfs_clone_file_range"};
const Set kAllTracepoints = {"sys_enter",
                             "sys_exit",
                             "sched_switch",
                             "sched_process_fork",
                             "sched_process_exit",
                             "mm_filemap_fault",
                             "mm_filemap_map_pages",
                             "mm_filemap_add_to_page_cache",
                             "rss_stat",
                             "writeback_dirty_folio",
                             "page_fault_user",
                             "page_fault_kernel",
                             "io_uring_submit_req",
                             "io_uring_complete",
                             "block_bio_queue",
                             "block_rq_complete",
                             "block_bio_complete",
                             "balance_dirty_pages"};

Set without(Set s, const Set& gone) {
  for (const auto& g : gone) s.erase(g);
  return s;
}

KernelFeatures linux_6_1() {
  KernelFeatures k;
  k.hz = 250;
  k.balance_dirty_pages_params = 13;
  k.release = "6.1.0-test";
  k.trampolines = true;
  k.btf_functions = without(kAllFunctions, {"filp_flush", "set_pte_range"});
  k.btf_tracepoints =
      without(kAllTracepoints, {"io_uring_submit_req", "mm_filemap_fault", "mm_filemap_map_pages"});
  k.btf_tracepoints.insert("io_uring_submit_sqe");
  k.io_uring_complete_params = 8;
  return k;
}

KernelFeatures linux_6_12() {
  KernelFeatures k;
  k.hz = 250;
  k.balance_dirty_pages_params = 9;
  k.release = "6.12.0-test";
  k.trampolines = true;
  k.btf_functions = without(kAllFunctions, {"do_set_pte"});
  k.btf_tracepoints = kAllTracepoints;
  k.io_uring_complete_params = 8;
  return k;
}

// This host: what KernelFeatures::probe() says here (tests/bpf checks it live).
KernelFeatures this_host() {
  KernelFeatures k;
  k.hz = 250;
  k.balance_dirty_pages_params = 9;
  k.release = "6.18.0-test";
  k.trampolines = false;
  k.trampoline_note =
      "the kernel refuses fentry programs: loading one on vfs_read failed: EPERM (Operation not "
      "permitted)";
  k.btf_functions = without(kAllFunctions, {"do_set_pte"});
  k.btf_tracepoints = kAllTracepoints;
  k.io_uring_complete_params = 4;
  return k;
}

// The programs every file-layer plan loads whatever the kernel.
const Set kFileLayerCore = {
    "fl_read_enter",       "fl_read_exit",       "fl_write_enter",     "fl_write_exit",
    "fl_fsync_enter",      "fl_fsync_exit",      "fl_open_enter",      "fl_open_exit",
    "fl_readv_enter",      "fl_readv_exit",      "fl_writev_enter",    "fl_writev_exit",
    "fl_ftruncate_enter",  "fl_ftruncate_exit",  "fl_rename_enter",    "fl_rename_exit",
    "fl_mkdir_enter",      "fl_mkdir_exit",      "fl_unlink_enter",    "fl_unlink_exit",
    "fl_rmdir_enter",      "fl_rmdir_exit",      "fl_stat_enter",      "fl_stat_exit",
    "fl_copy_enter",       "fl_copy_exit",       "fl_splice_enter",    "fl_splice_exit",
    "fl_fault_enter",      "fl_fault_exit",      "fl_do_set_pmd_exit", "on_page_cache_add",
    "fl_aio_submit_enter", "fl_aio_submit_exit", "fl_aio_wait_enter",  "fl_aio_wait_exit",
    "on_folio_dirtied",    "fl_chdir_enter",     "fl_chdir_exit",      "fl_fchdir_enter",
    "fl_fchdir_exit",      "fl_clone_enter",     "fl_clone_exit",      "on_bio_queue",
    "on_rq_complete",      "on_bio_complete",    "on_dirty_throttle"};

Set plus(Set s, const Set& more) {
  s.insert(more.begin(), more.end());
  return s;
}

TEST(JobioPrograms, Linux61TracesTheFileLayerWithCloseAndSubmitSqe) {
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, linux_6_1());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_FILE_LAYER));
  EXPECT_EQ(plan->load, plus(kFileLayerCore, {"fl_close_enter", "fl_close_exit", "fl_do_set_pte",
                                              "on_uring_submit_sqe", "on_uring_complete_res"}));
  EXPECT_THAT(plan->unseen, IsEmpty());
}

TEST(JobioPrograms, Linux612TracesTheFileLayerWithFlushAndTheResForm) {
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, linux_6_12());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_FILE_LAYER));
  EXPECT_EQ(plan->load, plus(kFileLayerCore, {"fl_flush_enter", "fl_flush_exit", "fl_set_pte_range",
                                              "on_uring_submit_req", "on_uring_complete_res"}));
  EXPECT_THAT(plan->unseen, IsEmpty());
  // file_layer asked for: the same plan.
  auto asked = select_jobio_programs(RequestedProbeMode::FileLayer, linux_6_12());
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->load, plan->load);
}

TEST(JobioPrograms, ThisHostFallsBackToSyscallsSayingEperm) {
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, this_host());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_SYSCALL));
  EXPECT_EQ(probe_mode_name(plan->mode), "syscall");
  EXPECT_EQ(plan->load,
            (Set{"on_sys_enter", "on_sys_exit", "on_fault_tp", "on_map_pages_tp", "on_user_fault",
                 "on_kernel_fault", "on_rss_stat", "on_folio_dirtied", "on_page_cache_add",
                 "on_uring_submit_req", "on_uring_complete_cqe", "on_bio_queue", "on_rq_complete",
                 "on_bio_complete", "on_dirty_throttle"}));
  EXPECT_THAT(plan->reason, HasSubstr("EPERM"));
  // The tracepoints see mmap and io_uring here: nothing goes to the warning.
  EXPECT_THAT(plan->unseen, IsEmpty());
}

// The storage stage of local files needs the block layer's tracepoints: a
// kernel without them says so, and the page-cache side goes on.
TEST(JobioPrograms, WithoutTheBlockTracepointsTheStorageStageIsANote) {
  KernelFeatures k = this_host();
  k.btf_tracepoints.erase("block_rq_complete");
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->load.contains("on_bio_queue"));
  EXPECT_FALSE(plan->load.contains("on_bio_complete"));
  EXPECT_TRUE(plan->load.contains("on_folio_dirtied")) << "what a save left dirty is still seen";
  EXPECT_THAT(plan->unseen,
              ElementsAre(HasSubstr("the bytes calls made the storage read and write (the storage "
                                    "stage of local files) are not seen: no block_bio_queue")));
}

// balance_dirty_pages' pause is in jiffies: without the kernel's CONFIG_HZ
// the throttle is not measured, and the note says why.
TEST(JobioPrograms, WithoutTheKernelsHzTheThrottleIsANote) {
  KernelFeatures k = this_host();
  k.hz = 0;
  k.hz_note = "the kernel's CONFIG_HZ is not known (no /proc/config.gz or /boot/config-x)";
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->load.contains("on_dirty_throttle"));
  EXPECT_THAT(plan->unseen,
              ElementsAre("the time writes were throttled for dirty pages (the storage stage's) is "
                          "not seen: the kernel's CONFIG_HZ is not known (no /proc/config.gz or "
                          "/boot/config-x)"));
}

// The pause's place among the tracepoint's arguments, by its form.
TEST(JobioPrograms, TheThrottlesPauseIsWhereTheKernelsFormHasIt) {
  auto on61 = select_jobio_programs(RequestedProbeMode::Syscall, linux_6_1());
  ASSERT_TRUE(on61);
  EXPECT_EQ(on61->dirty_pause_arg, 10);
  auto here = select_jobio_programs(RequestedProbeMode::Auto, this_host());
  ASSERT_TRUE(here);
  EXPECT_EQ(here->dirty_pause_arg, 6);
  KernelFeatures k = this_host();
  k.balance_dirty_pages_params = 7;
  auto odd = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(odd);
  EXPECT_FALSE(odd->load.contains("on_dirty_throttle"));
  EXPECT_EQ(odd->dirty_pause_arg, 0);
  EXPECT_THAT(odd->unseen, ElementsAre(HasSubstr("balance_dirty_pages has 7 parameters")));
}

TEST(JobioPrograms, FileLayerAskedForOnThisHostIsAnErrorSayingWhy) {
  auto plan = select_jobio_programs(RequestedProbeMode::FileLayer, this_host());
  ASSERT_FALSE(plan);
  EXPECT_THAT(plan.error().message, HasSubstr("--probe-mode file_layer"));
  EXPECT_THAT(plan.error().message, HasSubstr("refuses fentry programs"));
  EXPECT_THAT(plan.error().message, HasSubstr("EPERM"));
}

TEST(JobioPrograms, SyscallModeOn61DoesNotSeeMmap) {
  auto plan = select_jobio_programs(RequestedProbeMode::Syscall, linux_6_1());
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_SYSCALL));
  // Reads through a mapping are not seen; stores through one are (a
  // tracepoint 6.1 has).
  EXPECT_EQ(plan->load, (Set{"on_sys_enter", "on_sys_exit", "on_folio_dirtied",
                             "on_uring_submit_sqe", "on_uring_complete_res", "on_bio_queue",
                             "on_rq_complete", "on_bio_complete", "on_dirty_throttle"}));
  EXPECT_THAT(plan->unseen,
              ElementsAre("mmap'd I/O is not seen: --probe-mode syscall and no mm_filemap_fault "
                          "tracepoint (6.11+)"));
}

// arm64 has no exceptions tracepoints: a write fault on a shared mapping
// counts as a read of its page, and the trace says so.
TEST(JobioPrograms, WithoutThePageFaultTracepointsWriteFaultsAreNotedAsReads) {
  KernelFeatures k = this_host();
  k.btf_tracepoints.erase("page_fault_user");
  k.btf_tracepoints.erase("page_fault_kernel");
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->load.contains("on_user_fault"));
  EXPECT_TRUE(plan->load.contains("on_fault_tp"));
  EXPECT_TRUE(plan->load.contains("on_folio_dirtied"));
  EXPECT_FALSE(plan->load.contains("on_rss_stat"));
  EXPECT_THAT(plan->unseen,
              ElementsAre("which faults write is not seen: no page_fault_user and "
                          "page_fault_kernel tracepoints (x86 only), so a write fault counts as a "
                          "read of its page",
                          "the pages each fault maps are not seen: no page-fault tracepoints to "
                          "start each fault's count from, so reads through a mapping count the "
                          "pages the filemap tracepoints name, a lower bound"));
}

// Without rss_stat, syscall mode counts the pages the filemap tracepoints
// name, and says that is a lower bound.
TEST(JobioPrograms, WithoutRssStatMappedReadsAreALowerBoundAndSaidSo) {
  KernelFeatures k = this_host();
  k.btf_tracepoints.erase("rss_stat");
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->load.contains("on_user_fault"));
  EXPECT_FALSE(plan->load.contains("on_rss_stat"));
  EXPECT_THAT(plan->unseen,
              ElementsAre("the pages each fault maps are not seen: no rss_stat tracepoint, so "
                          "reads through a mapping count the pages the filemap tracepoints name, "
                          "a lower bound"));
}

// The pages a fault installs: set_pte_range on 6.6+, do_set_pte before; a
// kernel with neither counts only the faulting pages, and says so.
TEST(JobioPrograms, TheInstallersOfPagesAreTheKernelsOwnOrANote) {
  auto on_612 = select_jobio_programs(RequestedProbeMode::Auto, linux_6_12());
  ASSERT_TRUE(on_612);
  EXPECT_TRUE(on_612->load.contains("fl_set_pte_range"));
  EXPECT_FALSE(on_612->load.contains("fl_do_set_pte"));
  EXPECT_TRUE(on_612->load.contains("fl_do_set_pmd_exit"));
  KernelFeatures neither = linux_6_12();
  neither.btf_functions.erase("set_pte_range");
  neither.btf_functions.erase("do_set_pmd");
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, neither);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->load.contains("fl_fault_enter"));
  EXPECT_FALSE(plan->load.contains("fl_set_pte_range"));
  EXPECT_THAT(plan->unseen,
              ElementsAre("pages mapped around a fault are not seen: no set_pte_range or "
                          "do_set_pte in this kernel's BTF, so only the page each fault asks for "
                          "counts",
                          "huge pages mapped whole (PMD) are not seen: no do_set_pmd in this "
                          "kernel's BTF, so such a mapping counts only its faulting page"));
}

TEST(JobioPrograms, WithoutTheDirtyTracepointStoresThroughMappingsAreNoted) {
  KernelFeatures k = linux_6_12();
  k.btf_tracepoints.erase("writeback_dirty_folio");
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->load.contains("on_folio_dirtied"));
  EXPECT_THAT(plan->unseen,
              ElementsAre("stores through shared mappings and the bytes a save left dirty in the "
                          "page cache are not seen: no writeback_dirty_folio tracepoint"));
}

TEST(JobioPrograms, A61WithoutTrampolinesNamesBothReasonsForMmap) {
  KernelFeatures k = linux_6_1();
  k.trampolines = false;
  k.trampoline_note =
      "the kernel refuses fentry programs: attaching one to vfs_read failed: "
      "ENOTSUPP";
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_SYSCALL));
  EXPECT_THAT(plan->reason, HasSubstr("attaching one to vfs_read failed"));
  EXPECT_THAT(plan->unseen, ElementsAre("mmap'd I/O is not seen: no trampolines and no "
                                        "mm_filemap_fault tracepoint (6.11+)"));
}

TEST(JobioPrograms, AMissingRequiredFunctionFallsBackNamingIt) {
  KernelFeatures k = linux_6_12();
  k.btf_functions.erase("vfs_fsync_range");
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_SYSCALL));
  EXPECT_THAT(plan->reason, HasSubstr("vfs_fsync_range is not in this kernel's BTF"));
  auto asked = select_jobio_programs(RequestedProbeMode::FileLayer, k);
  ASSERT_FALSE(asked);
  EXPECT_THAT(asked.error().message, HasSubstr("vfs_fsync_range"));
}

TEST(JobioPrograms, MissingOptionalFunctionsAreNotesOfWhatIsNotSeen) {
  KernelFeatures k = linux_6_12();
  k.btf_functions.erase("vfs_readv");
  k.btf_functions.erase("filemap_fault");
  k.btf_functions.erase("filp_flush");
  k.btf_functions.erase("filp_close");
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_FILE_LAYER));
  EXPECT_THAT(plan->unseen,
              ElementsAre("readv and preadv calls are not seen: no vfs_readv in this kernel's BTF",
                          "close calls are not seen: no filp_flush or filp_close in this "
                          "kernel's BTF",
                          "mmap'd I/O is not seen: no filemap_fault in this kernel's BTF"));
  EXPECT_FALSE(plan->load.contains("fl_readv_enter"));
  EXPECT_FALSE(plan->load.contains("fl_fault_enter"));
  EXPECT_FALSE(plan->load.contains("fl_set_pte_range"));  // no fault to count installs for
  EXPECT_FALSE(plan->load.contains("fl_do_set_pmd_exit"));
  EXPECT_FALSE(plan->load.contains("on_page_cache_add"));
  EXPECT_TRUE(plan->load.contains("fl_writev_enter"));
}

// Linux AIO in the file layer needs both of its functions (io_submit_one and
// do_io_getevents, in the 6.1, 6.12 and 6.18 BTF); syscall mode reads
// io_submit and io_getevents in its own two programs.
TEST(JobioPrograms, WithoutEitherAioFunctionLinuxAioIsANote) {
  for (const char* gone : {"io_submit_one", "do_io_getevents"}) {
    KernelFeatures k = linux_6_12();
    k.btf_functions.erase(gone);
    auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_FILE_LAYER));
    EXPECT_THAT(plan->unseen, ElementsAre("Linux AIO requests (io_submit) are not seen: no "
                                          "io_submit_one or do_io_getevents in this kernel's BTF"))
        << gone;
    for (const char* p :
         {"fl_aio_submit_enter", "fl_aio_submit_exit", "fl_aio_wait_enter", "fl_aio_wait_exit"})
      EXPECT_FALSE(plan->load.contains(p)) << p;
  }
  auto syscalls = select_jobio_programs(RequestedProbeMode::Syscall, linux_6_12());
  ASSERT_TRUE(syscalls);
  EXPECT_FALSE(syscalls->load.contains("fl_aio_submit_enter"));
  EXPECT_TRUE(syscalls->load.contains("on_sys_enter"));
}

TEST(JobioPrograms, AnIoUringCompleteOfAnUnknownFormIsNoted) {
  KernelFeatures k = linux_6_12();
  k.io_uring_complete_params = 5;
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, k);
  ASSERT_TRUE(plan);
  EXPECT_THAT(plan->unseen, ElementsAre("io_uring requests are not seen: io_uring_complete has "
                                        "5 parameters, a form this build does not know"));
  EXPECT_FALSE(plan->load.contains("on_uring_submit_req"));
}

// The object BASE builds (before the file-layer programs exist): auto on
// 6.12 falls back, and what the object lacks is named.
TEST(JobioPrograms, AnObjectWithoutFileLayerProgramsFallsBack) {
  const Set object = {"on_sys_enter", "on_sys_exit", "on_sched_switch", "on_process_fork",
                      "on_process_exit"};
  auto plan = select_jobio_programs(RequestedProbeMode::Auto, linux_6_12(), &object);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mode, static_cast<uint32_t>(CKPT_MODE_SYSCALL));
  EXPECT_THAT(plan->reason, HasSubstr("this build's jobio BPF object has no fl_read_enter"));
  EXPECT_EQ(plan->load, (Set{"on_sys_enter", "on_sys_exit"}));
  EXPECT_THAT(plan->unseen,
              ElementsAre("mmap'd I/O is not seen: this build's jobio BPF object has no "
                          "on_fault_tp program",
                          "stores through shared mappings and the bytes a save left dirty in "
                          "the page cache are not seen: this build's jobio BPF object has no "
                          "on_folio_dirtied program",
                          "the bytes calls made the storage read and write (the storage stage of "
                          "local files) are not seen: this build's jobio BPF object has no "
                          "on_bio_queue program",
                          "the time writes were throttled for dirty pages (the storage stage's) "
                          "is not seen: this build's jobio BPF object has no on_dirty_throttle "
                          "program",
                          "io_uring requests are not seen: this build's jobio BPF object has no "
                          "on_uring_complete_res program"));
}

TEST(JobioPrograms, EveryPlannedProgramIsSelectableAndTheSchedulersAreNot) {
  const auto& selectable = selectable_jobio_programs();
  for (const auto& k : {linux_6_1(), linux_6_12(), this_host()})
    for (auto mode : {RequestedProbeMode::Auto, RequestedProbeMode::Syscall}) {
      auto plan = select_jobio_programs(mode, k);
      ASSERT_TRUE(plan);
      for (const auto& p : plan->load) EXPECT_TRUE(selectable.contains(p)) << p;
    }
  EXPECT_FALSE(selectable.contains("on_sched_switch"));
  EXPECT_FALSE(selectable.contains("on_process_fork"));
  EXPECT_FALSE(selectable.contains("on_process_exit"));
  EXPECT_TRUE(selectable.contains("fl_close_enter"));
  EXPECT_TRUE(selectable.contains("on_uring_complete_cqe"));
}

// The feature probe keeps only the FUNCs of jobio_btf_functions(): keeping
// only those must not change any kernel's plan.
TEST(JobioPrograms, TheFunctionsTheProbeKeepsAreAllTheSelectionAsksAbout) {
  const auto& kept = jobio_btf_functions();
  EXPECT_EQ(kept.size(), 25u);
  for (auto k : {linux_6_1(), linux_6_12(), this_host()}) {
    auto full = select_jobio_programs(RequestedProbeMode::Auto, k);
    std::erase_if(k.btf_functions, [&kept](const std::string& f) { return !kept.contains(f); });
    auto trimmed = select_jobio_programs(RequestedProbeMode::Auto, k);
    ASSERT_TRUE(full && trimmed);
    EXPECT_EQ(full->load, trimmed->load) << k.release;
    EXPECT_EQ(full->unseen, trimmed->unseen) << k.release;
  }
}

// NFS 4.2's COPY and CLONE are the nfsv4 module's tracepoints: loaded
// with it, a note when the module lacks them, nothing without an NFS 4
// client at all (no copy for the server to make).
TEST(JobioPrograms, ServerSideCopiesNeedTheNfsv4ModulesTracepoints) {
  const Set server_copy = {"on_nfs4_copy", "on_nfs4_clone"};
  auto has_all = [](const Set& load, const Set& names) {
    return std::all_of(names.begin(), names.end(), [&](const auto& n) { return load.contains(n); });
  };
  for (auto k : {linux_6_12(), this_host()}) {
    auto no_module = select_jobio_programs(RequestedProbeMode::Auto, k);
    ASSERT_TRUE(no_module);
    EXPECT_FALSE(no_module->load.contains("on_nfs4_copy")) << k.release;
    for (const auto& u : no_module->unseen)
      EXPECT_THAT(u, Not(HasSubstr("server-side"))) << k.release;

    k.nfs4_module = true;
    auto without = select_jobio_programs(RequestedProbeMode::Auto, k);
    ASSERT_TRUE(without);
    EXPECT_FALSE(without->load.contains("on_nfs4_copy"));
    EXPECT_THAT(without->unseen, Contains(HasSubstr("NFS 4.2 server-side copies are not seen: the "
                                                    "nfsv4 module has no nfs4_copy")))
        << k.release;

    k.btf_tracepoints.insert({"nfs4_copy", "nfs4_clone"});
    auto with = select_jobio_programs(RequestedProbeMode::Auto, k);
    ASSERT_TRUE(with);
    EXPECT_TRUE(has_all(with->load, server_copy)) << k.release;
    EXPECT_EQ(with->unseen, no_module->unseen) << k.release;
  }
}

TEST(ProbeModeFlag, ParsesTheThreeModesAndNamesTheChoicesOtherwise) {
  EXPECT_EQ(*parse_probe_mode("auto"), RequestedProbeMode::Auto);
  EXPECT_EQ(*parse_probe_mode("syscall"), RequestedProbeMode::Syscall);
  EXPECT_EQ(*parse_probe_mode("file_layer"), RequestedProbeMode::FileLayer);
  for (const char* bad : {"", "fentry", "File_Layer", "file-layer", "syscall "}) {
    auto r = parse_probe_mode(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().message, fmt::format("--probe-mode: '{}' is not a probe mode; choose "
                                             "auto, syscall or file_layer",
                                             bad));
  }
  EXPECT_EQ(requested_probe_mode_name(RequestedProbeMode::FileLayer), "file_layer");
  EXPECT_EQ(probe_mode_name(CKPT_MODE_FILE_LAYER), "file_layer");
  EXPECT_EQ(probe_mode_name(CKPT_MODE_SYSCALL), "syscall");
}

}  // namespace
}  // namespace ckpt
