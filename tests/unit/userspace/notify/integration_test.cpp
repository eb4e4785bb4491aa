// deliver() against real servers on loopback: aiosmtpd (STARTTLS, implicit
// TLS, AUTH, rejected recipients), a silent TCP listener, and an http.server
// webhook receiver, all from tests/notify/. The servers decode what they
// receive with Python's email package, an independent reading of our MIME.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "notify/notify.h"
#include "test_servers.h"

namespace ckpt::notify {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using testutil::read_file;
using testutil::ServerProcess;
using testutil::TempDir;
using testutil::write_file;

constexpr uint64_t kSecond = 1'000'000'000ull;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A loopback port nobody listens on: bound, then closed.
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  EXPECT_TRUE(ok) << "cannot bind a loopback port";
  return ok ? ntohs(addr.sin_port) : 1;  // port 1: nothing listens there either
}

JobOutcome failed_job(const std::string& log_path) {
  JobOutcome o;
  o.command = {"python", "train.py", "--steps", "1000"};
  o.host = "node01";
  o.start_wall_ns = 1714564800ull * kSecond;
  o.duration_ns = 3727 * kSecond;
  o.exit_code = 1;
  o.failure_class = "cuda_oom";
  o.failure_rule = "log line matches 'CUDA out of memory'";
  o.evidence = {{2999, "torch.OutOfMemoryError: CUDA out of memory."}};
  o.kernel_events = {"NVRM: Xid (PCI:0000:3b:00): 31, pid=4242"};
  o.checkpoint_summary_text = "checkpoint 1 save 4.0 GiB 12.1 s bottleneck host_io\n";
  o.checkpoint_summary_json = {{"checkpoints", json::array({{{"id", 1}}})}};
  o.log_path = log_path;
  o.log_tail = {"step 2998", "torch.OutOfMemoryError: CUDA out of memory."};
  o.trace_path = "/scratch/trace.db";
  return o;
}

NotifyTarget mail_target(const std::string& text = "mailto:ops@example.com,oncall@example.org") {
  auto t = parse_target(text);
  EXPECT_TRUE(t) << t.error().message;
  return *t;
}

// The self-signed certificate the TLS tests trust through notify.ca_file.
class TestCertificate {
 public:
  TestCertificate() {
    ok_ = testutil::run_quietly({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                                 "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key(), "-out",
                                 cert(), "-days", "2", "-subj", "/CN=ckptscope-test", "-addext",
                                 "subjectAltName=IP:127.0.0.1,DNS:localhost"}) == 0;
  }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] std::string cert() const { return dir_ / "cert.pem"; }
  [[nodiscard]] std::string key() const { return dir_ / "key.pem"; }

 private:
  TempDir dir_;
  bool ok_ = false;
};

class SmtpIntegration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testutil::bypass_proxies_for_loopback();
    cert_ = std::make_unique<TestCertificate>();
  }
  static void TearDownTestSuite() { cert_.reset(); }

  void SetUp() override {
    // A declared dependency (scripts/install-deps.sh): missing is a failure.
    ASSERT_TRUE(testutil::python_has_aiosmtpd())
        << "/usr/bin/python3 lacks aiosmtpd: install Debian's python3-aiosmtpd "
           "(scripts/install-deps.sh does)";
  }

  // Starts smtp_server.py; the port, or 0 after a recorded failure.
  int start_server(std::vector<std::string> args, bool tls = false) {
    if (tls) {
      EXPECT_TRUE(cert_->ok()) << "openssl req -x509 failed: cannot make the test certificate";
      args.insert(args.end(), {"--cert", cert_->cert(), "--key", cert_->key()});
    }
    args.insert(args.end(), {"--out-dir", dir_ / "out"});
    std::string err = server_.start("smtp_server.py", args, dir_.path());
    EXPECT_EQ(err, "");
    return err.empty() ? server_.port() : 0;
  }

  NotifySettings settings(const json& config, const std::string& smtp_url,
                          std::map<std::string, std::string> env = {}) {
    auto s = settings_from(&config, smtp_url, env_of(std::move(env)));
    EXPECT_TRUE(s) << s.error().message;
    return s ? *s : NotifySettings{};
  }

  json received(int n) {
    std::string text = read_file(dir_ / ("out/msg-" + std::to_string(n) + ".json"));
    EXPECT_FALSE(text.empty()) << "the server saved no message " << n << "; its log:\n"
                               << server_.log();
    return text.empty() ? json() : json::parse(text);
  }

  static std::unique_ptr<TestCertificate> cert_;
  TempDir dir_;
  ServerProcess server_;
};

std::unique_ptr<TestCertificate> SmtpIntegration::cert_;

TEST_F(SmtpIntegration, StartTlsWithAuthDeliversHeadersBodyAndAttachments) {
  int port = start_server({"--require-starttls", "--auth", "alice:s3cret pw"}, /*tls=*/true);
  ASSERT_NE(port, 0);

  std::string log;
  for (int i = 1; i <= 3000; ++i) log += "step " + std::to_string(i) + " loss 0.5\n";
  write_file(dir_ / "job.log", log);  // ~54 KiB: over the budget, so its tail goes
  write_file(dir_ / "report.json", R"({"checkpoints": []})");
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 7 + i / 256) & 0xff);
  write_file(dir_ / "out.bin", binary);
  write_file(dir_ / "big.bin", std::string(200'000, 'B'));
  ArtifactPlan plan = plan_attachments({{dir_ / "report.json", false},
                                        {dir_ / "out.bin", false},
                                        {dir_ / "big.bin", false},
                                        {dir_ / "job.log", true},
                                        {dir_ / "missing.bin", false}},
                                       32 * 1024);
  ASSERT_EQ(plan.attached.size(), 3u);
  ASSERT_EQ(plan.left_out.size(), 3u);
  Message m = compose(failed_job(dir_ / "job.log"), plan);

  NotifySettings s =
      settings({{"from", "Cluster Alerts <alerts@example.org>"}, {"ca_file", cert_->cert()}},
               "smtp://127.0.0.1:" + std::to_string(port),
               {{"CKPTSCOPE_SMTP_USER", "alice"}, {"CKPTSCOPE_SMTP_PASSWORD", "s3cret pw"}});
  auto sent = deliver(mail_target(), s, m, plan);
  ASSERT_TRUE(sent) << sent.error().message << "\nserver log:\n" << server_.log();

  json r = received(1);
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(r["starttls"], true) << "STARTTLS was not negotiated";
  EXPECT_EQ(r["tls"], true);
  EXPECT_EQ(r["auth_login"], "alice");
  EXPECT_EQ(r["auth_password"], "s3cret pw");
  EXPECT_EQ(r["mail_from"], "alerts@example.org");
  EXPECT_EQ(r["rcpt_tos"], json({"ops@example.com", "oncall@example.org"}));
  EXPECT_EQ(r["headers"]["From"], "Cluster Alerts <alerts@example.org>");
  EXPECT_EQ(r["headers"]["To"], "ops@example.com, oncall@example.org");
  EXPECT_EQ(r["headers"]["Subject"],
            "[ckptscope] FAILED (cuda_oom) train.py on node01 after 1h02m");
  EXPECT_EQ(r["date_parses"], true);
  EXPECT_THAT(r["headers"]["Message-ID"].get<std::string>(), HasSubstr("@example.org>"));
  EXPECT_EQ(r["content_type"], "multipart/mixed");
  EXPECT_EQ(r["text"], m.text);
  EXPECT_THAT(r["text"].get<std::string>(), HasSubstr("line 2999: torch.OutOfMemoryError"));
  EXPECT_THAT(r["text"].get<std::string>(),
              HasSubstr("big.bin (195.3 KiB): over budget: 195.3 KiB > " +
                        format_size(32 * 1024 - 19 - 4096) + " left\n"));
  EXPECT_THAT(r["text"].get<std::string>(), HasSubstr("missing.bin: missing\n"));
  EXPECT_THAT(r["text"].get<std::string>(), HasSubstr("attached as job.log.tail\n"));

  ASSERT_EQ(r["attachments"].size(), 3u);
  const std::vector<std::string> names = {"report.json", "out.bin", "job.log.tail"};
  for (size_t i = 0; i < 3; ++i) {
    const json& a = r["attachments"][i];
    EXPECT_EQ(a["filename"], names[i]);
    EXPECT_EQ(a["transfer_encoding"], "base64");
    EXPECT_EQ(read_file(a["file"].get<std::string>()), plan.attached[i].data) << names[i];
  }
  EXPECT_EQ(read_file(r["attachments"][1]["file"].get<std::string>()), binary);
  const std::string tail = read_file(r["attachments"][2]["file"].get<std::string>());
  EXPECT_TRUE(log.ends_with(tail));
  EXPECT_TRUE(tail.starts_with("step ")) << "the tail must start at a line";
  EXPECT_GT(tail.size(), 4000u);
}

TEST_F(SmtpIntegration, ImplicitTlsSmtps) {
  int port = start_server({"--implicit-tls"}, /*tls=*/true);
  ASSERT_NE(port, 0);
  ArtifactPlan plan;
  Message m = compose(failed_job(""), plan);
  NotifySettings s =
      settings({{"ca_file", cert_->cert()}}, "smtps://127.0.0.1:" + std::to_string(port));
  auto sent = deliver(mail_target("mailto:ops@example.com"), s, m, plan);
  ASSERT_TRUE(sent) << sent.error().message << "\nserver log:\n" << server_.log();
  json r = received(1);
  EXPECT_EQ(r["tls"], true);
  EXPECT_EQ(r["starttls"], false);  // TLS from the first byte
  EXPECT_EQ(r["rcpt_tos"], json({"ops@example.com"}));
  EXPECT_EQ(r["text"], m.text);
}

TEST_F(SmtpIntegration, UntrustedCertificateIsATlsFailure) {
  int port = start_server({"--require-starttls"}, /*tls=*/true);
  ASSERT_NE(port, 0);
  ArtifactPlan plan;
  // No ca_file: the system's CAs do not know our self-signed certificate.
  NotifySettings s = settings(json::object(), "smtp://127.0.0.1:" + std::to_string(port));
  auto sent =
      deliver(mail_target("mailto:ops@example.com"), s, compose(failed_job(""), plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message,
              HasSubstr("mail to ops@example.com via smtp://127.0.0.1:" + std::to_string(port)));
  EXPECT_THAT(sent.error().message, HasSubstr("certificate"));
  EXPECT_THAT(sent.error().message, Not(HasSubstr("SMTP reply")));  // 220 was no refusal
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out/msg-1.json"));
}

TEST_F(SmtpIntegration, StartTlsRequiredByDefaultFailsWithoutIt) {
  int port = start_server({});  // no certificate: STARTTLS is not offered
  ASSERT_NE(port, 0);
  ArtifactPlan plan;
  NotifySettings s = settings(json::object(), "smtp://127.0.0.1:" + std::to_string(port));
  auto sent =
      deliver(mail_target("mailto:ops@example.com"), s, compose(failed_job(""), plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message, HasSubstr("STARTTLS"));
  EXPECT_THAT(sent.error().message, HasSubstr(std::to_string(port)));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out/msg-1.json"));
}

TEST_F(SmtpIntegration, LocalRelayWithoutTlsAndANonAsciiSubject) {
  int port = start_server({});
  ASSERT_NE(port, 0);
  JobOutcome job = failed_job("");
  job.job_name = "entraînement-ü";
  ArtifactPlan plan;
  Message m = compose(job, plan);
  NotifySettings s = settings({{"tls", "none"}}, "smtp://127.0.0.1:" + std::to_string(port));
  auto sent = deliver(mail_target("mailto:ops@example.com"), s, m, plan);
  ASSERT_TRUE(sent) << sent.error().message << "\nserver log:\n" << server_.log();
  json r = received(1);
  EXPECT_EQ(r["tls"], false);
  EXPECT_EQ(r["starttls"], false);
  EXPECT_EQ(r["headers"]["Subject"], m.subject);
  EXPECT_THAT(m.subject, HasSubstr("entraînement-ü"));
  EXPECT_THAT(r["headers"]["From"].get<std::string>(), HasSubstr("ckptscope@"));
  EXPECT_EQ(r["text"], m.text);
}

TEST_F(SmtpIntegration, RejectedRecipientIsAnErrorWithTheReply) {
  int port = start_server({"--reject-rcpt", "nobody@example.com"});
  ASSERT_NE(port, 0);
  ArtifactPlan plan;
  NotifySettings s = settings({{"tls", "none"}}, "smtp://127.0.0.1:" + std::to_string(port));
  auto sent = deliver(mail_target("mailto:ops@example.com,nobody@example.com"), s,
                      compose(failed_job(""), plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message, HasSubstr("mail to ops@example.com,nobody@example.com"));
  EXPECT_THAT(sent.error().message, HasSubstr("SMTP reply 550"));
  EXPECT_THAT(sent.error().message, HasSubstr("no such user"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out/msg-1.json"));
}

TEST_F(SmtpIntegration, WrongPasswordIsAnError) {
  int port = start_server({"--require-starttls", "--auth", "alice:right"}, /*tls=*/true);
  ASSERT_NE(port, 0);
  ArtifactPlan plan;
  NotifySettings s =
      settings({{"ca_file", cert_->cert()}, {"user", "alice"}},
               "smtp://127.0.0.1:" + std::to_string(port), {{"CKPTSCOPE_SMTP_PASSWORD", "wrong"}});
  auto sent =
      deliver(mail_target("mailto:ops@example.com"), s, compose(failed_job(""), plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message, HasSubstr("535"));
  EXPECT_THAT(sent.error().message, Not(HasSubstr("wrong")));  // the password stays secret
}

// Wall-clock bounds: a *Timing suite runs alone (RUN_SERIAL, CMakeLists.txt
// ckpt_unit_tests), never beside other tests under the sanitizers (issue 40).
class SmtpTiming : public SmtpIntegration {};

TEST_F(SmtpTiming, HangingServerTimesOutOnTime) {
  std::string err = server_.start("smtp_server.py", {"--mode", "hang"}, dir_.path());
  ASSERT_EQ(err, "");
  ArtifactPlan plan;
  NotifySettings s = settings({{"timeout_s", 2}, {"tls", "none"}},
                              "smtp://127.0.0.1:" + std::to_string(server_.port()));
  const auto t0 = std::chrono::steady_clock::now();
  auto sent =
      deliver(mail_target("mailto:ops@example.com"), s, compose(failed_job(""), plan), plan);
  const double took = seconds_since(t0);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message, HasSubstr("timed out"));
  EXPECT_THAT(sent.error().message, HasSubstr("notify timeout 2 s"));
  EXPECT_THAT(sent.error().message, HasSubstr(std::to_string(server_.port())));
  EXPECT_GE(took, 1.9);
  // The 2 s timeout plus curl's ~1 s progress-callback period plus slack.
  // Measured alone under ASan+UBSan here: 2.002-2.005 s over 5 runs.
  EXPECT_LE(took, 6.0);
  std::printf("timed out after %.3f s (limit 6 s)\n", took);
}

// The connect phase is over (greeting, EHLO, envelope): only the total
// timeout can end this one.
TEST_F(SmtpTiming, ServerStallingAfterTheMessageHitsTheTotalTimeout) {
  int port = start_server({"--stall-on-data"});
  ASSERT_NE(port, 0);
  ArtifactPlan plan;
  NotifySettings s = settings({{"timeout_s", 2}, {"connect_timeout_s", 1}, {"tls", "none"}},
                              "smtp://127.0.0.1:" + std::to_string(port));
  const auto t0 = std::chrono::steady_clock::now();
  auto sent =
      deliver(mail_target("mailto:ops@example.com"), s, compose(failed_job(""), plan), plan);
  const double took = seconds_since(t0);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message, HasSubstr("timed out"));
  EXPECT_THAT(sent.error().message, HasSubstr("notify timeout 2 s"));
  EXPECT_GE(took, 1.9);
  // The timeout, plus curl's ~1 s progress-callback period, plus slack (4.004 s
  // was seen once when it ran beside other tests; alone, see docs/ci.md).
  EXPECT_LE(took, 6.0);
  std::printf("timed out after %.3f s (limit 6 s)\n", took);
}

// The message is accepted; a relay that then never answers QUIT must not hold
// ckptscope (curl says QUIT while cleaning up, outside any curl timeout).
TEST_F(SmtpIntegration, ServerStallingOnQuitDoesNotHoldUs) {
  int port = start_server({"--stall-on-quit"});
  ASSERT_NE(port, 0);
  ArtifactPlan plan;
  NotifySettings s =
      settings({{"timeout_s", 10}, {"tls", "none"}}, "smtp://127.0.0.1:" + std::to_string(port));
  const auto t0 = std::chrono::steady_clock::now();
  auto sent =
      deliver(mail_target("mailto:ops@example.com"), s, compose(failed_job(""), plan), plan);
  const double took = seconds_since(t0);
  ASSERT_TRUE(sent) << sent.error().message;
  EXPECT_FALSE(received(1).is_null());
  EXPECT_LE(took, 5.0);  // far below the 10 s timeout QUIT would otherwise wait
}

// Failures that need no server at all.
TEST(SmtpFailure, RefusedConnectionFailsFastNamingThePort) {
  const int port = free_port();
  auto s = settings_from(nullptr, "smtp://127.0.0.1:" + std::to_string(port), env_of({}));
  ASSERT_TRUE(s);
  ArtifactPlan plan;
  const auto t0 = std::chrono::steady_clock::now();
  auto sent = deliver(mail_target("mailto:ops@example.com"), *s, compose(JobOutcome{}, plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_LT(seconds_since(t0), 2.0);
  EXPECT_THAT(sent.error().message, HasSubstr("mail to ops@example.com via smtp://127.0.0.1:" +
                                              std::to_string(port) + " (from --smtp)"));
  EXPECT_THAT(sent.error().message, HasSubstr("port " + std::to_string(port)));
  EXPECT_THAT(sent.error().message, HasSubstr("Connection refused"));
}

TEST(SmtpFailure, UnresolvableHostIsReportedWithinTheTimeout) {
  const json config = {{"timeout_s", 2}};
  auto s = settings_from(&config, "smtp://ckptscope-no-such-host.invalid", env_of({}));
  ASSERT_TRUE(s);
  ArtifactPlan plan;
  const auto t0 = std::chrono::steady_clock::now();
  auto sent = deliver(mail_target("mailto:ops@example.com"), *s, compose(JobOutcome{}, plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_LE(seconds_since(t0), 4.0);
  EXPECT_THAT(sent.error().message, HasSubstr("ckptscope-no-such-host.invalid"));
}

TEST(SmtpFailure, MailWithoutARelayIsAnError) {
  ArtifactPlan plan;
  auto sent = deliver(mail_target("mailto:ops@example.com"), NotifySettings{},
                      compose(JobOutcome{}, plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message, HasSubstr("no SMTP relay"));
}

class WebhookIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(testutil::kPython, X_OK), 0)
        << "no /usr/bin/python3: install Debian's python3 (scripts/install-deps.sh does)";
    testutil::bypass_proxies_for_loopback();
  }
  int start_server(std::vector<std::string> args) {
    args.insert(args.end(), {"--out-dir", dir_ / "out"});
    std::string err = server_.start("webhook_server.py", args, dir_.path());
    EXPECT_EQ(err, "");
    return err.empty() ? server_.port() : 0;
  }
  TempDir dir_;
  ServerProcess server_;
};

TEST_F(WebhookIntegration, PostsTheMessageAsJsonWithABearerToken) {
  int port = start_server({});
  ASSERT_NE(port, 0);
  write_file(dir_ / "job.log", "one\ntwo\n");
  ArtifactPlan plan =
      plan_attachments({{dir_ / "job.log", true}, {dir_ / "missing.txt", false}}, 1 << 20);
  Message m = compose(failed_job(dir_ / "job.log"), plan);
  auto target = parse_target("http://127.0.0.1:" + std::to_string(port) + "/hooks/ckpt");
  ASSERT_TRUE(target);
  auto s = settings_from(nullptr, "", env_of({{"CKPTSCOPE_WEBHOOK_TOKEN", "tok-123"}}));
  ASSERT_TRUE(s);
  auto sent = deliver(*target, *s, m, plan);
  ASSERT_TRUE(sent) << sent.error().message << "\nserver log:\n" << server_.log();

  json body = json::parse(read_file(dir_ / "out/post-1.json"));
  EXPECT_EQ(body, m.json);  // everything, exactly
  EXPECT_EQ(body["subject"], "[ckptscope] FAILED (cuda_oom) train.py on node01 after 1h02m");
  EXPECT_EQ(body["exit"]["code"], 1);
  EXPECT_EQ(body["failure"]["evidence"][0]["line"], 2999);
  EXPECT_EQ(body["kernel_events"][0], "NVRM: Xid (PCI:0000:3b:00): 31, pid=4242");
  EXPECT_EQ(body["checkpoints"]["summary"]["checkpoints"][0]["id"], 1);
  EXPECT_EQ(body["attachments"][0]["name"], "job.log");
  EXPECT_EQ(body["left_out"][0]["reason"], "missing");
  json meta = json::parse(read_file(dir_ / "out/post-1.meta.json"));
  EXPECT_EQ(meta["path"], "/hooks/ckpt");
  EXPECT_EQ(meta["headers"]["Content-Type"], "application/json");
  EXPECT_EQ(meta["headers"]["Authorization"], "Bearer tok-123");

  // Without a token there is no Authorization header at all.
  auto no_token = settings_from(nullptr, "", env_of({}));
  ASSERT_TRUE(no_token);
  ASSERT_TRUE(deliver(*target, *no_token, m, plan));
  json meta2 = json::parse(read_file(dir_ / "out/post-2.meta.json"));
  EXPECT_FALSE(meta2["headers"].contains("Authorization"));
}

TEST_F(WebhookIntegration, ErrorStatusIsReportedWithTheReceiversWords) {
  int port = start_server({"--status", "500"});
  ASSERT_NE(port, 0);
  auto target = parse_target("http://127.0.0.1:" + std::to_string(port) + "/hooks/ckpt");
  ASSERT_TRUE(target);
  ArtifactPlan plan;
  auto sent = deliver(*target, NotifySettings{}, compose(failed_job(""), plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_EQ(sent.error().message, "webhook http://127.0.0.1:" + std::to_string(port) +
                                      "/hooks/...: HTTP 500: receiver failed on purpose");
}

TEST_F(WebhookIntegration, SilentReceiverTimesOutOnTime) {
  // The SMTP helper's silent mode is plain sockets: an HTTP server that accepts and hangs.
  ASSERT_EQ(server_.start("smtp_server.py", {"--mode", "hang"}, dir_.path()), "");
  auto target = parse_target("http://127.0.0.1:" + std::to_string(server_.port()) + "/hook");
  ASSERT_TRUE(target);
  const json config = {{"timeout_s", 2}};
  auto s = settings_from(&config, "", env_of({}));
  ASSERT_TRUE(s);
  ArtifactPlan plan;
  const auto t0 = std::chrono::steady_clock::now();
  auto sent = deliver(*target, *s, compose(failed_job(""), plan), plan);
  const double took = seconds_since(t0);
  ASSERT_FALSE(sent);
  EXPECT_THAT(sent.error().message, HasSubstr("webhook http://127.0.0.1:"));
  EXPECT_THAT(sent.error().message, HasSubstr("timed out"));
  EXPECT_GE(took, 1.9);
  EXPECT_LE(took, 6.0);  // bounded: the timeout plus slack for a loaded CI machine
}

TEST(WebhookFailure, RefusedConnectionFailsFast) {
  testutil::bypass_proxies_for_loopback();
  const int port = free_port();
  auto target = parse_target("http://127.0.0.1:" + std::to_string(port) + "/hook");
  ASSERT_TRUE(target);
  ArtifactPlan plan;
  const auto t0 = std::chrono::steady_clock::now();
  auto sent = deliver(*target, NotifySettings{}, compose(JobOutcome{}, plan), plan);
  ASSERT_FALSE(sent);
  EXPECT_LT(seconds_since(t0), 2.0);
  EXPECT_THAT(sent.error().message,
              HasSubstr("webhook http://127.0.0.1:" + std::to_string(port) + "/hook: "));
}

}  // namespace
}  // namespace ckpt::notify
