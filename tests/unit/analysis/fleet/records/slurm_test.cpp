// sacct --json of 21.08, 23.11 and 24.05, sacct -P and -p text: exact
// exclusions and chains from fixtures whose answers are written here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/fleet/records/inputs.h"
#include "analysis/fleet/records/sacct_json.h"
#include "analysis/fleet/records/sacct_text.h"
#include "analysis/fleet/records/slurm_record.h"
#include "analysis/fleet/records/statistics.h"
#include "tests/unit/analysis/fleet/records/fixtures.h"

namespace ckpt::fleet::records {
namespace {

using test::fixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

Records read(const Inputs& in) {
  auto r = read_inputs(in);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : Records{};
}

std::vector<std::pair<std::string, int>> exclusion_counts(const ExclusionStats& s) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& n : s.nodes)
    if (n.exclusions > 0) out.emplace_back(n.node, n.exclusions);
  return out;
}

TEST(SacctJson, Slurm2108StringStatesAndIntegerReturnCodes) {
  Inputs in;
  in.sacct_json = {fixture("sacct_21.08.json")};
  auto r = read(in);
  ASSERT_EQ(r.attempts.size(), 5U);
  EXPECT_EQ(r.attempts[3].outcome, Outcome::cancelled);
  EXPECT_EQ(r.attempts[0].outcome, Outcome::success);
  EXPECT_EQ(*r.attempts[0].start_unix_s, 1700000060);
  auto s = exclusion_stats(r, {}, {1, 3, 5});
  // 1002 NODE_FAIL on gpu03 alone; 1003 NODE_FAIL on two nodes: unattributed.
  EXPECT_THAT(exclusion_counts(s), ElementsAre(Pair("gpu03", 1)));
  EXPECT_EQ(s.unattributed_node_failures, 1);
  EXPECT_EQ(s.nodes.size(), 5U);  // gpu01..gpu05
  EXPECT_DOUBLE_EQ(*s.gini, 0.8);
  auto retries = retry_stats(r);
  EXPECT_EQ(retries.chains, 0);
  EXPECT_EQ(retries.lone_runs, 5);
}

TEST(SacctJson, Slurm2311ArraysObjectsAndRequeuedDuplicates) {
  Inputs in;
  in.sacct_json = {fixture("sacct_23.11_duplicates.json")};
  auto r = read(in);
  auto s = exclusion_stats(r, {}, {1, 3, 5});
  EXPECT_THAT(exclusion_counts(s), ElementsAre(Pair("node07", 1)));
  EXPECT_EQ(s.nodes.size(), 4U);  // node07..node10
  EXPECT_DOUBLE_EQ(*s.gini, 0.75);
  auto retries = retry_stats(r);
  EXPECT_EQ(retries.chains, 1);
  EXPECT_EQ(retries.attempts, 3);
  EXPECT_EQ(retries.lone_runs, 2);
  EXPECT_EQ(retries.automatic.chains, 1);
  EXPECT_DOUBLE_EQ(*retries.automatic.success_rate, 1.0);
  EXPECT_EQ(retries.manual.chains, 0);
  const auto& chain = retries.chain_list.at(0);
  EXPECT_EQ(chain.id, "slurm:2001");
  EXPECT_THAT(chain.intervals_minutes, ElementsAre(10.0, 11.0));
  EXPECT_EQ(chain.attempts[1].state, "PREEMPTED");
  EXPECT_EQ(chain.attempts[1].trigger, Trigger::automatic);
  // The running job is unfinished, not a failure.
  EXPECT_EQ(r.attempts[4].outcome, Outcome::unfinished);
  EXPECT_FALSE(r.attempts[4].end_unix_s);
}

TEST(SacctJson, Slurm2405FailedNodeAndRestartCount) {
  Inputs in;
  in.sacct_json = {fixture("sacct_24.05.json")};
  auto r = read(in);
  auto s = exclusion_stats(r, {}, {1, 3, 5});
  EXPECT_THAT(exclusion_counts(s), ElementsAre(Pair("a3", 1), Pair("a4", 1)));
  EXPECT_EQ(s.nodes.size(), 5U);
  EXPECT_DOUBLE_EQ(*s.gini, 0.6);
  EXPECT_DOUBLE_EQ(s.top_k_share[1], 0.5);
  EXPECT_DOUBLE_EQ(s.top_k_share[3], 1.0);
  auto retries = retry_stats(r);
  // 3001: restart_cnt 2 → 3 attempts, the last succeeded; 3003: 2 attempts, failed.
  EXPECT_EQ(retries.chains, 2);
  EXPECT_EQ(retries.attempts, 5);
  EXPECT_EQ(retries.unrecorded_requeues, 3);
  EXPECT_EQ(retries.lone_runs, 1);
  EXPECT_DOUBLE_EQ(*retries.automatic.success_rate, 0.5);
  EXPECT_EQ(retries.intervals.count, 0U);
  EXPECT_THAT(retries.chains_by_attempts, ElementsAre(Pair(2, 1), Pair(3, 1)));
}

void expect_text_fixture(const std::string& name) {
  Inputs in;
  in.sacct_text = {fixture(name)};
  auto r = read(in);
  auto s = exclusion_stats(r, {}, {1, 3, 5});
  EXPECT_THAT(exclusion_counts(s), ElementsAre(Pair("gpu02", 1), Pair("gpu05", 1)));
  EXPECT_EQ(s.nodes.size(), 8U);  // gpu01..gpu08; the pending job has none
  EXPECT_DOUBLE_EQ(*s.gini, 0.75);
  auto retries = retry_stats(r);
  EXPECT_EQ(retries.chains, 1);
  EXPECT_EQ(retries.attempts, 3);
  EXPECT_EQ(retries.lone_runs, 3);  // 4002, 4003, 4004; steps are skipped
  ASSERT_EQ(retries.chain_list.size(), 1U);
  EXPECT_THAT(retries.chain_list[0].intervals_minutes, ElementsAre(12.0, 10.0));
  EXPECT_TRUE(retries.chain_list[0].succeeded);
  int cancelled = 0;
  for (const auto& a : r.attempts) cancelled += a.outcome == Outcome::cancelled ? 1 : 0;
  EXPECT_EQ(cancelled, 1);  // "CANCELLED by 1234"
}

TEST(SacctText, Parsable2) { expect_text_fixture("sacct_parsable2.txt"); }
TEST(SacctText, ParsableWithTrailingBars) { expect_text_fixture("sacct_parsable.txt"); }

TEST(SacctText, ResubmitsByNameJoinAManualChain) {
  std::string text =
      "JobID|JobName|User|State|Submit|Start|End|NodeList\n"
      "10|llm|bob|FAILED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|n1\n"
      "11|llm|bob|NODE_FAIL|2024-01-01T01:05:00|2024-01-01T01:07:00|2024-01-01T02:00:00|n2\n"
      "11|llm|bob|COMPLETED|2024-01-01T01:05:00|2024-01-01T02:09:00|2024-01-01T03:00:00|n3\n"
      "12|llm|amy|FAILED|2024-01-01T01:05:00|2024-01-01T01:05:00|2024-01-01T01:30:00|n1\n";
  Records plain;
  ASSERT_TRUE(read_sacct_text(text, "t", plain));
  Records joined = plain;
  finish_slurm_chains(plain);
  auto without = retry_stats(plain);
  EXPECT_EQ(without.chains, 1);  // job 11's requeue
  EXPECT_EQ(without.automatic.chains, 1);
  EXPECT_EQ(without.lone_runs, 2);
  EXPECT_THAT(without.chain_list[0].intervals_minutes, ElementsAre(9.0));

  finish_slurm_chains(joined);
  join_manual_resubmissions(joined);
  auto with = retry_stats(joined);
  EXPECT_EQ(with.chains, 1);
  EXPECT_EQ(with.attempts, 3);
  EXPECT_EQ(with.lone_runs, 1);  // amy's job has another user
  EXPECT_EQ(with.manual.chains, 1);
  EXPECT_DOUBLE_EQ(*with.manual.success_rate, 1.0);
  EXPECT_EQ(with.chain_list[0].id, "slurm:10");
  EXPECT_THAT(with.chain_list[0].intervals_minutes, ElementsAre(7.0, 9.0));
}

TEST(SacctText, ARequeuedJobPendingAgainIsItsLastUnfinishedAttempt) {
  std::string text =
      "JobID|State|Submit|Start|End|NodeList\n"
      "20|PENDING|2024-01-01T01:00:00|Unknown|Unknown|None assigned\n"
      "20|NODE_FAIL|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T01:00:00|n1\n";
  Records r;
  ASSERT_TRUE(read_sacct_text(text, "t", r));
  finish_slurm_chains(r);
  auto s = retry_stats(r);
  ASSERT_EQ(s.chain_list.size(), 1U);
  const auto& attempts = s.chain_list[0].attempts;
  ASSERT_EQ(attempts.size(), 2U);
  EXPECT_EQ(attempts[0].state, "NODE_FAIL");
  EXPECT_EQ(attempts[1].outcome, Outcome::unfinished);
  EXPECT_EQ(attempts[1].trigger, Trigger::automatic);
  EXPECT_FALSE(s.chain_list[0].succeeded);
  EXPECT_EQ(s.intervals.count, 0U);
}

struct BadInput {
  const char* text;
  const char* message;
};

TEST(SacctJson, MalformedInputNamesTheFileJobAndField) {
  const BadInput cases[] = {
      {"{\"jobs\": [", "f.json: not valid JSON"},
      {"{\"meta\": {}}", "f.json: no \"jobs\" array"},
      {"{\"jobs\": {}}", "f.json: \"jobs\": expected an array, got object"},
      {"{\"jobs\": [{\"name\": \"x\"}]}", "f.json: jobs[0]: job_id: missing"},
      {"{\"jobs\": [{\"job_id\": 5, \"state\": {\"current\": 3}, \"time\": {}}]}",
       "f.json: jobs[0] (job_id 5): state.current: expected a string (21.08) or a non-empty array"},
      {"{\"jobs\": [{\"job_id\": 5, \"state\": {\"current\": \"DONE\"}, \"time\": {}}]}",
       "f.json: jobs[0] (job_id 5): State \"DONE\" is not a Slurm job state"},
      {"{\"jobs\": [{\"job_id\": 5, \"state\": {\"current\": [\"FAILED\"]}, "
       "\"exit_code\": {\"return_code\": \"1\"}, \"time\": {}}]}",
       "f.json: jobs[0] (job_id 5): exit_code.return_code: expected an integer or"},
      {"{\"jobs\": [{\"job_id\": 5, \"state\": {\"current\": [\"FAILED\"]}, "
       "\"time\": {\"start\": \"noon\"}}]}",
       "f.json: jobs[0] (job_id 5): time.start: expected an integer"},
      {"{\"jobs\": [{\"job_id\": 5, \"state\": {\"current\": [\"FAILED\"]}, "
       "\"time\": {}, \"nodes\": \"n[1-\"}]}",
       "f.json: jobs[0] (job_id 5): NodeList: hostlist \"n[1-\""},
  };
  for (const auto& c : cases) {
    Records r;
    auto read = read_sacct_json(c.text, "f.json", r);
    ASSERT_FALSE(read) << c.text;
    EXPECT_THAT(read.error().message, HasSubstr(c.message)) << c.text;
  }
}

// Issue 22: each of these aborted the command (out_of_range.406 for 1e400,
// type_error.302 for a non-boolean "infinite") or was read as a wrapped or
// truncated number.
TEST(SacctJson, HostileValuesAreFieldErrorsNotAborts) {
  const std::string job = "{\"jobs\": [{\"job_id\": 5, \"state\": {\"current\": [\"FAILED\"]}, ";
  const BadInput cases[] = {
      {"{\"jobs\": [{\"job_id\": 1e400}]}", "f.json: not valid JSON"},
      {"{\"jobs\": [{\"job_id\": 18446744073709551615}]}",
       "f.json: jobs[0]: job_id: expected an integer, got 18446744073709551615"},
      {"{\"jobs\": [{\"job_id\": 5.5}]}", "f.json: jobs[0]: job_id: expected an integer, got 5.5"},
      {"{\"jobs\": [{\"job_id\": \"5\"}]}",
       "f.json: jobs[0]: job_id: expected an integer, got string"},
  };
  for (const auto& c : cases) {
    Records r;
    auto read = read_sacct_json(c.text, "f.json", r);
    ASSERT_FALSE(read) << c.text;
    EXPECT_THAT(read.error().message, HasSubstr(c.message)) << c.text;
  }
  const std::pair<std::string, const char*> fields[] = {
      {"\"time\": {\"start\": {\"set\": true, \"infinite\": \"no\", \"number\": 1}}}]}",
       "f.json: jobs[0] (job_id 5): time.start.infinite: expected a boolean, got string"},
      {"\"time\": {\"start\": {\"set\": true, \"number\": 1e300}}}]}",
       "f.json: jobs[0] (job_id 5): time.start.number: expected an integer, got 1e+300"},
      {"\"time\": {}, \"restart_cnt\": -3}]}",
       "f.json: jobs[0] (job_id 5): restart_cnt: -3: must be in [0, 2147483647]"},
      {"\"time\": {}, \"restart_cnt\": 4294967297}]}",
       "f.json: jobs[0] (job_id 5): restart_cnt: 4294967297: must be in [0, 2147483647]"},
  };
  for (const auto& [tail, message] : fields) {
    Records r;
    auto read = read_sacct_json(job + tail, "f.json", r);
    ASSERT_FALSE(read) << tail;
    EXPECT_THAT(read.error().message, HasSubstr(message)) << tail;
  }
}

TEST(SacctText, MalformedInputNamesTheFileLineAndColumn) {
  const BadInput cases[] = {
      {"1234|FAILED\n", "f.txt:1: the header has no JobID column"},
      {"JobID|JobName\n1|x\n", "f.txt:1: the header has no State column"},
      {"JobID|State|End\n1|FAILED\n", "f.txt:2: 2 fields, the header has 3"},
      {"JobID|State|End\n1|FAILED|yesterday\n", "f.txt:2: End: \"yesterday\" is not an ISO 8601"},
      {"JobID|State|\n1|FAILED\n", "f.txt:2: no \"|\" at the end"},
      {"JobID|State\n1|EXPLODED\n", "f.txt:2: State \"EXPLODED\" is not a Slurm job state"},
      {"JobID|State|NodeList\n1|FAILED|gpu[3-1]\n", "f.txt:2: NodeList: hostlist \"gpu[3-1]\""},
      {"", "f.txt: empty"},
  };
  for (const auto& c : cases) {
    Records r;
    auto read = read_sacct_text(c.text, "f.txt", r);
    ASSERT_FALSE(read) << c.text;
    EXPECT_THAT(read.error().message, HasSubstr(c.message)) << c.text;
  }
}

TEST(Inputs, AFileThatCannotBeReadIsNamed) {
  Inputs in;
  in.sacct_json = {"/nonexistent/sacct.json"};
  auto r = read_inputs(in);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/sacct.json: cannot read"));
}

}  // namespace
}  // namespace ckpt::fleet::records
