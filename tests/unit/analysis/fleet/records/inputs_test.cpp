// Issue 36: every records input is read through the bounded reader, each
// under its own limit, and an error names the flag and the file.
#include "analysis/fleet/records/inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ckpt::fleet::records {
namespace {

using ::testing::HasSubstr;

TEST(Inputs, DevZeroIsRefusedAtOnceNamingTheFlag) {
  const std::string not_text = " /dev/zero: not a text file (a NUL byte at byte 0)";
  struct Case {
    std::vector<std::string> Inputs::*member;
    std::string flag;
  };
  for (const Case& c :
       {Case{&Inputs::sacct_json, "--sacct-json"}, Case{&Inputs::sacct_text, "--sacct"},
        Case{&Inputs::sinfo, "--sinfo"}, Case{&Inputs::pytorchjob, "--pytorchjob"},
        Case{&Inputs::sessions, "--sessions"}}) {
    SCOPED_TRACE(c.flag);
    Inputs in;
    (in.*c.member).push_back("/dev/zero");
    auto r = read_inputs(in);
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr(c.flag + not_text));
  }
}

TEST(Inputs, ALogMayHoldNulsButStopsAtItsLimit) {
  // A TorchElastic log may hold NULs (cut short by a crash): only bounded.
  constexpr InputLimit kSmall{1024, "give the agent's log of one job (or its tail)"};
  auto r = read_input_file("/dev/zero", kSmall, "--torchelastic");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message,
              HasSubstr("--torchelastic /dev/zero: larger than 1 KiB; give the agent's log"));
}

TEST(Inputs, AFileLargerThanItsLimitIsRefusedFromItsSize) {
  const std::string big = ::testing::TempDir() + "/too-large-sessions.csv";
  std::ofstream(big) << "session,job\n";
  std::filesystem::resize_file(big, kSessionsCsvLimit.bytes + 1);  // sparse: nothing read
  Inputs in;
  in.sessions.push_back(big);
  auto r = read_inputs(in);
  std::filesystem::remove(big);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message,
              HasSubstr("--sessions " + big + ": larger than 1 GiB; the sessions CSV"));
}

TEST(Inputs, AMissingFileIsNamedWithItsFlag) {
  Inputs in;
  in.sacct_json.push_back("/nonexistent/sacct.json");
  auto r = read_inputs(in);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("--sacct-json /nonexistent/sacct.json: cannot read it"));
}

}  // namespace
}  // namespace ckpt::fleet::records
