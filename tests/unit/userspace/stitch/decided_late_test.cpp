// Decided late (docs/stitching.md): the write-then-rename commit of
// safetensors, Orbax, TensorFlow, DCP's metadata and rsync. A file written
// under a name no rule matches and then renamed (or its directory renamed)
// into a checkpoint's name is that checkpoint's, whole and once; one that no
// rename claims is unrecognised I/O, its bytes exact, its failures reported.
#include <cerrno>
#include <memory>
#include <unordered_map>

#include <gtest/gtest.h>

#include "stitch/stitcher.h"
#include "tests/unit/userspace/stitch/no_maxima.h"

namespace ckpt {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kMiB = 1 << 20;

using test::NoMaxima;

class DecidedLateTest : public ::testing::Test {
 protected:
  DecidedLateTest() : config_(Config::defaults()) {}

  void SetUp() override {
    s_ = std::make_unique<Stitcher>(config_, std::make_shared<NoMaxima>(),
                                    StageAvailability{true, false});
    s_->set_verdict_listener([this](const FileId& f, bool yes) { told_[f] = yes; });
  }

  void call(IoOp op, const std::string& path, FileId id, int64_t ret,
            const std::string& path2 = "") {
    IoEvent e;
    e.tgid = 100;
    e.tid = 101;
    e.op = op;
    e.start_ns = t_;
    e.end_ns = t_ + 1000;
    e.cpu_window_start_ns = t_;
    t_ += kMs;
    e.path = path;
    e.path2 = path2;
    e.file = id;
    e.ret = ret;
    e.requested = ret > 0 ? static_cast<uint64_t>(ret) : 0;
    s_->on_event(std::move(e));
  }
  void open(const std::string& path, FileId id) { call(IoOp::Open, path, id, 3); }
  void write(const std::string& path, FileId id, int64_t bytes) {
    call(IoOp::Write, path, id, bytes);
  }
  void rename(const std::string& from, FileId id, const std::string& to) {
    call(IoOp::Rename, from, id, 0, to);
  }
  // The kernel's sums for a file ruled out (ckpt_other_io_record).
  void summed(const std::string& path, FileId id, uint64_t read, uint64_t written, uint64_t calls) {
    OtherIoEvent e;
    e.tgid = 100;
    e.tid = 101;
    e.start_ns = t_;
    e.end_ns = t_ + 4 * kMs;
    t_ += 5 * kMs;
    e.file = id;
    e.path = path;
    e.bytes_read = read;
    e.bytes_written = written;
    e.read_calls = read > 0 ? calls : 0;
    e.write_calls = written > 0 ? calls : 0;
    s_->on_event(std::move(e));
  }
  std::vector<CheckpointRecord> finish() {
    s_->finish();
    return s_->take_checkpoints();
  }
  static uint64_t via_bytes(const CheckpointRecord& c, const std::string& via) {
    for (const auto& [name, bytes] : c.bytes_by_via)
      if (name == via) return bytes;
    return 0;
  }

  Config config_;
  std::unique_ptr<Stitcher> s_;
  std::unordered_map<FileId, bool, FileIdHash> told_;
  uint64_t t_ = 1000 * kMs;
};

TEST_F(DecidedLateTest, AnAtomicSafetensorsSaveIsOneSaveWithEveryByte) {
  const std::string tmp = "/job/export/model.safetensors.tmp";
  const std::string final_name = "/job/export/model.safetensors";
  const FileId id{42, 9};
  open(tmp, id);
  EXPECT_TRUE(told_[id]) << "the kernel records a held file's calls one by one";
  for (int i = 0; i < 3; ++i) write(tmp, id, 16 * kMiB);
  call(IoOp::Fsync, tmp, id, 0);
  call(IoOp::Close, tmp, id, 0);
  EXPECT_TRUE(s_->take_checkpoints().empty()) << "nothing is a checkpoint before the rename";
  rename(tmp, id, final_name);
  const std::vector<CheckpointRecord> cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].direction, Direction::Save);
  EXPECT_EQ(cps[0].bytes, 48 * kMiB);
  EXPECT_EQ(cps[0].files, 1u);
  ASSERT_EQ(cps[0].file_io.size(), 1u);
  EXPECT_EQ(cps[0].file_io[0].path, final_name);
  EXPECT_EQ(cps[0].file_io[0].write_calls, 3u);
  EXPECT_EQ(cps[0].start_ns, 1000 * kMs) << "the held calls keep their own times";
  EXPECT_EQ(via_bytes(cps[0], "syscall"), 48 * kMiB);
  EXPECT_EQ(s_->unrecognised_io().bytes(), 0u);
  bool renamed_call = false;
  for (const IoCallRecord& c : s_->take_io_calls()) {
    if (c.op == "write") EXPECT_EQ(c.path, final_name) << "told under the name it ended with";
    renamed_call |= c.op == "rename";
  }
  EXPECT_TRUE(renamed_call);
}

TEST_F(DecidedLateTest, RsyncsHiddenTemporaryInAStepDirectory) {
  const std::string tmp = "/job/checkpoints/step_100/.shard-0.pt.Ab3xYz";
  const FileId id{42, 10};
  open(tmp, id);
  write(tmp, id, 32 * kMiB);
  write(tmp, id, 32 * kMiB);
  rename(tmp, id, "/job/checkpoints/step_100/shard-0.pt");
  const std::vector<CheckpointRecord> cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].bytes, 64 * kMiB);
  EXPECT_EQ(s_->unrecognised_io().bytes(), 0u);
}

TEST_F(DecidedLateTest, ADirectoryRenamedIntoACheckpointsNameTakesEveryFileBelowIt) {
  const FileId weights{42, 11};
  const FileId optim{42, 12};
  const FileId dir{42, 13};
  open("/job/out/tmp_save/weights.bin", weights);
  write("/job/out/tmp_save/weights.bin", weights, 40 * kMiB);
  open("/job/out/tmp_save/sub/optim.bin", optim);
  write("/job/out/tmp_save/sub/optim.bin", optim, 24 * kMiB);
  call(IoOp::Rename, "/job/out/tmp_save", dir, 0, "/job/out/step_100");
  const std::vector<CheckpointRecord> cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].bytes, 64 * kMiB);
  EXPECT_EQ(cps[0].files, 2u);
  for (const FileIoRecord& f : cps[0].file_io)
    EXPECT_TRUE(f.path == "/job/out/step_100/weights.bin" ||
                f.path == "/job/out/step_100/sub/optim.bin")
        << f.path << ": the files are named as the rename left them";
  EXPECT_EQ(s_->unrecognised_io().bytes(), 0u);
}

TEST_F(DecidedLateTest, APlainNameRenamedToACheckpointsBringsTheKernelsSums) {
  // No temporary name: the kernel summed the file's calls (it was ruled out)
  // after the first ones it recorded; a rename to a checkpoint's name makes
  // them the checkpoint's, the sums arriving before and after the rename.
  const std::string plain = "/job/out/data.bin";
  const FileId id{42, 14};
  open(plain, id);
  EXPECT_FALSE(told_[id]);
  write(plain, id, 8 * kMiB);
  summed(plain, id, 0, 16 * kMiB, 4);
  EXPECT_EQ(s_->unrecognised_io().bytes(), 24 * kMiB);
  rename(plain, id, "/job/out/ckpt.pt");
  EXPECT_TRUE(told_[id]);
  summed("/job/out/ckpt.pt", id, 0, 4 * kMiB, 1);  // another thread's, flushed later
  const std::vector<CheckpointRecord> cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].bytes, 28 * kMiB);
  EXPECT_EQ(via_bytes(cps[0], "summed"), 28 * kMiB);
  ASSERT_EQ(cps[0].file_io.size(), 1u);
  EXPECT_EQ(cps[0].file_io[0].write_calls, 6u) << "the sums' call counts, exact";
  EXPECT_EQ(s_->unrecognised_io().bytes(), 0u);
}

TEST_F(DecidedLateTest, ATemporaryRenamedToAnotherTemporaryIsHeldOn) {
  const FileId id{42, 15};
  open("/job/out/a.tmp", id);
  write("/job/out/a.tmp", id, 10 * kMiB);
  rename("/job/out/a.tmp", id, "/job/out/a.partial");
  write("/job/out/a.partial", id, 10 * kMiB);
  EXPECT_EQ(s_->unrecognised_io().bytes(), 0u);
  rename("/job/out/a.partial", id, "/job/out/a.safetensors");
  const std::vector<CheckpointRecord> cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].bytes, 20 * kMiB);
}

TEST_F(DecidedLateTest, ATemporaryRenamedElsewhereIsUnrecognisedUnderItsNewName) {
  const FileId id{42, 16};
  open("/job/out/notes.txt.tmp", id);
  write("/job/out/notes.txt.tmp", id, 30 * kMiB);
  rename("/job/out/notes.txt.tmp", id, "/job/out/notes.txt");
  EXPECT_FALSE(told_[id]) << "released: the kernel sums its calls from now";
  const std::vector<CheckpointRecord> cps = finish();
  EXPECT_TRUE(cps.empty());
  const UnrecognisedIoRecord r = s_->unrecognised_io();
  EXPECT_EQ(r.bytes_written, 30 * kMiB);
  ASSERT_EQ(r.largest.size(), 1u);
  EXPECT_EQ(r.largest[0].path, "/job/out/notes.txt");
}

TEST_F(DecidedLateTest, AnUnlinkedTemporaryIsUnrecognisedAndItsFailureReported) {
  const FileId id{42, 17};
  const std::string tmp = "/job/export/model.safetensors.tmp";
  open(tmp, id);
  write(tmp, id, 12 * kMiB);
  call(IoOp::Write, tmp, id, -ENOSPC);
  call(IoOp::Unlink, tmp, FileId{}, 0);
  EXPECT_FALSE(told_[id]);
  EXPECT_TRUE(finish().empty());
  EXPECT_EQ(s_->unrecognised_io().bytes_written, 12 * kMiB);
  const std::vector<FailureRecord> failures = s_->take_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].kind, "enospc");
}

TEST_F(DecidedLateTest, AFailedWriteOnAPromotedFileIsTheCheckpointsFailure) {
  const FileId id{42, 18};
  const std::string tmp = "/job/export/model.safetensors.tmp";
  open(tmp, id);
  write(tmp, id, 12 * kMiB);
  call(IoOp::Write, tmp, id, -EIO);
  rename(tmp, id, "/job/export/model.safetensors");
  const std::vector<CheckpointRecord> cps = finish();
  ASSERT_EQ(cps.size(), 1u);
  ASSERT_EQ(cps[0].failures.size(), 1u);
  EXPECT_EQ(cps[0].failures[0].kind, "eio");
  EXPECT_EQ(cps[0].failures[0].checkpoint_id, cps[0].id);
}

TEST_F(DecidedLateTest, ATemporaryNoRenameClaimsIsUnrecognisedAtTheEnd) {
  const FileId id{42, 19};
  open("/job/out/cache.part", id);
  write("/job/out/cache.part", id, 5 * kMiB);
  EXPECT_EQ(s_->unrecognised_io().bytes(), 0u) << "held, not yet counted";
  EXPECT_TRUE(finish().empty());
  EXPECT_EQ(s_->unrecognised_io().bytes_written, 5 * kMiB);
}

TEST_F(DecidedLateTest, ATemporaryHeldPastTheInFlightLimitIsReleased) {
  const FileId id{42, 20};
  open("/job/out/cache.part", id);
  write("/job/out/cache.part", id, 5 * kMiB);
  s_->advance(t_ + config_.checkpoint.in_flight_limit_ns / 2);
  EXPECT_EQ(s_->unrecognised_io().bytes(), 0u);
  s_->advance(t_ + config_.checkpoint.in_flight_limit_ns + kMs);
  EXPECT_EQ(s_->unrecognised_io().bytes_written, 5 * kMiB);
  EXPECT_FALSE(told_[id]);
}

TEST_F(DecidedLateTest, WithNoTemporaryNamesNothingIsHeld) {
  config_.checkpoint.temporary_globs.clear();
  SetUp();
  const FileId id{42, 21};
  open("/job/export/model.safetensors.tmp", id);
  EXPECT_FALSE(told_[id]) << "with no temporary names a file is ruled out at once";
}

TEST_F(DecidedLateTest, AnExcludedTemporaryIsNeverHeld) {
  const FileId id{42, 22};
  open("/job/venv/lib/site-packages/pkg/data.tmp", id);
  EXPECT_FALSE(told_[id]);
}

}  // namespace
}  // namespace ckpt
