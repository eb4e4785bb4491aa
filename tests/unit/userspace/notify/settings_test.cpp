#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "notify/notify.h"
#include "test_servers.h"

namespace ckpt::notify {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string settings_error(const json& section, const std::string& flag = "",
                           std::map<std::string, std::string> env = {}) {
  auto s = settings_from(&section, flag, env_of(std::move(env)));
  EXPECT_FALSE(s) << "accepted " << section.dump();
  return s ? std::string() : s.error().message;
}

TEST(NotifySettings, DefaultsWithNothingConfigured) {
  auto s = settings_from(nullptr, "", env_of({}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->smtp_url.empty());
  EXPECT_THAT(s->from, StartsWith("ckptscope@"));
  EXPECT_EQ(s->tls, TlsMode::kRequired);
  EXPECT_EQ(s->timeout_ms, 30'000u);
  EXPECT_EQ(s->connect_timeout_ms, 10'000u);
  EXPECT_EQ(s->attach_budget, 10u << 20);
  EXPECT_EQ(s->log_tail_lines, 40u);
  EXPECT_TRUE(s->user.empty());
  EXPECT_TRUE(s->webhook_token.empty());
}

TEST(NotifySettings, RelayUrlPrecedenceIsFlagThenConfigThenEnvironment) {
  const json config = {{"smtp_url", "smtp://config.example:25"}};
  const std::map<std::string, std::string> env = {{"CKPTSCOPE_SMTP_URL", "smtp://env.example"}};

  auto flag = settings_from(&config, "smtps://flag.example:465", env_of(env));
  ASSERT_TRUE(flag) << flag.error().message;
  EXPECT_EQ(flag->smtp_url, "smtps://flag.example:465");
  EXPECT_EQ(flag->smtp_url_source, "--smtp");

  auto cfg = settings_from(&config, "", env_of(env));
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->smtp_url, "smtp://config.example:25");
  EXPECT_EQ(cfg->smtp_url_source, "notify.smtp_url");

  auto from_env = settings_from(nullptr, "", env_of(env));
  ASSERT_TRUE(from_env) << from_env.error().message;
  EXPECT_EQ(from_env->smtp_url, "smtp://env.example");
  EXPECT_EQ(from_env->smtp_url_source, "CKPTSCOPE_SMTP_URL");

  // An empty variable is an unset one.
  auto empty = settings_from(nullptr, "", env_of({{"CKPTSCOPE_SMTP_URL", ""}}));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->smtp_url.empty());
}

TEST(NotifySettings, SecretsComeFromConfigElseEnvironmentEachOnItsOwn) {
  const std::map<std::string, std::string> env = {{"CKPTSCOPE_SMTP_USER", "env-user"},
                                                  {"CKPTSCOPE_SMTP_PASSWORD", "env-pw"},
                                                  {"CKPTSCOPE_WEBHOOK_TOKEN", "env-token"}};
  auto only_env = settings_from(nullptr, "", env_of(env));
  ASSERT_TRUE(only_env) << only_env.error().message;
  EXPECT_EQ(only_env->user, "env-user");
  EXPECT_EQ(only_env->password, "env-pw");
  EXPECT_EQ(only_env->webhook_token, "env-token");

  const json config = {{"user", "cfg-user"}, {"webhook_token", "cfg-token"}};
  auto mixed = settings_from(&config, "", env_of(env));
  ASSERT_TRUE(mixed) << mixed.error().message;
  EXPECT_EQ(mixed->user, "cfg-user");
  EXPECT_EQ(mixed->password, "env-pw");  // the usual split: user in the file, secret in the env
  EXPECT_EQ(mixed->webhook_token, "cfg-token");
}

TEST(NotifySettings, UserWithoutPasswordIsAnError) {
  EXPECT_THAT(settings_error({{"user", "u"}}), HasSubstr("no password"));
  EXPECT_THAT(settings_error(json::object(), "", {{"CKPTSCOPE_SMTP_PASSWORD", "p"}}),
              HasSubstr("no user"));
}

TEST(NotifySettings, ConfigValuesAreParsed) {
  testutil::TempDir dir;
  testutil::write_file(dir / "ca.pem", "not really a CA, but readable");
  const json config = {{"smtp_url", "smtp://relay.example:587"},
                       {"from", "Cluster Alerts <alerts@example.org>"},
                       {"user", "u"},
                       {"password", "p w"},
                       {"tls", "try"},
                       {"ca_file", dir / "ca.pem"},
                       {"timeout_s", 2.5},
                       {"connect_timeout_s", 1},
                       {"attach_budget", "512K"},
                       {"attach", {"/tmp/a", "/tmp/b"}},
                       {"log_tail_lines", 0},
                       {"webhook_token", "t"}};
  auto s = settings_from(&config, "", env_of({}));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->from, "\"Cluster Alerts\" <alerts@example.org>");
  EXPECT_EQ(s->password, "p w");
  EXPECT_EQ(s->tls, TlsMode::kTry);
  EXPECT_EQ(s->ca_file, dir / "ca.pem");
  EXPECT_EQ(s->timeout_ms, 2500u);
  EXPECT_EQ(s->connect_timeout_ms, 1000u);
  EXPECT_EQ(s->attach_budget, 512u * 1024);
  EXPECT_EQ(s->attach, (std::vector<std::string>{"/tmp/a", "/tmp/b"}));
  EXPECT_EQ(s->log_tail_lines, 0u);

  const json tls_none = {{"tls", "none"}, {"attach_budget", 1000}, {"timeout_s", 5}};
  auto n = settings_from(&tls_none, "", env_of({}));
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(n->tls, TlsMode::kNone);
  EXPECT_EQ(n->attach_budget, 1000u);
  // The connect timeout never exceeds the whole transfer's.
  EXPECT_EQ(n->connect_timeout_ms, 5000u);
}

TEST(NotifySettings, BadFieldsAreNamed) {
  EXPECT_THAT(settings_error({{"timeout_s", -1}}),
              HasSubstr("notify.timeout_s: must be a positive number"));
  EXPECT_THAT(settings_error({{"timeout_s", "30"}}), HasSubstr("notify.timeout_s"));
  EXPECT_THAT(settings_error({{"timeout_s", 5}, {"connect_timeout_s", 10}}),
              HasSubstr("notify.connect_timeout_s: must not exceed notify.timeout_s"));
  EXPECT_THAT(settings_error({{"tls", "maybe"}}),
              HasSubstr("notify.tls: must be \"required\", \"try\" or \"none\" (got \"maybe\")"));
  EXPECT_THAT(settings_error({{"attach_budget", "lots"}}), HasSubstr("notify.attach_budget"));
  EXPECT_THAT(settings_error({{"attach_budget", -5}}), HasSubstr("notify.attach_budget"));
  EXPECT_THAT(settings_error({{"attach_budget", "2G"}}), HasSubstr("up to 1G"));
  EXPECT_THAT(settings_error({{"attach", "one.txt"}}), HasSubstr("notify.attach: must be a list"));
  EXPECT_THAT(settings_error({{"log_tail_lines", 1.5}}), HasSubstr("notify.log_tail_lines"));
  EXPECT_THAT(settings_error({{"from", "not an address"}}), HasSubstr("notify.from"));
  EXPECT_THAT(settings_error({{"from", "a@b.c\r\nBcc: x@y.z"}}), HasSubstr("notify.from"));
  EXPECT_THAT(settings_error({{"ca_file", "/nonexistent/ca.pem"}}),
              HasSubstr("notify.ca_file: cannot read /nonexistent/ca.pem"));
  EXPECT_THAT(settings_error({{"smtp_url", "http://relay.example"}}),
              HasSubstr("notify.smtp_url: must be smtp://"));
  EXPECT_THAT(settings_error({{"smtpurl", "smtp://x"}}),
              HasSubstr("notify.smtpurl: unknown key 'smtpurl'"));
  EXPECT_THAT(settings_error(json::array()), HasSubstr("notify: must be an object"));
}

TEST(NotifySettings, RelayUrlErrorsNameTheirSource) {
  EXPECT_THAT(settings_error(json::object(), "smtp://user:secret@relay.example"),
              HasSubstr("--smtp: must not hold credentials"));
  EXPECT_THAT(settings_error(json::object(), "https://relay.example"),
              HasSubstr("--smtp: must be smtp://"));
  EXPECT_THAT(settings_error(json::object(), "", {{"CKPTSCOPE_SMTP_URL", "relay.example"}}),
              HasSubstr("CKPTSCOPE_SMTP_URL"));
  // smtps:// is TLS from the first byte: "none" cannot hold.
  EXPECT_THAT(settings_error({{"tls", "none"}}, "smtps://relay.example"),
              HasSubstr("notify.tls: \"none\" contradicts --smtp"));
}

TEST(NotifySettings, RedactSecretsHidesPasswordAndToken) {
  const json section = {{"user", "u"}, {"password", "hunter2"}, {"webhook_token", "tok"}};
  json r = redact_secrets(section);
  EXPECT_EQ(r["user"], "u");
  EXPECT_EQ(r["password"], "(redacted)");
  EXPECT_EQ(r["webhook_token"], "(redacted)");
  EXPECT_EQ(r.dump().find("hunter2"), std::string::npos);
}

TEST(NotifySettings, ParseSize) {
  EXPECT_EQ(*parse_size("0"), 0u);
  EXPECT_EQ(*parse_size("1000"), 1000u);
  EXPECT_EQ(*parse_size("512K"), 512u * 1024);
  EXPECT_EQ(*parse_size("10M"), 10u << 20);
  EXPECT_EQ(*parse_size("10MiB"), 10u << 20);
  EXPECT_EQ(*parse_size("1.5m"), 3u << 19);
  EXPECT_EQ(*parse_size("1G"), 1u << 30);
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("M"));
  EXPECT_FALSE(parse_size("10Q"));
  EXPECT_FALSE(parse_size("1.2.3K"));
  EXPECT_FALSE(parse_size("-1"));
}

TEST(NotifyTarget, MailtoAddresses) {
  auto one = parse_target("mailto:ops@example.com");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->kind, NotifyTarget::Kind::kMail);
  EXPECT_EQ(one->recipients, std::vector<std::string>{"ops@example.com"});

  auto two = parse_target("MAILTO:ops@example.com,on-call%40example.org");
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_EQ(two->recipients, (std::vector<std::string>{"ops@example.com", "on-call@example.org"}));
  EXPECT_EQ(describe(*two), "mail to ops@example.com,on-call@example.org");
}

TEST(NotifyTarget, BadMailtoIsRejectedSayingWhy) {
  EXPECT_THAT(parse_target("mailto:").error().message, HasSubstr("is not an email address"));
  EXPECT_THAT(parse_target("mailto:ops").error().message, HasSubstr("'ops' is not an email"));
  EXPECT_THAT(parse_target("mailto:a@b.c,").error().message, HasSubstr("not an email address"));
  EXPECT_THAT(parse_target("mailto:a b@c.d").error().message, HasSubstr("not an email address"));
  EXPECT_THAT(parse_target("mailto:a@b.c%0D%0ABcc:x@y.z").error().message,
              HasSubstr("not an email address"));
  EXPECT_THAT(parse_target("mailto:a@b.c?subject=hi").error().message,
              HasSubstr("header fields (?subject=...) are not supported"));
}

TEST(NotifyTarget, WebhookUrls) {
  auto https = parse_target("https://hooks.example.com/services/T000/B000/s3cr3t?x=y");
  ASSERT_TRUE(https) << https.error().message;
  EXPECT_EQ(https->kind, NotifyTarget::Kind::kWebhook);
  EXPECT_EQ(https->url, "https://hooks.example.com/services/T000/B000/s3cr3t?x=y");
  // The path and query of a hook are often its secret: not in messages.
  EXPECT_EQ(describe(*https), "webhook https://hooks.example.com/services/...?...");

  auto http = parse_target("http://127.0.0.1:8080/hook");
  ASSERT_TRUE(http) << http.error().message;
  EXPECT_EQ(describe(*http), "webhook http://127.0.0.1:8080/hook");

  auto creds = parse_target("https://user:pw@hooks.example.com/x");
  ASSERT_TRUE(creds);
  EXPECT_EQ(describe(*creds).find("pw"), std::string::npos);
}

TEST(NotifyTarget, AnythingElseSaysWhatIsAccepted) {
  for (const char* bad : {"ops@example.com", "ftp://example.com/x", "slack", ""}) {
    auto t = parse_target(bad);
    ASSERT_FALSE(t) << bad;
    EXPECT_THAT(t.error().message, HasSubstr("mailto:ADDRESS")) << bad;
    EXPECT_THAT(t.error().message, HasSubstr("https://")) << bad;
  }
  EXPECT_FALSE(parse_target("https://"));
}

TEST(NotifyTarget, MailNeedsARelay) {
  auto t = parse_target("mailto:ops@example.com");
  ASSERT_TRUE(t);
  NotifySettings s;
  auto missing = check_target(*t, s);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("no SMTP relay"));
  EXPECT_THAT(missing.error().message, HasSubstr("--smtp"));
  s.smtp_url = "smtp://relay.example";
  EXPECT_TRUE(check_target(*t, s));
  auto hook = parse_target("https://hooks.example.com/x");
  ASSERT_TRUE(hook);
  EXPECT_TRUE(check_target(*hook, NotifySettings{}));
}

}  // namespace
}  // namespace ckpt::notify
