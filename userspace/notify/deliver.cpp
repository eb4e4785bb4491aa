// Sending: one libcurl transfer per target, bounded in time, with every way it
// can fail turned into a sentence that names the target and the cause.
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/sigpipe_block.h"
#include "json/json_io.h"
#include "notify/notify.h"
#include "notify/notify_internal.h"

#ifndef CKPTSCOPE_VERSION
#define CKPTSCOPE_VERSION "unknown"
#endif

namespace ckpt::notify {
namespace {

constexpr size_t kMaxReplyBytes = 512;  // of the server's last reply or error body, for messages

struct EasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
struct MimeDeleter {
  void operator()(curl_mime* m) const { curl_mime_free(m); }
};
using Easy = std::unique_ptr<CURL, EasyDeleter>;
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;
using Mime = std::unique_ptr<curl_mime, MimeDeleter>;

// With CURLOPT_NOSIGNAL libcurl leaves SIGPIPE alone, and a peer that closes
// mid-TLS-write would kill ckptscope: each transfer runs under a SigpipeBlock.

Slist append(Slist list, const std::string& item) {
  curl_slist* l = curl_slist_append(list.get(), item.c_str());
  if (l == nullptr) return list;  // out of memory; the transfer fails later, saying so
  (void)list.release();
  return Slist(l);
}

// The server's last refusal: an SMTP reply line with a 4xx or 5xx code, as
// the server worded it ("550 5.1.1 <x@y>: no such user" says more than curl's
// "RCPT failed: 550"). Replies arrive as CURLINFO_HEADER_IN; our own commands
// are never looked at (AUTH carries the password).
struct Transcript {
  std::string last_refusal;
};

int on_debug(CURL* /*handle*/, curl_infotype type, char* data, size_t size, void* user) {
  if (type != CURLINFO_HEADER_IN || size < 4) return 0;
  const bool refusal = (data[0] == '4' || data[0] == '5') && std::isdigit(data[1]) != 0 &&
                       std::isdigit(data[2]) != 0 && (data[3] == ' ' || data[3] == '-');
  if (!refusal) return 0;
  std::string line(data, std::min(size, kMaxReplyBytes));
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  static_cast<Transcript*>(user)->last_refusal = valid_utf8(line);
  return 0;
}

size_t on_body(char* data, size_t size, size_t nmemb, void* user) {
  auto* body = static_cast<std::string*>(user);
  const size_t n = size * nmemb;
  if (body->size() < kMaxReplyBytes) body->append(data, std::min(n, kMaxReplyBytes - body->size()));
  return n;
}

// libcurl 7.88 does not apply CURLOPT_TIMEOUT while SMTP waits for the reply
// to the message (the "done" phase): a relay that takes the data and never
// answers held us for CURLOPT_SERVER_RESPONSE_TIMEOUT, 120 s by default. The
// progress callback runs in that wait too (at least once a second), so it
// enforces the deadline in every phase.
struct Deadline {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool hit = false;
};

int on_progress(void* user, curl_off_t /*dltotal*/, curl_off_t /*dlnow*/, curl_off_t /*ultotal*/,
                curl_off_t /*ulnow*/) {
  auto* d = static_cast<Deadline*>(user);
  if (monotonic_ns() < d->end_ns) return 0;
  d->hit = true;
  return 1;  // CURLE_ABORTED_BY_CALLBACK
}

// Options every transfer gets: bounded time, no signals, only the expected
// protocols (a webhook URL must not turn into file:// or a redirect elsewhere).
void common_options(CURL* c, const NotifySettings& s, char* errbuf, Transcript* transcript,
                    Deadline* deadline, const char* protocols) {
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(s.timeout_ms));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(s.connect_timeout_ms));
  curl_easy_setopt(c, CURLOPT_SERVER_RESPONSE_TIMEOUT,
                   static_cast<long>((s.timeout_ms + 999) / 1000));
  deadline->start_ns = monotonic_ns();
  deadline->end_ns = deadline->start_ns + s.timeout_ms * 1'000'000ull;
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, deadline);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, protocols);
#else
  (void)protocols;
#endif
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  if (!s.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, s.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, on_debug);
  curl_easy_setopt(c, CURLOPT_DEBUGDATA, transcript);
  curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);  // feeds on_debug; nothing is printed
}

// curl_easy_cleanup says QUIT to an SMTP server and waits for the answer,
// bounded by neither CURLOPT_TIMEOUT nor our progress deadline (it runs on
// the connection cache's own handle). So the connection is cut here instead:
// after a failure the server is the problem, and after a success the message
// was already accepted (curl returns only after the "250" to the data), so the
// QUIT courtesy is all that is lost.
void cut_connection(CURL* c) {
  curl_socket_t sock = CURL_SOCKET_BAD;
  if (curl_easy_getinfo(c, CURLINFO_ACTIVESOCKET, &sock) == CURLE_OK && sock != CURL_SOCKET_BAD)
    shutdown(sock, SHUT_RDWR);  // curl still owns and closes the descriptor
}

std::string curl_failure(CURL* c, CURLcode rc, const char* errbuf, const Deadline& deadline,
                         const NotifySettings& s) {
  std::string what = errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(rc);
  while (!what.empty() && what.back() == '\n') what.pop_back();
  if (rc == CURLE_ABORTED_BY_CALLBACK && deadline.hit) {
    what = fmt::format("timed out after {} ms waiting for the server",
                       (monotonic_ns() - deadline.start_ns) / 1'000'000);
    rc = CURLE_OPERATION_TIMEDOUT;
  }
  if (rc == CURLE_OPERATION_TIMEDOUT && what.starts_with("server response timeout"))
    what = "timed out waiting for the server's reply";
  // curl 7.x says "Couldn't connect to server" for refused and unreachable alike.
  long os_errno = 0;
  if (rc == CURLE_COULDNT_CONNECT &&
      curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK && os_errno != 0)
    what += fmt::format(
        " ({})", std::strerror(static_cast<int>(os_errno)));  // NOLINT(concurrency-mt-unsafe)
  if (rc == CURLE_OPERATION_TIMEDOUT)
    what += fmt::format(" (notify timeout {:g} s)", static_cast<double>(s.timeout_ms) / 1000);
  return what;
}

std::string rfc5322_date(uint64_t wall_ns) {
  static const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  time_t t = static_cast<time_t>(wall_ns / 1'000'000'000ull);
  struct tm tm {};
  gmtime_r(&t, &tm);
  return fmt::format("{}, {:02} {} {} {:02}:{:02}:{:02} +0000", kDays[tm.tm_wday % 7], tm.tm_mday,
                     kMonths[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string base64(std::string_view in) {
  static const char* const kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

// RFC 2047 encoded words when the subject is not plain ASCII (a command line
// can hold anything); each word under 75 characters, cut between characters.
std::string encode_subject(const std::string& subject) {
  bool plain = std::all_of(subject.begin(), subject.end(),
                           [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
  if (plain) return subject;
  std::string out;
  size_t pos = 0;
  while (pos < subject.size()) {
    size_t len = std::min<size_t>(45, subject.size() - pos);
    while (pos + len < subject.size() &&
           (static_cast<unsigned char>(subject[pos + len]) & 0xC0) == 0x80)
      --len;
    out +=
        (out.empty() ? "" : " ") + fmt::format("=?UTF-8?B?{}?=", base64(subject.substr(pos, len)));
    pos += len;
  }
  return out;
}

std::string content_type_for(const std::string& name) {
  auto ends = [&](const char* ext) { return name.ends_with(ext); };
  if (ends(".log") || ends(".txt") || ends(".tail") || ends(".out") || ends(".err"))
    return "text/plain; charset=utf-8";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

Expected<void> send_mail(const NotifyTarget& target, const NotifySettings& s, const Message& m,
                         const ArtifactPlan& plan) {
  if (auto ok = check_target(target, s); !ok) return ok;
  const std::string where = fmt::format("{} via {} (from {})", describe(target),
                                        display_url(s.smtp_url, false), s.smtp_url_source);
  Easy c(curl_easy_init());
  if (!c) return make_error(where + ": cannot create a curl handle");
  char errbuf[CURL_ERROR_SIZE] = {};
  Transcript transcript;
  Deadline deadline;
  common_options(c.get(), s, errbuf, &transcript, &deadline, "smtp,smtps");
  curl_easy_setopt(c.get(), CURLOPT_URL, s.smtp_url.c_str());
  // settings_from accepted only smtp:// and smtps://, in any case.
  const bool implicit_tls = s.smtp_url.size() > 5 && (s.smtp_url[4] | 0x20) == 's';
  long use_ssl = CURLUSESSL_ALL;
  if (!implicit_tls && s.tls == TlsMode::kTry) use_ssl = CURLUSESSL_TRY;
  if (!implicit_tls && s.tls == TlsMode::kNone) use_ssl = CURLUSESSL_NONE;
  curl_easy_setopt(c.get(), CURLOPT_USE_SSL, use_ssl);
  if (!s.user.empty()) {
    curl_easy_setopt(c.get(), CURLOPT_USERNAME, s.user.c_str());
    curl_easy_setopt(c.get(), CURLOPT_PASSWORD, s.password.c_str());
  }

  const std::string from_addr = envelope_address(s.from);
  const std::string mail_from = "<" + from_addr + ">";
  curl_easy_setopt(c.get(), CURLOPT_MAIL_FROM, mail_from.c_str());
  Slist rcpt;
  std::string to_header;
  for (const auto& r : target.recipients) {
    rcpt = append(std::move(rcpt), "<" + r + ">");
    to_header += (to_header.empty() ? "" : ", ") + r;
  }
  curl_easy_setopt(c.get(), CURLOPT_MAIL_RCPT, rcpt.get());

  static std::atomic<uint64_t> counter{0};
  const uint64_t now = realtime_ns();
  const std::string domain = from_addr.substr(from_addr.find('@') + 1);
  Slist headers;
  headers = append(std::move(headers), "Date: " + rfc5322_date(now));
  headers = append(std::move(headers), "From: " + s.from);
  headers = append(std::move(headers), "To: " + to_header);
  headers = append(std::move(headers), "Subject: " + encode_subject(m.subject));
  headers = append(std::move(headers), fmt::format("Message-ID: <ckptscope.{}.{}.{}@{}>", now,
                                                   getpid(), counter.fetch_add(1), domain));
  headers = append(std::move(headers), "X-Mailer: ckptscope " CKPTSCOPE_VERSION);
  curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, headers.get());

  Mime mime(curl_mime_init(c.get()));
  if (!mime) return make_error(where + ": cannot build the message (out of memory)");
  // curl's quoted-printable encoder breaks lines only at CRLF; a bare LF would
  // come out as "=0A" and the raw message as one wrapped paragraph.
  std::string text;
  text.reserve(m.text.size() + m.text.size() / 32);
  for (size_t i = 0; i < m.text.size(); ++i) {
    if (m.text[i] == '\n' && (i == 0 || m.text[i - 1] != '\r')) text += '\r';
    text += m.text[i];
  }
  curl_mimepart* body = curl_mime_addpart(mime.get());
  curl_mime_data(body, text.data(), text.size());
  curl_mime_type(body, "text/plain; charset=utf-8");
  // Quoted-printable keeps the body readable in raw form while bounding line length.
  curl_mime_encoder(body, "quoted-printable");
  for (const auto& a : plan.attached) {
    curl_mimepart* part = curl_mime_addpart(mime.get());
    curl_mime_data(part, a.data.data(), a.data.size());
    curl_mime_filename(part, a.name.c_str());
    curl_mime_type(part, content_type_for(a.name).c_str());
    curl_mime_encoder(part, "base64");
  }
  curl_easy_setopt(c.get(), CURLOPT_MIMEPOST, mime.get());

  CURLcode rc = curl_easy_perform(c.get());
  cut_connection(c.get());
  if (rc == CURLE_OK) return {};
  long reply = 0;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &reply);
  std::string msg = fmt::format("{}: {}", where, curl_failure(c.get(), rc, errbuf, deadline, s));
  // A 2xx/3xx code is the last good step (220 after STARTTLS), not the cause.
  if (reply >= 400) msg += fmt::format("; SMTP reply {}", reply);
  if (!transcript.last_refusal.empty())
    msg += fmt::format(" (server said: {})", transcript.last_refusal);
  return make_error(msg);
}

Expected<void> send_webhook(const NotifyTarget& target, const NotifySettings& s, const Message& m) {
  const std::string where = describe(target);
  Easy c(curl_easy_init());
  if (!c) return make_error(where + ": cannot create a curl handle");
  char errbuf[CURL_ERROR_SIZE] = {};
  Transcript transcript;
  Deadline deadline;
  common_options(c.get(), s, errbuf, &transcript, &deadline, "http,https");
  curl_easy_setopt(c.get(), CURLOPT_URL, target.url.c_str());
  // dump_json: a stray byte in a summary must not lose the message.
  const std::string payload = dump_json(m.json);
  curl_easy_setopt(c.get(), CURLOPT_POST, 1L);
  curl_easy_setopt(c.get(), CURLOPT_POSTFIELDS, payload.data());
  curl_easy_setopt(c.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  curl_easy_setopt(c.get(), CURLOPT_USERAGENT, "ckptscope/" CKPTSCOPE_VERSION);
  Slist headers;
  headers = append(std::move(headers), "Content-Type: application/json");
  // No "Expect: 100-continue": servers that never answer it cost a second.
  headers = append(std::move(headers), "Expect:");
  if (!s.webhook_token.empty())
    headers = append(std::move(headers), "Authorization: Bearer " + s.webhook_token);
  curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, headers.get());
  std::string reply_body;
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &reply_body);

  CURLcode rc = curl_easy_perform(c.get());
  cut_connection(c.get());
  if (rc != CURLE_OK)
    return make_error(fmt::format("{}: {}", where, curl_failure(c.get(), rc, errbuf, deadline, s)));
  long status = 0;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) return {};
  std::string body = valid_utf8(reply_body);
  for (char& ch : body)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  std::string msg = fmt::format("{}: HTTP {}", where, status);
  if (status >= 300 && status < 400) msg += " (redirects are not followed)";
  if (!body.empty()) msg += fmt::format(": {}", body);
  return make_error(msg);
}

}  // namespace

Expected<void> deliver(const NotifyTarget& target, const NotifySettings& settings,
                       const Message& message, const ArtifactPlan& plan) {
  try {
    ensure_curl_global();
    SigpipeBlock no_sigpipe;
    if (target.kind == NotifyTarget::Kind::kWebhook) return send_webhook(target, settings, message);
    return send_mail(target, settings, message, plan);
  } catch (const std::exception& e) {
    return make_error(fmt::format("{}: {}", describe(target), e.what()));
  }
}

}  // namespace ckpt::notify
