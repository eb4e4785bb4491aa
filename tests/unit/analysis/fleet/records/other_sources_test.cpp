// sinfo -R, TorchElastic logs, PyTorchJobs and the sessions CSV: exact
// exclusions and chains from fixtures, and errors that name what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/fleet/records/inputs.h"
#include "analysis/fleet/records/pytorchjob.h"
#include "analysis/fleet/records/sessions_csv.h"
#include "analysis/fleet/records/sinfo_reasons.h"
#include "analysis/fleet/records/statistics.h"
#include "analysis/fleet/records/torchelastic_log.h"
#include "analysis/fleet/records/wall_time.h"
#include "tests/unit/analysis/fleet/records/fixtures.h"

namespace ckpt::fleet::records {
namespace {

using test::fixture;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

Records read(const Inputs& in) {
  auto r = read_inputs(in);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : Records{};
}

TEST(WallTime, IsoFormsAndSlurmsNoTimeWords) {
  EXPECT_DOUBLE_EQ(**parse_wall_time("1970-01-02T00:00:00"), 86400);
  EXPECT_DOUBLE_EQ(**parse_wall_time("2024-03-01T10:00:00Z"), 1709287200);
  EXPECT_DOUBLE_EQ(**parse_wall_time("2024-03-01 12:00:00+02:00"), 1709287200);
  EXPECT_DOUBLE_EQ(**parse_wall_time("2024-03-01T10:00:00.25"), 1709287200.25);
  EXPECT_FALSE(*parse_wall_time("Unknown"));
  EXPECT_FALSE(*parse_wall_time(""));
  EXPECT_FALSE(parse_wall_time("2024-02-30T00:00:00"));
  EXPECT_FALSE(parse_wall_time("2024-03-01T10:00:00 UTC"));
}

TEST(SinfoReasons, NormalisedVocabulary) {
  EXPECT_EQ(normalise_drain_reason("Kill task failed"), "kill_task_failed");
  EXPECT_EQ(normalise_drain_reason("Not responding"), "not_responding");
  EXPECT_EQ(normalise_drain_reason("xid 79"), "gpu_xid");
  EXPECT_EQ(normalise_drain_reason("GPU Xid:48 double bit ECC"), "gpu_xid");
  EXPECT_EQ(normalise_drain_reason("GPU ECC errors"), "gpu_error");
  EXPECT_EQ(normalise_drain_reason("NHC: check_fs_mount failed"), "health_check");
  EXPECT_EQ(normalise_drain_reason("IB link down"), "network");
  EXPECT_EQ(normalise_drain_reason("lustre mount missing"), "storage");
  EXPECT_EQ(normalise_drain_reason("upgrade firmware"), "maintenance");
  EXPECT_EQ(normalise_drain_reason("because"), "other");
}

TEST(SinfoReasons, EachDrainEventCountsOncePerNode) {
  Inputs in;
  in.sinfo = {fixture("sinfo_R.txt")};
  auto s = exclusion_stats(read(in), {}, {1, 3, 5});
  EXPECT_EQ(s.total, 8);
  EXPECT_EQ(s.nodes.size(), 7U);
  EXPECT_EQ(s.nodes[0].node, "gpu02");
  EXPECT_THAT(s.nodes[0].reasons,
              ElementsAre(Pair("kill_task_failed", 1), Pair("not_responding", 1)));
  EXPECT_THAT(s.reasons, ElementsAre(Pair("gpu_error", 2), Pair("gpu_xid", 1),
                                     Pair("health_check", 1), Pair("kill_task_failed", 2),
                                     Pair("maintenance", 1), Pair("not_responding", 1)));
  // A later snapshot repeats one event and adds one.
  in.sinfo.push_back(fixture("sinfo_R_later.txt"));
  auto later = exclusion_stats(read(in), {}, {1, 3, 5});
  EXPECT_EQ(later.total, 9);
  EXPECT_EQ(later.nodes[0].exclusions, 3);
}

TEST(SinfoReasons, MalformedLines) {
  Records r;
  auto no_header = read_sinfo_reasons("Kill task failed root 2024-03-01T10:15:00 gpu1\n", "s", r);
  ASSERT_FALSE(no_header);
  EXPECT_THAT(no_header.error().message, HasSubstr("s:1: expected sinfo -R's header"));
  auto short_line = read_sinfo_reasons("REASON USER TIMESTAMP NODELIST\nbroken gpu1\n", "s", r);
  ASSERT_FALSE(short_line);
  EXPECT_THAT(short_line.error().message,
              HasSubstr("s:2: expected REASON USER TIMESTAMP NODELIST"));
  auto bad_time = read_sinfo_reasons("REASON USER TIMESTAMP NODELIST\nx root noon gpu1\n", "s", r);
  ASSERT_FALSE(bad_time);
  EXPECT_THAT(bad_time.error().message, HasSubstr("s:2: TIMESTAMP: \"noon\""));
}

TEST(TorchElastic, RestartsIntervalsAndTheEnd) {
  Inputs in;
  in.torchelastic = {fixture("torchelastic_success.txt"), fixture("torchelastic_failed.txt"),
                     fixture("torchelastic_1x.txt")};
  auto s = retry_stats(read(in));
  EXPECT_EQ(s.chains, 3);
  EXPECT_EQ(s.attempts, 7);
  EXPECT_EQ(s.automatic.chains, 3);
  EXPECT_EQ(s.automatic.succeeded, 2);
  ASSERT_EQ(s.chain_list.size(), 3U);
  // Sorted by first start: 1.x log (no times) first, then the two dated logs.
  const Chain* success = nullptr;
  const Chain* failed = nullptr;
  for (const auto& c : s.chain_list) {
    if (c.id.find("torchelastic_success") != std::string::npos) success = &c;
    if (c.id.find("torchelastic_failed") != std::string::npos) failed = &c;
  }
  ASSERT_TRUE(success && failed);
  EXPECT_EQ(success->attempts.size(), 3U);
  EXPECT_TRUE(success->succeeded);
  EXPECT_THAT(success->intervals_minutes, ElementsAre(11.0, 10.0));
  EXPECT_EQ(failed->attempts.size(), 2U);
  EXPECT_FALSE(failed->succeeded);
  EXPECT_EQ(failed->attempts.back().state, "FAILED");
  EXPECT_THAT(failed->intervals_minutes, ElementsAre(DoubleEq(9.0)));
  EXPECT_THAT(s.intervals.sorted_minutes, ElementsAre(9.0, 10.0, 11.0));
}

TEST(TorchElastic, RestartsThatDoNotCountDownAreAnError) {
  Records r;
  std::string two_agents =
      "[default] Starting worker group\n"
      "[default] Worker group FAILED. 2/3 attempts left; will restart worker group\n"
      "[default] Worker group FAILED. 2/3 attempts left; will restart worker group\n";
  auto read = read_torchelastic_log(two_agents, "agent.log", r);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message,
              HasSubstr("agent.log:3: \"2/3 attempts left\" after \"2/3\" at line 2"));
  auto nothing = read_torchelastic_log("hello\n", "x.log", r);
  ASSERT_FALSE(nothing);
  EXPECT_THAT(nothing.error().message, HasSubstr("x.log: no TorchElastic agent lines"));
}

TEST(TorchElastic, ACountNoIntHoldsIsAnErrorNotAnAbort) {
  // Found by tests/fuzz (fleet_torchelastic_log): std::stoi threw
  // out_of_range and aborted `ckptscope-fleet retries --torchelastic`.
  Records r;
  auto read = read_torchelastic_log(
      "[default] Worker group FAILED. 99999999999/3 attempts left; will restart worker group\n",
      "agent.log", r);
  ASSERT_FALSE(read);
  EXPECT_THAT(read.error().message,
              HasSubstr("agent.log:1: \"99999999999/3 attempts left\": a count past 2147483647"));
}

TEST(PyTorchJob, RestartingConditionsAreAutomaticRetries) {
  Inputs in;
  in.pytorchjob = {fixture("pytorchjobs.json")};
  auto s = retry_stats(read(in));
  EXPECT_EQ(s.chains, 2);
  EXPECT_EQ(s.attempts, 5);
  EXPECT_EQ(s.automatic.chains, 2);
  EXPECT_DOUBLE_EQ(*s.automatic.success_rate, 0.5);
  ASSERT_EQ(s.chain_list.size(), 2U);
  EXPECT_EQ(s.chain_list[0].id, "pytorchjob:team-a/bert");
  EXPECT_TRUE(s.chain_list[0].succeeded);
  EXPECT_THAT(s.chain_list[0].intervals_minutes, ElementsAre(12.0));
  EXPECT_THAT(s.chain_list[1].intervals_minutes, ElementsAre(9.0, 13.0));
  EXPECT_DOUBLE_EQ(*s.intervals.median, 12);
  EXPECT_DOUBLE_EQ(*s.intervals.p25, 10.5);
  EXPECT_DOUBLE_EQ(*s.intervals.p75, 12.5);
}

TEST(PyTorchJob, MalformedObjects) {
  Records r;
  auto wrong_kind = read_pytorchjobs(R"({"kind": "TFJob"})", "j.json", r);
  ASSERT_FALSE(wrong_kind);
  EXPECT_THAT(wrong_kind.error().message, HasSubstr("j.json: kind \"TFJob\", expected PyTorchJob"));
  auto no_status = read_pytorchjobs(
      R"({"kind": "List", "items": [{"kind": "PyTorchJob", "metadata": {"name": "a"}}]})", "j.json",
      r);
  ASSERT_FALSE(no_status);
  EXPECT_THAT(no_status.error().message, HasSubstr("j.json: items[0] (a): status: missing"));
  auto bad_time = read_pytorchjobs(
      R"({"kind": "PyTorchJob", "status": {"conditions": [{"type": "Running", "lastTransitionTime": "soon"}]}})",
      "j.json", r);
  ASSERT_FALSE(bad_time);
  EXPECT_THAT(bad_time.error().message,
              HasSubstr("status.conditions[0].lastTransitionTime: \"soon\""));
}

// Issue 22: these aborted (out_of_range.406, type_error.302) instead of
// naming the file and the field.
TEST(PyTorchJob, HostileValuesAreErrorsNotAborts) {
  struct BadJob {
    const char* text;
    const char* message;
  };
  const BadJob cases[] = {
      {R"({"kind": "PyTorchJob", "spec": {"x": 1e400}})", "j.json: not valid JSON"},
      {R"({"kind": 7})", "j.json: kind 7, expected PyTorchJob"},
      {R"({"kind": "PyTorchJob", "status": {"conditions": [{"type": "Succeeded", "status": 1}]}})",
       "j.json ((unnamed)): status.conditions[0].status: expected a string, got number"},
  };
  for (const auto& c : cases) {
    Records r;
    auto read = read_pytorchjobs(c.text, "j.json", r);
    ASSERT_FALSE(read) << c.text;
    EXPECT_THAT(read.error().message, HasSubstr(c.message)) << c.text;
  }
}

TEST(SessionsCsv, ChainsExclusionsAndQuoting) {
  Inputs in;
  in.sessions = {fixture("sessions.csv")};
  auto r = read(in);
  ASSERT_EQ(r.attempts.size(), 6U);
  EXPECT_EQ(r.attempts[0].name, "llm, 70b");
  auto s = retry_stats(r);
  EXPECT_EQ(s.chains, 2);
  EXPECT_EQ(s.attempts, 5);
  EXPECT_EQ(s.lone_runs, 1);
  EXPECT_EQ(s.automatic.chains, 1);
  EXPECT_EQ(s.automatic.attempts, 3);
  EXPECT_DOUBLE_EQ(*s.automatic.success_rate, 1.0);
  EXPECT_EQ(s.manual.chains, 1);
  EXPECT_EQ(s.manual.attempts, 2);
  EXPECT_THAT(s.intervals.sorted_minutes, ElementsAre(10.0, 11.0, 120.0));
  EXPECT_DOUBLE_EQ(*s.intervals.median, 11);
  EXPECT_DOUBLE_EQ(*s.intervals.p25, 10.5);
  EXPECT_DOUBLE_EQ(*s.intervals.p75, 65.5);
  auto e = exclusion_stats(r, {}, {1, 3, 5});
  EXPECT_EQ(e.total, 4);
  EXPECT_EQ(e.nodes.size(), 7U);
  EXPECT_EQ(e.nodes[0].node, "n2");
  EXPECT_EQ(e.nodes[0].exclusions, 2);
  EXPECT_DOUBLE_EQ(*e.gini, 9.0 / 14);
  EXPECT_DOUBLE_EQ(e.top_k_share[1], 0.5);
  EXPECT_DOUBLE_EQ(e.top_k_share[3], 1.0);
}

TEST(SessionsCsv, MalformedRowsNameLineAndColumn) {
  const std::string header =
      "session_id,name,chain_id,attempt,trigger,status,submit_time,start_time,end_time,nodes,"
      "excluded_nodes\n";
  const std::pair<std::string, std::string> cases[] = {
      {"session_id,name\n", "c.csv:1: no \"chain_id\" column"},
      {header + "s,n,c,0,auto,success,,,,,\n", "c.csv:2: attempt \"0\""},
      {header + "s,n,c,1,robot,success,,,,,\n", "c.csv:2: trigger \"robot\""},
      {header + "s,n,c,1,auto,ok,,,,,\n", "c.csv:2: status \"ok\""},
      {header + "s,n,c,1,auto,success,,today,,,\n", "c.csv:2: start_time: \"today\""},
      {header + "s,n,c,1,auto,success,,,\n", "c.csv:2: 9 fields, the header has 11"},
      {header + "s,\"n,c,1,auto,success,,,,,\n",
       "c.csv: line 2, column 3: the quote opened here is never closed"},
      {header + "s,n,c,1,auto,success,,2023-02-29T00:00:00Z,,,\n",
       "c.csv:2: start_time: \"2023-02-29T00:00:00Z\""},
      {header + "s,n,c,1,auto,success,,2024-01-01T00:00:00+99:99,,,\n", "zone offset out of range"},
  };
  for (const auto& [text, message] : cases) {
    Records r;
    auto read = read_sessions_csv(text, "c.csv", r);
    ASSERT_FALSE(read) << text;
    EXPECT_THAT(read.error().message, HasSubstr(message)) << text;
  }
}

const std::string kSessionsHeader =
    "session_id,name,chain_id,attempt,trigger,status,submit_time,start_time,end_time,nodes,"
    "excluded_nodes\n";

// Excel's "CSV UTF-8" starts with a byte order mark; node lists may be
// separated by tabs or several spaces.
TEST(SessionsCsv, ByteOrderMarkAndAnyWhitespaceBetweenNodes) {
  Records r;
  auto read = read_sessions_csv(
      "\xEF\xBB\xBF" + kSessionsHeader + "s,n,,1,manual,success,,,,\"n1\tn2   n3\",n2\tn3\n",
      "c.csv", r);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(r.attempts.size(), 1U);
  EXPECT_THAT(r.attempts[0].nodes, ElementsAre("n1", "n2", "n3"));
  ASSERT_EQ(r.exclusions.size(), 2U);
  EXPECT_EQ(r.exclusions[0].node, "n2");
  EXPECT_EQ(r.exclusions[1].node, "n3");
}

// Chains are checked over every --sessions file together.
Expected<void> read_and_check(const std::vector<std::pair<std::string, std::string>>& files) {
  Records r;
  for (const auto& [name, text] : files) {
    auto read = read_sessions_csv(kSessionsHeader + text, name, r);
    if (!read) return read;
  }
  return check_sessions_chains(r);
}

TEST(SessionsChains, DuplicateAttemptsNameBothRowsAcrossFiles) {
  auto checked =
      read_and_check({{"a.csv", "s1,n,c,1,manual,failure,,,,,\n"},
                      {"b.csv", "s2,n,c,2,auto,failure,,,,,\ns3,n,c,1,auto,success,,,,,\n"}});
  ASSERT_FALSE(checked);
  EXPECT_THAT(checked.error().message,
              HasSubstr("chain \"c\" has attempt 1 twice: a.csv:2 and b.csv:3"));
}

TEST(SessionsChains, GapsAreErrors) {
  auto checked =
      read_and_check({{"a.csv", "s1,n,c,1,manual,failure,,,,,\ns2,n,c,3,auto,failure,,,,,\n"}});
  ASSERT_FALSE(checked);
  EXPECT_THAT(checked.error().message,
              HasSubstr("a.csv:3: chain \"c\" has attempt 3 but no attempt 2"));
  auto no_first = read_and_check({{"a.csv", "s1,n,c,2,manual,failure,,,,,\n"}});
  ASSERT_FALSE(no_first);
  EXPECT_THAT(no_first.error().message, HasSubstr("has attempt 2 but no attempt 1"));
}

// Attempt 2 starting at 10:30 while attempt 1 ran to 11:00 would be a retry
// interval of -30 minutes.
TEST(SessionsChains, OverlappingAttemptsAreErrors) {
  auto checked =
      read_and_check({{"a.csv",
                       "s1,n,c,1,manual,failure,,2024-03-01T10:00:00Z,2024-03-01T11:00:00Z,,\n"
                       "s2,n,c,2,auto,success,,2024-03-01T10:30:00Z,2024-03-01T12:00:00Z,,\n"}});
  ASSERT_FALSE(checked);
  EXPECT_THAT(checked.error().message,
              HasSubstr("a.csv:3: chain \"c\" attempt 2 starts before attempt 1 ended (a.csv:2)"));
  EXPECT_TRUE(
      read_and_check({{"a.csv",
                       "s1,n,c,1,manual,failure,,2024-03-01T10:00:00Z,2024-03-01T11:00:00Z,,\n"
                       "s2,n,c,2,auto,success,,2024-03-01T11:00:00Z,2024-03-01T12:00:00Z,,\n"}}));
}

TEST(Inputs, ADirectoryIsAnErrorNotACrash) {
  Inputs in;
  in.sessions = {fixture("")};
  auto r = read_inputs(in);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("is a directory"));
}

}  // namespace
}  // namespace ckpt::fleet::records
