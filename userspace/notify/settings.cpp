// Settings and targets: everything that can be wrong with a --notify request is
// found here, before the job starts, and named by the field it came from.
#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "json/json_io.h"
#include "notify/notify.h"
#include "notify/notify_internal.h"

namespace ckpt::notify {
namespace {

using nlohmann::json;

constexpr double kMaxTimeoutS = 3600;  // an hour: longer is a mistake, not a slow relay
constexpr double kDefaultConnectTimeoutS = 10;
constexpr uint64_t kMaxBudget = 1ull << 30;  // what a mail relay could ever accept
constexpr uint64_t kMaxTailLines = 10'000;

const std::set<std::string> kKnownKeys = {
    "smtp_url",      "from",    "user",           "password",
    "tls",           "ca_file", "timeout_s",      "connect_timeout_s",
    "attach_budget", "attach",  "log_tail_lines", "webhook_token"};

std::string known_list() {
  std::string out;
  for (const auto& k : kKnownKeys) out += (out.empty() ? "" : ", ") + k;
  return out;
}

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

std::optional<std::string> url_part(CURLU* u, CURLUPart part) {
  char* out = nullptr;
  if (curl_url_get(u, part, &out, 0) != CURLUE_OK || out == nullptr) return std::nullopt;
  std::string s(out);
  curl_free(out);
  return s;
}

// One parsed URL with the parts we check.
struct UrlParts {
  std::string scheme, host, port, path;
  bool has_userinfo = false;
  bool has_query = false;
};

Expected<UrlParts> split_url(const std::string& text) {
  ensure_curl_global();
  UrlHandle u(curl_url());
  if (!u) return make_error("out of memory");
  CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, text.c_str(), 0);
  if (rc != CURLUE_OK) return make_error(fmt::format("not a URL ({})", curl_url_strerror(rc)));
  UrlParts p;
  p.scheme = lower(url_part(u.get(), CURLUPART_SCHEME).value_or(""));
  p.host = url_part(u.get(), CURLUPART_HOST).value_or("");
  p.port = url_part(u.get(), CURLUPART_PORT).value_or("");
  p.path = url_part(u.get(), CURLUPART_PATH).value_or("");
  p.has_userinfo = url_part(u.get(), CURLUPART_USER).has_value() ||
                   url_part(u.get(), CURLUPART_PASSWORD).has_value();
  p.has_query = url_part(u.get(), CURLUPART_QUERY).has_value();
  return p;
}

Expected<void> check_smtp_url(const std::string& text) {
  auto p = split_url(text);
  if (!p) return p.error();
  if (p->scheme != "smtp" && p->scheme != "smtps")
    return make_error(fmt::format(
        "must be smtp://HOST[:PORT] (STARTTLS) or smtps://HOST[:PORT] (implicit TLS) (got '{}')",
        text));
  if (p->host.empty()) return make_error(fmt::format("has no host (got '{}')", text));
  // The URL shows up in errors and in `ps`; the password must not.
  if (p->has_userinfo)
    return make_error(
        "must not hold credentials: put them in notify.user/notify.password or "
        "CKPTSCOPE_SMTP_USER/CKPTSCOPE_SMTP_PASSWORD");
  return {};
}

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;  // "%4" at the end
    int hi = hex_value(s[i + 1]);
    int lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

template <typename T>
Expected<T> field_error(const std::string& field, const std::string& what, const json& got) {
  return make_error(fmt::format("{}: {} (got {})", field, what, dump_json(got)));
}

Expected<std::string> string_field(const json& section, const std::string& key) {
  const json& v = section.at(key);
  if (!v.is_string() || v.get<std::string>().empty())
    return field_error<std::string>("notify." + key, "must be a non-empty string", v);
  if (has_control(v.get<std::string>()))
    return field_error<std::string>("notify." + key, "must not contain control characters", v);
  return v.get<std::string>();
}

Expected<double> seconds_field(const json& section, const std::string& key) {
  const json& v = section.at(key);
  if (!v.is_number() || !(v.get<double>() > 0) || !(v.get<double>() <= kMaxTimeoutS))
    return field_error<double>("notify." + key,
                               fmt::format("must be a positive number of seconds up to {}",
                                           static_cast<int>(kMaxTimeoutS)),
                               v);
  return v.get<double>();
}

std::string default_from() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "ckptscope@localhost";
  return fmt::format("ckptscope@{}", host);
}

// "Name <addr>" or "addr" -> the header value we send, quoted so that a comma
// or a dot in the name cannot turn it into two addresses.
Expected<std::string> normalize_from(const std::string& text) {
  std::string name;
  std::string addr = text;
  if (!text.empty() && text.back() == '>') {
    size_t lt = text.rfind('<');
    if (lt == std::string::npos) return make_error("unbalanced '<' '>'");
    addr = text.substr(lt + 1, text.size() - lt - 2);
    name = text.substr(0, lt);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
      name = name.substr(1, name.size() - 2);
    for (char c : name)
      if (c == '"' || c == '\\' || c == '<' || c == '>' || static_cast<unsigned char>(c) >= 0x7f)
        return make_error("the display name must be plain ASCII without quotes or angle brackets");
  }
  if (!valid_address(addr)) return make_error(fmt::format("'{}' is not an address", addr));
  return name.empty() ? addr : fmt::format("\"{}\" <{}>", name, addr);
}

}  // namespace

void ensure_curl_global() {
  // curl_global_init is not thread-safe; curl_easy_init would call it lazily.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool valid_address(std::string_view addr) {
  size_t at = addr.find('@');
  if (at == std::string_view::npos || at == 0 || at + 1 >= addr.size()) return false;
  if (addr.find('@', at + 1) != std::string_view::npos) return false;
  for (unsigned char c : addr.substr(0, at))
    if (c <= 0x20 || c >= 0x7f || std::strchr("<>()[],;:\\\"", c) != nullptr) return false;
  std::string_view domain = addr.substr(at + 1);
  if (domain.front() == '.' || domain.back() == '.' || domain.find("..") != std::string_view::npos)
    return false;
  return std::all_of(domain.begin(), domain.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '.' || c == '-' || c == '_';
  });
}

std::string envelope_address(const std::string& from) {
  if (!from.empty() && from.back() == '>') {
    size_t lt = from.rfind('<');
    if (lt != std::string::npos) return from.substr(lt + 1, from.size() - lt - 2);
  }
  return from;
}

std::string display_url(const std::string& url, bool keep_path) {
  auto p = split_url(url);
  if (!p) return "(unparseable URL)";
  std::string host = p->host;
  std::string out = fmt::format("{}://{}", p->scheme, host);
  if (!p->port.empty()) out += ":" + p->port;
  if (!keep_path) return out;
  // Keep the first path segment: enough to tell hooks apart, not their secret.
  std::string_view path = p->path;
  if (path.size() > 1) {
    size_t next = path.find('/', 1);
    out += std::string(path.substr(0, next));
    if (next != std::string_view::npos && next + 1 < path.size()) out += "/...";
  }
  if (p->has_query) out += "?...";
  return out;
}

Expected<NotifySettings> settings_from(const json* section, const std::string& smtp_flag,
                                       const EnvLookup& env) {
  try {
    NotifySettings s;
    s.from = default_from();
    auto getenv = [&](const char* name) -> std::optional<std::string> {
      if (!env) return std::nullopt;
      auto v = env(name);
      if (v && v->empty()) return std::nullopt;
      return v;
    };
    bool connect_given = false;
    if (section != nullptr && !section->is_null()) {
      const json& j = *section;
      if (!j.is_object()) return field_error<NotifySettings>("notify", "must be an object", j);
      for (const auto& [key, value] : j.items())
        if (!kKnownKeys.contains(key))
          return make_error(
              fmt::format("notify.{}: unknown key '{}' (known: {})", key, key, known_list()));
      if (j.contains("smtp_url")) {
        auto v = string_field(j, "smtp_url");
        if (!v) return v.error();
        if (auto ok = check_smtp_url(*v); !ok)
          return make_error(fmt::format("notify.smtp_url: {}", ok.error().message));
        s.smtp_url = *v;
        s.smtp_url_source = "notify.smtp_url";
      }
      if (j.contains("from")) {
        auto v = string_field(j, "from");
        if (!v) return v.error();
        auto norm = normalize_from(*v);
        if (!norm) return make_error(fmt::format("notify.from: {}", norm.error().message));
        s.from = *norm;
      }
      if (j.contains("user")) {
        auto v = string_field(j, "user");
        if (!v) return v.error();
        s.user = *v;
      }
      if (j.contains("password")) {
        // A password may hold any printable character; only its type is checked.
        const json& v = j.at("password");
        if (!v.is_string() || v.get<std::string>().empty())
          return make_error("notify.password: must be a non-empty string");
        s.password = v.get<std::string>();
      }
      if (j.contains("tls")) {
        const json& v = j.at("tls");
        std::string t = v.is_string() ? v.get<std::string>() : "";
        if (t == "required") {
          s.tls = TlsMode::kRequired;
        } else if (t == "try") {
          s.tls = TlsMode::kTry;
        } else if (t == "none") {
          s.tls = TlsMode::kNone;
        } else {
          return field_error<NotifySettings>("notify.tls",
                                             "must be \"required\", \"try\" or \"none\"", v);
        }
      }
      if (j.contains("ca_file")) {
        auto v = string_field(j, "ca_file");
        if (!v) return v.error();
        if (access(v->c_str(), R_OK) != 0)
          return make_error(fmt::format("notify.ca_file: cannot read {}: {}", *v,
                                        std::strerror(errno)));  // NOLINT(concurrency-mt-unsafe)
        s.ca_file = *v;
      }
      if (j.contains("timeout_s")) {
        auto v = seconds_field(j, "timeout_s");
        if (!v) return v.error();
        s.timeout_ms = static_cast<uint64_t>(std::ceil(*v * 1000));
      }
      if (j.contains("connect_timeout_s")) {
        auto v = seconds_field(j, "connect_timeout_s");
        if (!v) return v.error();
        s.connect_timeout_ms = static_cast<uint64_t>(std::ceil(*v * 1000));
        connect_given = true;
      }
      if (j.contains("attach_budget")) {
        const json& v = j.at("attach_budget");
        Expected<uint64_t> b = make_error("");
        // A parsed 5 is unsigned, a constructed one signed: accept both when >= 0.
        if (v.is_number_integer() && v.get<int64_t>() >= 0) {
          b = v.get<uint64_t>();
        } else if (v.is_string()) {
          b = parse_size(v.get<std::string>());
        }
        if (!b || *b > kMaxBudget)
          return field_error<NotifySettings>(
              "notify.attach_budget",
              "must be bytes (a non-negative integer) or a size such as \"10M\", \"512K\", up to "
              "1G",
              v);
        s.attach_budget = *b;
      }
      if (j.contains("attach")) {
        const json& v = j.at("attach");
        if (!v.is_array())
          return field_error<NotifySettings>("notify.attach", "must be a list of paths", v);
        for (const auto& item : v) {
          if (!item.is_string() || item.get<std::string>().empty())
            return field_error<NotifySettings>("notify.attach",
                                               "every entry must be a non-empty path", item);
          s.attach.push_back(item.get<std::string>());
        }
      }
      if (j.contains("log_tail_lines")) {
        const json& v = j.at("log_tail_lines");
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<uint64_t>() > kMaxTailLines)
          return field_error<NotifySettings>(
              "notify.log_tail_lines",
              fmt::format("must be an integer from 0 to {}", kMaxTailLines), v);
        s.log_tail_lines = v.get<size_t>();
      }
      if (j.contains("webhook_token")) {
        auto v = string_field(j, "webhook_token");
        if (!v) return make_error("notify.webhook_token: must be a non-empty string");
        s.webhook_token = *v;
      }
    }
    if (!connect_given) {
      s.connect_timeout_ms =
          std::min<uint64_t>(s.timeout_ms, static_cast<uint64_t>(kDefaultConnectTimeoutS * 1000));
    } else if (s.connect_timeout_ms > s.timeout_ms) {
      return make_error("notify.connect_timeout_s: must not exceed notify.timeout_s");
    }

    // The relay: flag > config > environment.
    if (!smtp_flag.empty()) {
      if (auto ok = check_smtp_url(smtp_flag); !ok)
        return make_error(fmt::format("--smtp: {}", ok.error().message));
      s.smtp_url = smtp_flag;
      s.smtp_url_source = "--smtp";
    } else if (s.smtp_url.empty()) {
      if (auto v = getenv("CKPTSCOPE_SMTP_URL")) {
        if (auto ok = check_smtp_url(*v); !ok)
          return make_error(fmt::format("CKPTSCOPE_SMTP_URL: {}", ok.error().message));
        s.smtp_url = *v;
        s.smtp_url_source = "CKPTSCOPE_SMTP_URL";
      }
    }
    // Secrets: config > environment, each on its own (the user in the config
    // and the password in the job's environment is the usual split).
    if (s.user.empty())
      if (auto v = getenv("CKPTSCOPE_SMTP_USER")) s.user = *v;
    if (s.password.empty())
      if (auto v = getenv("CKPTSCOPE_SMTP_PASSWORD")) s.password = *v;
    if (s.webhook_token.empty())
      if (auto v = getenv("CKPTSCOPE_WEBHOOK_TOKEN")) s.webhook_token = *v;
    if (!s.user.empty() && s.password.empty())
      return make_error(
          "SMTP user is set (notify.user or CKPTSCOPE_SMTP_USER) but no password "
          "(notify.password or CKPTSCOPE_SMTP_PASSWORD)");
    if (s.user.empty() && !s.password.empty())
      return make_error(
          "SMTP password is set (notify.password or CKPTSCOPE_SMTP_PASSWORD) but no user "
          "(notify.user or CKPTSCOPE_SMTP_USER)");
    if (s.tls != TlsMode::kRequired && lower(s.smtp_url).starts_with("smtps:"))
      return make_error(fmt::format(
          "notify.tls: \"{}\" contradicts {} (smtps:// is always TLS; use smtp:// for a relay "
          "without TLS)",
          s.tls == TlsMode::kTry ? "try" : "none", s.smtp_url_source));
    return s;
  } catch (const json::exception& e) {
    // A get<> the checks above missed: "notify settings: /notify/from: type must be string".
    return make_error(fmt::format("notify settings: {}", ckpt::describe(e)));
  } catch (const std::exception& e) {
    return make_error(fmt::format("notify settings: {}", e.what()));
  }
}

Expected<NotifyTarget> parse_target(std::string_view text) {
  try {
    // The caller names the flag; a webhook URL is not echoed (it may be a secret).
    const std::string accepted =
        "expected mailto:ADDRESS[,ADDRESS...] or an https:// (or, for loopback and tests, "
        "http://) webhook URL";
    std::string lowered = lower(std::string(text.substr(0, 8)));
    NotifyTarget t;
    if (lowered.starts_with("mailto:")) {
      t.kind = NotifyTarget::Kind::kMail;
      std::string_view rest = text.substr(7);
      if (rest.find('?') != std::string_view::npos)
        return make_error(
            fmt::format("'{}': mailto: header fields (?subject=...) are not supported", text));
      size_t start = 0;
      while (start <= rest.size()) {
        size_t comma = rest.find(',', start);
        std::string_view one = rest.substr(
            start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        auto decoded = percent_decode(one);
        if (!decoded || !valid_address(*decoded))
          return make_error(fmt::format("'{}': '{}' is not an email address", text, one));
        t.recipients.push_back(*decoded);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      return t;
    }
    if (lowered.starts_with("https://") || lowered.starts_with("http://")) {
      std::string url(text);
      auto p = split_url(url);
      if (!p) return make_error(fmt::format("webhook URL: {} ({})", p.error().message, accepted));
      if (p->host.empty()) return make_error("webhook URL: has no host");
      if (has_control(url)) return make_error("webhook URL: contains control characters");
      t.kind = NotifyTarget::Kind::kWebhook;
      t.url = url;
      return t;
    }
    return make_error(fmt::format("'{}': {}", text, accepted));
  } catch (const std::exception& e) {
    return make_error(e.what());
  }
}

std::string describe(const NotifyTarget& target) {
  if (target.kind == NotifyTarget::Kind::kWebhook)
    return "webhook " + display_url(target.url, true);
  std::string out = "mail to ";
  for (size_t i = 0; i < target.recipients.size(); ++i)
    out += (i ? "," : "") + target.recipients[i];
  return out;
}

Expected<void> check_target(const NotifyTarget& target, const NotifySettings& settings) {
  if (target.kind == NotifyTarget::Kind::kMail && settings.smtp_url.empty())
    return make_error(
        fmt::format("{}: no SMTP relay: give --smtp URL, notify.smtp_url in the config, or "
                    "CKPTSCOPE_SMTP_URL",
                    describe(target)));
  if (target.kind == NotifyTarget::Kind::kMail && target.recipients.empty())
    return make_error("--notify mailto: has no recipient");
  return {};
}

}  // namespace ckpt::notify
