// The summary: the JSON contract key by key on a trace with known answers,
// and the terminal table's rows.
#include "analysis/summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/utf8.h"

namespace ckpt {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kSec = 1'000'000'000;

// One save with three measured stages (host_io the bottleneck at 1 GiB/s of
// a 1.25 GiB/s maximum), one load with nothing measured, failures inside and
// outside checkpoints, one NFS connection, zero drops.
Trace known_trace() {
  Trace t;
  t.job.command = {"python", "train.py", "--lr", "0.1"};
  t.job.mode = "run";
  t.job.node = "gpu-node-07";
  t.job.kernel = "6.1.0-18-amd64";
  t.job.ckptscope_version = "0.1.0";
  t.job.start_wall_ns = 1'714'564'800 * kSec;  // 2024-05-01 12:00:00 UTC
  t.job.start_mono_ns = 1 * kSec;
  t.job.end_mono_ns = 61 * kSec;
  t.job.exit_code = 0;
  t.job.traced = true;
  t.job.root_pids = {4242};

  CheckpointRecord save;
  save.id = 1;
  save.direction = Direction::Save;
  save.start_ns = 11 * kSec;
  save.end_ns = 14 * kSec;
  save.bytes = 3 * kGiB;
  save.files = 4;
  save.bottleneck = "host_io";
  save.stages = {
      {"gpu_copy", 3 * kGiB, 1 * kSec, 24.0 * kGiB, "config:gpu.copy_Bps"},
      {"host_io", 3 * kGiB, 3 * kSec, 1.25 * kGiB, "config:storage.write_Bps"},
      {"transport", 3 * kGiB, 2 * kSec, std::nullopt, "unknown"},
  };
  save.failures = {{"enospc", 13'500'000'000, "write(/ckpt/step100/model.pt) = -ENOSPC", 1}};
  save.file_io = {
      {"/ckpt/step100/model.pt", 1, 2, 3 * kGiB, 0, 3072, 0, 2, 1, 3 * kSec, 11 * kSec, 14 * kSec}};

  CheckpointRecord load;
  load.id = 2;
  load.direction = Direction::Load;
  load.start_ns = 30 * kSec;
  load.end_ns = 31 * kSec;
  load.bytes = 512;
  load.files = 1;

  t.checkpoints = {save, load};
  t.failures = {{"tcp_reset", 40 * kSec, "RST from 10.0.0.5:2049", std::nullopt}};
  t.connections = {{77, "10.0.0.2:901", "10.0.0.5:2049", 1 * kSec, 60 * kSec, 3 * kGiB,
                    12 * (uint64_t{1} << 20), 3, 250'000'000, 1, 1.25e9, "sysfs:eth0"}};
  t.drops = {{"jobio", "ringbuf_full", 0}, {"tcp", "ringbuf_full", 0}};
  return t;
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> keys;
  for (const auto& item : object.items()) keys.insert(item.key());
  return keys;
}

// ---- summary_json ----

TEST(SummaryJsonTest, TopLevelKeys) {
  const json j = summary_json(known_trace());
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(keys_of(j),
            (std::set<std::string>{"checkpoints", "drops", "job", "failures", "connections"}));
  ASSERT_TRUE(j["checkpoints"].is_array());
  EXPECT_EQ(j["checkpoints"].size(), 2u);
}

TEST(SummaryJsonTest, CheckpointMatchesTheContract) {
  const json c = summary_json(known_trace())["checkpoints"][0];
  // The contract's keys, plus the documented additions and nothing else.
  EXPECT_EQ(keys_of(c), (std::set<std::string>{"id", "direction", "start_ns", "end_ns", "bytes",
                                               "files", "bottleneck", "stages", "failures",
                                               "duration_ns", "start_offset_ns", "absent_stages"}));
  EXPECT_EQ(c["id"], 1);
  EXPECT_EQ(c["direction"], "save");
  EXPECT_EQ(c["start_ns"], 11 * kSec);
  EXPECT_EQ(c["end_ns"], 14 * kSec);
  EXPECT_EQ(c["duration_ns"], 3 * kSec);
  EXPECT_EQ(c["start_offset_ns"], 10 * kSec);
  EXPECT_EQ(c["bytes"], 3 * kGiB);
  EXPECT_EQ(c["files"], 4);
  EXPECT_EQ(c["bottleneck"], "host_io");
  EXPECT_EQ(c["absent_stages"],
            json({"serialize", "metadata", "nfs_client", "rpc_queue", "rpc_rtt"}));
  ASSERT_EQ(c["failures"].size(), 1u);
  EXPECT_EQ(c["failures"][0], json({{"kind", "enospc"},
                                    {"time_ns", 13'500'000'000},
                                    {"evidence", "write(/ckpt/step100/model.pt) = -ENOSPC"}}));
}

TEST(SummaryJsonTest, StagesCarryBandwidthMaxAndFraction) {
  const json stages = summary_json(known_trace())["checkpoints"][0]["stages"];
  ASSERT_EQ(stages.size(), 3u);
  for (const json& s : stages) {
    EXPECT_EQ(keys_of(s), (std::set<std::string>{"name", "bytes", "busy_ns", "bandwidth_Bps",
                                                 "max_Bps", "max_source", "fraction_of_max"}));
  }
  const json& gpu = stages[0];
  EXPECT_EQ(gpu["name"], "gpu_copy");
  EXPECT_DOUBLE_EQ(gpu["bandwidth_Bps"].get<double>(), 3.0 * kGiB);
  EXPECT_DOUBLE_EQ(gpu["max_Bps"].get<double>(), 24.0 * kGiB);
  EXPECT_DOUBLE_EQ(gpu["fraction_of_max"].get<double>(), 0.125);

  const json& host = stages[1];
  EXPECT_EQ(host["name"], "host_io");
  EXPECT_EQ(host["bytes"], 3 * kGiB);
  EXPECT_EQ(host["busy_ns"], 3 * kSec);
  EXPECT_DOUBLE_EQ(host["bandwidth_Bps"].get<double>(), 1.0 * kGiB);
  EXPECT_DOUBLE_EQ(host["max_Bps"].get<double>(), 1.25 * kGiB);
  EXPECT_EQ(host["max_source"], "config:storage.write_Bps");
  EXPECT_DOUBLE_EQ(host["fraction_of_max"].get<double>(), 0.8);

  const json& transport = stages[2];
  EXPECT_EQ(transport["name"], "transport");
  EXPECT_DOUBLE_EQ(transport["bandwidth_Bps"].get<double>(), 1.5 * kGiB);
  EXPECT_TRUE(transport["max_Bps"].is_null());
  EXPECT_TRUE(transport["fraction_of_max"].is_null());
  EXPECT_EQ(transport["max_source"], "unknown");
}

TEST(SummaryJsonTest, UnmeasuredCheckpointHasNullBottleneckAndAllStagesAbsent) {
  const json c = summary_json(known_trace())["checkpoints"][1];
  EXPECT_EQ(c["direction"], "load");
  EXPECT_TRUE(c["bottleneck"].is_null());
  EXPECT_EQ(c["stages"], json::array());
  EXPECT_EQ(c["failures"], json::array());
  ASSERT_EQ(c["absent_stages"].size(), std::size(kAllStages));
  for (size_t i = 0; i < std::size(kAllStages); ++i) {
    EXPECT_EQ(c["absent_stages"][i], std::string(kAllStages[i]));
  }
}

TEST(SummaryJsonTest, IncompleteCheckpointHasNullDuration) {
  Trace t = known_trace();
  t.checkpoints[0].end_ns = 0;
  t.checkpoints[0].start_ns = 0;  // before the job's start
  const json c = summary_json(t)["checkpoints"][0];
  EXPECT_EQ(c["duration_ns"], 0);
  EXPECT_EQ(c["start_offset_ns"], -1 * static_cast<int64_t>(kSec));
  t.checkpoints[0].start_ns = 5;
  EXPECT_TRUE(summary_json(t)["checkpoints"][0]["duration_ns"].is_null());
}

TEST(SummaryJsonTest, DropsAreKeyedBySourceAndCauseWithTotal) {
  Trace t = known_trace();
  EXPECT_EQ(summary_json(t)["drops"],
            json({{"jobio.ringbuf_full", 0}, {"tcp.ringbuf_full", 0}, {"total", 0}}));
  t.drops = {
      {"jobio", "ringbuf_full", 5}, {"tcp", "ringbuf_full", 2}, {"jobio", "ringbuf_full", 1}};
  EXPECT_EQ(summary_json(t)["drops"],
            json({{"jobio.ringbuf_full", 6}, {"tcp.ringbuf_full", 2}, {"total", 8}}));
  t.drops.clear();
  EXPECT_EQ(summary_json(t)["drops"], json({{"total", 0}}));
}

TEST(SummaryJsonTest, JobFailuresAndConnections) {
  const json j = summary_json(known_trace());
  const json& job = j["job"];
  EXPECT_EQ(job["command"], json({"python", "train.py", "--lr", "0.1"}));
  EXPECT_EQ(job["mode"], "run");
  EXPECT_EQ(job["node"], "gpu-node-07");
  EXPECT_EQ(job["kernel"], "6.1.0-18-amd64");
  EXPECT_EQ(job["exit_code"], 0);
  EXPECT_TRUE(job["exit_signal"].is_null());
  EXPECT_EQ(job["traced"], true);
  EXPECT_EQ(job["trace_warning"], "");
  EXPECT_EQ(job["start_wall_ns"], 1'714'564'800 * kSec);
  EXPECT_EQ(job["duration_ns"], 60 * kSec);

  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_EQ(j["failures"][0], json({{"kind", "tcp_reset"},
                                    {"time_ns", 40 * kSec},
                                    {"evidence", "RST from 10.0.0.5:2049"},
                                    {"checkpoint_id", nullptr}}));

  ASSERT_EQ(j["connections"].size(), 1u);
  const json& c = j["connections"][0];
  EXPECT_EQ(c["remote"], "10.0.0.5:2049");
  EXPECT_EQ(c["local"], "10.0.0.2:901");
  EXPECT_EQ(c["bytes_sent"], 3 * kGiB);
  EXPECT_EQ(c["bytes_received"], 12u << 20);
  EXPECT_EQ(c["retransmits"], 3);
  EXPECT_EQ(c["zero_window_ns"], 250'000'000);
  EXPECT_EQ(c["resets"], 1);
  EXPECT_DOUBLE_EQ(c["link_max_Bps"].get<double>(), 1.25e9);
}

TEST(SummaryJsonTest, KilledUntracedJob) {
  Trace t = known_trace();
  t.job.exit_code.reset();
  t.job.exit_signal = 9;
  t.job.traced = false;
  t.job.trace_warning = "bpf: Operation not permitted";
  const json job = summary_json(t)["job"];
  EXPECT_TRUE(job["exit_code"].is_null());
  EXPECT_EQ(job["exit_signal"], 9);
  EXPECT_EQ(job["traced"], false);
  EXPECT_EQ(job["trace_warning"], "bpf: Operation not permitted");
}

TEST(SummaryJsonTest, InvalidUtf8StillDumps) {
  Trace t = known_trace();
  t.checkpoints[0].failures[0].evidence = "open(/ckpt/\xff\xfe.pt) = -EIO";
  t.job.command.push_back("caf\xe9");  // Latin-1
  const json j = summary_json(t);
  std::string dumped;
  ASSERT_NO_THROW(dumped = j.dump());
  EXPECT_EQ(j["checkpoints"][0]["failures"][0]["evidence"], "open(/ckpt/\uFFFD\uFFFD.pt) = -EIO");
  EXPECT_EQ(j["job"]["command"][4], "caf\uFFFD");
}

// ---- valid_utf8 ----

TEST(ValidUtf8Test, KeepsValidTextAndReplacesEachBadByte) {
  EXPECT_EQ(valid_utf8(""), "");
  EXPECT_EQ(valid_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(valid_utf8("é 模 🚀 \xF4\x8F\xBF\xBF"), "é 模 🚀 \xF4\x8F\xBF\xBF");  // U+10FFFF ok
  EXPECT_EQ(valid_utf8("a\xffz"), "a\uFFFDz");
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "\uFFFD\uFFFD");                      // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");            // surrogate D800
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), "\uFFFD\uFFFD\uFFFD\uFFFD");  // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xE6\xA8"), "\uFFFD\uFFFD");  // truncated sequence at the end
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

// ---- summary_table ----

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Columns on a terminal: code points, not bytes (the table uses "—").
size_t columns(const std::string& line) {
  return static_cast<size_t>(std::count_if(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

const std::string* find_line(const std::vector<std::string>& lines, const std::string& start) {
  for (const std::string& l : lines) {
    if (l.rfind(start, 0) == 0) return &l;
  }
  return nullptr;
}

TEST(SummaryTableTest, JobLine) {
  const std::string table = summary_table(known_trace());
  const auto lines = lines_of(table);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "job: python train.py --lr 0.1  (exit 0, traced)");
  EXPECT_EQ(lines[1],
            "  gpu-node-07 (kernel 6.1.0-18-amd64), mode run, started 2024-05-01 12:00:00 UTC, "
            "ran 1m 00s");
}

TEST(SummaryTableTest, UntracedJobShowsTheWarning) {
  Trace t = known_trace();
  t.job.exit_code.reset();
  t.job.exit_signal = 9;
  t.job.traced = false;
  t.job.trace_warning = "bpf: Operation not permitted";
  const auto lines = lines_of(summary_table(t));
  EXPECT_EQ(lines[0], "job: python train.py --lr 0.1  (killed by signal 9, NOT TRACED)");
  EXPECT_EQ(lines[1], "  warning: bpf: Operation not permitted");
}

TEST(SummaryTableTest, CheckpointHeaderAndStageRows) {
  const auto lines = lines_of(summary_table(known_trace()));
  const std::string* header = find_line(lines, "checkpoint 1 ");
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(*header,
            "checkpoint 1  save  at +10.00 s  took 3.00 s  3.00 GiB  4 files  "
            "bottleneck: host_io (*)");
  const std::string* host = find_line(lines, "  * host_io");
  ASSERT_NE(host, nullptr) << "the bottleneck row is marked";
  EXPECT_EQ(*host,
            "  * host_io      3.00 GiB    3.00 s   1.00 GiB/s   1.25 GiB/s   80.0%  "
            "config:storage.write_Bps");
  const std::string* gpu = find_line(lines, "    gpu_copy");
  ASSERT_NE(gpu, nullptr);
  EXPECT_THAT(*gpu, HasSubstr("3.00 GiB/s"));
  EXPECT_THAT(*gpu, HasSubstr("24.0 GiB/s"));
  EXPECT_THAT(*gpu, HasSubstr("12.5%"));
  const std::string* transport = find_line(lines, "    transport");
  ASSERT_NE(transport, nullptr);
  EXPECT_THAT(*transport, HasSubstr("1.50 GiB/s"));
  EXPECT_THAT(*transport, HasSubstr("unknown"));
  const std::string* serialize = find_line(lines, "    serialize");
  ASSERT_NE(serialize, nullptr);
  EXPECT_THAT(*serialize, HasSubstr("not traced in this build"));

  const std::string* load = find_line(lines, "checkpoint 2 ");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(*load,
            "checkpoint 2  load  at +29.00 s  took 1.00 s  512 B  1 file  no bottleneck measured");
}

TEST(SummaryTableTest, StageRowsFollowPipelineOrder) {
  const auto lines = lines_of(summary_table(known_trace()));
  // The first checkpoint's block: its header up to the next blank line.
  auto begin = std::find_if(lines.begin(), lines.end(),
                            [](const std::string& l) { return l.rfind("checkpoint 1 ", 0) == 0; });
  ASSERT_NE(begin, lines.end());
  auto end = std::find(begin, lines.end(), "");
  std::vector<std::string> names;
  for (auto it = begin + 2; it != end; ++it) {  // skip the header and the column titles
    std::istringstream row(it->substr(4));
    std::string name;
    row >> name;
    names.push_back(name);
  }
  EXPECT_EQ(names, std::vector<std::string>(std::begin(kAllStages), std::end(kAllStages)));
}

TEST(SummaryTableTest, FailuresConnectionsAndDrops) {
  Trace t = known_trace();
  std::string table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("failures (2)\n"));
  EXPECT_THAT(table, HasSubstr("   +12.50 s  enospc                checkpoint 1   "
                               "write(/ckpt/step100/model.pt) = -ENOSPC\n"));
  EXPECT_THAT(table, HasSubstr("   +39.00 s  tcp_reset             job            "
                               "RST from 10.0.0.5:2049\n"));
  EXPECT_LT(table.find("enospc"), table.find("tcp_reset")) << "failures in time order";
  EXPECT_THAT(table, HasSubstr("connections (1)\n"));
  EXPECT_THAT(table, HasSubstr("  10.0.0.5:2049  10.0.0.2:901    3.00 GiB    12.0 MiB        3"
                               "       250 ms       1\n"));
  EXPECT_THAT(table, HasSubstr("\ndrops: none\n"));

  t.drops = {
      {"jobio", "ringbuf_full", 12}, {"tcp", "ringbuf_full", 0}, {"tcp", "inflight_full", 3}};
  t.failures.clear();
  t.checkpoints[0].failures.clear();
  t.connections.clear();
  table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("\ndrops: jobio.ringbuf_full 12, tcp.inflight_full 3 (total 15)"));
  EXPECT_THAT(table, Not(HasSubstr("tcp.ringbuf_full")));
  EXPECT_THAT(table, HasSubstr("\nfailures: none\n"));
  EXPECT_THAT(table, HasSubstr("\nconnections: none\n"));
}

TEST(SummaryTableTest, FitsInOneHundredColumns) {
  Trace t = known_trace();
  t.job.command.push_back(std::string(300, 'x'));  // a long command is shortened
  t.checkpoints[0].stages[0].max_source =
      "sysfs:/sys/devices/pci0000:00/0000:00:03.0/net/eth0/speed";
  const auto lines = lines_of(summary_table(t));
  for (const std::string& line : lines) {
    if (line.find("ENOSPC") != std::string::npos) continue;  // evidence is never cut
    EXPECT_LE(columns(line), 100u) << line;
  }
  EXPECT_THAT(lines[0], HasSubstr("python train.py --lr 0.1 xxx"));
  EXPECT_THAT(lines[0], HasSubstr("...  (exit 0, traced)"));
  const std::string* gpu = find_line(lines, "    gpu_copy");
  ASSERT_NE(gpu, nullptr);
  EXPECT_THAT(*gpu, HasSubstr("  ..."));  // the source keeps its tail
  EXPECT_THAT(*gpu, HasSubstr("/net/eth0/speed"));
}

TEST(SummaryTableTest, NoCheckpoints) {
  Trace t;
  t.job.command = {"sleep", "1"};
  const std::string table = summary_table(t);
  EXPECT_THAT(table, HasSubstr("job: sleep 1  (exit status unknown, NOT TRACED)\n"));
  EXPECT_THAT(table, HasSubstr("\ncheckpoints: none detected\n"));
  EXPECT_THAT(table, HasSubstr("\ndrops: none\n"));
}

}  // namespace
}  // namespace ckpt
