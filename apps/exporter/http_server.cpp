#include "apps/exporter/http_server.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <list>
#include <vector>

#include <fmt/format.h>

#include "apps/exporter/http_message.h"
#include "common/clock.h"

namespace ckpt {
namespace {

constexpr uint64_t kMsNs = 1'000'000;
// epoll events taken per turn, and connections accepted per turn: a flood
// of connections cannot keep the loop from reading the requests it has.
constexpr int kEventsPerTurn = 256;
constexpr int kAcceptsPerTurn = 256;
// One read per ready connection and turn; a request head is bounded anyway.
constexpr size_t kReadChunk = 16384;
// What a lingering connection may make the loop read and drop per turn.
constexpr size_t kDrainPerTurn = 65536;
// When accept() can make no progress (no descriptor and none to free, no
// kernel memory), the listen socket is left alone this long rather than
// polled in a spin.
constexpr uint64_t kListenPauseNs = 100 * kMsNs;

// Where a connection is. Each phase keeps its connections in a list ordered
// by when they entered it, so with one timeout per phase the first of each
// list is the next to expire, and the oldest idle one is found at once.
enum class Phase { kAwaitingRequest, kIdleKeepAlive, kWriting, kLingering };
constexpr size_t kPhases = 4;

bool accept_error_is_transient(int err) {
  // accept(2): errors of the connection being accepted, not of the socket;
  // the next one may well succeed.
  switch (err) {
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH:
    case EPERM:  // a firewall rule refused it
      return true;
    default:
      return false;
  }
}

}  // namespace

size_t connection_limit_for(rlim_t open_files) {
  const rlim_t left =
      open_files > 2 * kFdsKeptForTheRest ? open_files - kFdsKeptForTheRest : open_files / 2;
  return static_cast<size_t>(std::clamp<rlim_t>(left, kMinConnectionLimit, kMaxConnectionLimit));
}

std::string_view close_reason_name(HttpCloseReason reason) {
  switch (reason) {
    case HttpCloseReason::kAnswered:
      return "answered";
    case HttpCloseReason::kPeerClosed:
      return "peer_closed";
    case HttpCloseReason::kRequestTimeout:
      return "request_timeout";
    case HttpCloseReason::kKeepAliveTimeout:
      return "keep_alive_timeout";
    case HttpCloseReason::kWriteTimeout:
      return "write_timeout";
    case HttpCloseReason::kEvicted:
      return "evicted";
    case HttpCloseReason::kRefused:
      return "refused";
    case HttpCloseReason::kTooLarge:
      return "too_large";
    case HttpCloseReason::kMalformed:
      return "malformed";
  }
  return "unknown";
}

// The loop's state: touched by the server's thread only (and by start()
// before the thread exists).
struct HttpServer::Loop {
  struct Connection {
    int fd = -1;
    Phase phase = Phase::kAwaitingRequest;
    uint64_t since_ns = 0;  // when it entered its phase
    uint32_t events = 0;    // what epoll watches for it
    std::string in;         // received bytes not yet answered
    size_t scanned = 0;     // how much of `in` was searched for a head's end
    std::string out;        // the answer being written
    size_t out_sent = 0;
    bool keep_alive = false;  // once `out` is written, read the next request
    HttpCloseReason closing_reason = HttpCloseReason::kAnswered;  // once lingering
    bool queued = false;  // in `ready`: a buffered request waits for the next turn
    bool closed = false;
    std::list<Connection>::iterator self;
  };

  HttpHandler handler;
  HttpLimits limits;
  HttpServerHooks hooks;
  size_t limit = 0;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  // /dev/null, opened up front: closed for a moment to accept (and close)
  // a connection when the process has no descriptor left.
  int reserve_fd = -1;
  bool listen_paused = false;
  uint64_t listen_resume_ns = 0;
  bool stopping = false;
  size_t open_reported = 0;

  std::array<std::list<Connection>, kPhases> phases;
  // Closed this turn: kept until the turn's end, as epoll events already
  // taken may still point at them.
  std::list<Connection> closed;
  // Connections with a request buffered behind the one just answered: each
  // connection gets one answer per turn, so a client that pipelines many
  // requests takes its turn like every other.
  std::vector<Connection*> ready;

  // epoll's data for the two descriptors that are not connections.
  char listen_tag = 0;
  char wake_tag = 0;

  Loop(HttpHandler h, const HttpLimits& l, HttpServerHooks k)
      : handler(std::move(h)), limits(l), hooks(std::move(k)) {}

  ~Loop() {
    for (auto& list : phases)
      for (auto& c : list) close(c.fd);
    for (int fd : {listen_fd, epoll_fd, wake_fd, reserve_fd})
      if (fd >= 0) close(fd);
  }

  Expected<void> open(const ListenAddress& address) {
    auto fd = open_bound_socket(address);
    if (!fd) return fd.error();
    listen_fd = *fd;
    if (::listen(listen_fd, limits.listen_backlog) != 0)
      return make_error(
          fmt::format("cannot listen on {}: {}", address.display(), std::strerror(errno)));
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd < 0 || wake_fd < 0)
      return make_error(
          fmt::format("cannot serve {}: {}", address.display(), std::strerror(errno)));
    reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (!watch(listen_fd, EPOLL_CTL_ADD, EPOLLIN, &listen_tag) ||
        !watch(wake_fd, EPOLL_CTL_ADD, EPOLLIN, &wake_tag))
      return make_error(
          fmt::format("cannot serve {}: epoll: {}", address.display(), std::strerror(errno)));
    limit = limits.max_connections;
    rlimit files{};
    if (limit == 0)
      limit = getrlimit(RLIMIT_NOFILE, &files) == 0 ? connection_limit_for(files.rlim_cur)
                                                    : kMinConnectionLimit;
    return {};
  }

  bool watch(int fd, int op, uint32_t events, void* data) const {
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = data;
    return epoll_ctl(epoll_fd, op, fd, &ev) == 0;
  }

  void set_events(Connection& c, uint32_t events) {
    if (c.events == events) return;
    c.events = events;
    watch(c.fd, EPOLL_CTL_MOD, events, &c);
  }

  void stop() const {
    const uint64_t one = 1;
    if (write(wake_fd, &one, sizeof(one)) < 0) {
      // The counter is already set (EAGAIN): the loop wakes anyway.
    }
  }

  [[nodiscard]] size_t open_count() const {
    size_t n = 0;
    for (const auto& list : phases) n += list.size();
    return n;
  }

  [[nodiscard]] uint64_t timeout_ns(Phase phase) const {
    switch (phase) {
      case Phase::kAwaitingRequest:
        return limits.request_timeout_ms * kMsNs;
      case Phase::kIdleKeepAlive:
        return limits.keep_alive_timeout_ms * kMsNs;
      case Phase::kWriting:
        return limits.write_timeout_ms * kMsNs;
      case Phase::kLingering:
        return limits.linger_ms * kMsNs;
    }
    return 0;
  }

  static HttpCloseReason expiry_reason(const Connection& c) {
    switch (c.phase) {
      case Phase::kAwaitingRequest:
        return HttpCloseReason::kRequestTimeout;
      case Phase::kIdleKeepAlive:
        return HttpCloseReason::kKeepAliveTimeout;
      case Phase::kWriting:
        return HttpCloseReason::kWriteTimeout;
      case Phase::kLingering:
        return c.closing_reason;
    }
    return c.closing_reason;
  }

  std::list<Connection>& list_of(Phase phase) { return phases[static_cast<size_t>(phase)]; }

  // To the end of `phase`'s list: its order stays the order of since_ns.
  void move_to(Connection& c, Phase phase, uint64_t now) {
    list_of(phase).splice(list_of(phase).end(), list_of(c.phase), c.self);
    c.phase = phase;
    c.since_ns = now;
  }

  void close_connection(Connection& c, HttpCloseReason reason) {
    close(c.fd);  // also takes it out of the epoll set
    c.fd = -1;
    c.closed = true;
    if (c.queued) std::erase(ready, &c);
    closed.splice(closed.end(), list_of(c.phase), c.self);
    if (hooks.closed) hooks.closed(reason);
  }

  // --- the loop ---------------------------------------------------------------

  void run() {
    std::array<epoll_event, kEventsPerTurn> events{};
    while (!stopping) {
      const int n = epoll_wait(epoll_fd, events.data(), kEventsPerTurn, wait_ms(monotonic_ns()));
      if (n < 0 && errno != EINTR) break;  // the epoll set itself is gone: nothing to serve
      const uint64_t now = monotonic_ns();
      for (int i = 0; i < n; ++i) dispatch(events[static_cast<size_t>(i)], now);
      serve_ready(now);
      expire(now);
      if (listen_paused && now >= listen_resume_ns) {
        listen_paused = !watch(listen_fd, EPOLL_CTL_MOD, EPOLLIN, &listen_tag);
        listen_resume_ns = now + kListenPauseNs;
      }
      closed.clear();
      report_open();
    }
  }

  // Until the next deadline (the first of each phase's list, or the listen
  // socket's pause), or no wait at all while a pipelined request waits.
  int wait_ms(uint64_t now) {
    if (!ready.empty()) return 0;
    uint64_t next = UINT64_MAX;
    for (size_t p = 0; p < kPhases; ++p)
      if (!phases[p].empty())
        next = std::min(next, phases[p].front().since_ns + timeout_ns(static_cast<Phase>(p)));
    if (listen_paused) next = std::min(next, listen_resume_ns);
    if (next == UINT64_MAX) return -1;
    if (next <= now) return 0;
    return static_cast<int>(std::min<uint64_t>((next - now + kMsNs - 1) / kMsNs, INT_MAX));
  }

  void dispatch(const epoll_event& ev, uint64_t now) {
    if (ev.data.ptr == &wake_tag) {
      stopping = true;
      return;
    }
    if (ev.data.ptr == &listen_tag) {
      accept_ready(now);
      return;
    }
    auto& c = *static_cast<Connection*>(ev.data.ptr);
    if (c.closed) return;
    if ((ev.events & EPOLLERR) != 0) {
      close_connection(
          c, c.phase == Phase::kLingering ? c.closing_reason : HttpCloseReason::kPeerClosed);
      return;
    }
    switch (c.phase) {
      case Phase::kWriting:
        write_answer(c, now);
        break;
      case Phase::kLingering:
        drain(c);
        break;
      case Phase::kAwaitingRequest:
      case Phase::kIdleKeepAlive:
        // A queued connection is served from `ready` this turn; its next
        // bytes wait in the kernel meanwhile.
        if (!c.queued) read_request(c, now);
        break;
    }
  }

  void report_open() {
    const size_t open = open_count();
    if (open == open_reported) return;
    open_reported = open;
    if (hooks.open_connections) hooks.open_connections(open);
  }

  void expire(uint64_t now) {
    for (size_t p = 0; p < kPhases; ++p) {
      const uint64_t timeout = timeout_ns(static_cast<Phase>(p));
      while (!phases[p].empty() && phases[p].front().since_ns + timeout <= now)
        close_connection(phases[p].front(), expiry_reason(phases[p].front()));
    }
  }

  // --- admitting connections ---------------------------------------------------

  void accept_ready(uint64_t now) {
    for (int i = 0; i < kAcceptsPerTurn; ++i) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        admit(fd, now);
        continue;
      }
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (accept_error_is_transient(err)) continue;
      // Out of descriptors: free one by evicting, else accept with the reserve
      // and close, so the client hears at once and the queue moves on.
      if ((err == EMFILE || err == ENFILE) && (evict_one() || refuse_with_reserve())) continue;
      pause_listening(now);
      return;
    }
  }

  void admit(int fd, uint64_t now) {
    if (open_count() >= limit && !evict_one()) {
      close(fd);
      if (hooks.closed) hooks.closed(HttpCloseReason::kRefused);
      return;
    }
    auto& list = list_of(Phase::kAwaitingRequest);
    Connection& c = list.emplace_back();
    c.self = std::prev(list.end());
    c.fd = fd;
    c.since_ns = now;
    c.events = EPOLLIN;
    if (!watch(fd, EPOLL_CTL_ADD, EPOLLIN, &c)) close_connection(c, HttpCloseReason::kRefused);
  }

  // Closes the connection that matters least: one lingering after its
  // answer, else the one waiting longest for a request (a new connection
  // that sent nothing yet, a request begun, an idle keep-alive). Never one
  // whose answer is being written. False when there is none.
  bool evict_one() {
    Connection* victim = nullptr;
    if (!list_of(Phase::kLingering).empty()) {
      victim = &list_of(Phase::kLingering).front();
    } else {
      for (Phase p : {Phase::kAwaitingRequest, Phase::kIdleKeepAlive}) {
        if (list_of(p).empty()) continue;
        Connection& first = list_of(p).front();
        if (victim == nullptr || first.since_ns < victim->since_ns) victim = &first;
      }
    }
    if (victim == nullptr) return false;
    close_connection(*victim, HttpCloseReason::kEvicted);
    return true;
  }

  // The libev/libuv way out of EMFILE: give the reserve descriptor back,
  // accept the waiting connection on it, close it, take the reserve again.
  bool refuse_with_reserve() {
    if (reserve_fd < 0) {
      reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      return false;
    }
    close(reserve_fd);
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) close(fd);
    reserve_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    if (hooks.closed) hooks.closed(HttpCloseReason::kRefused);
    return true;
  }

  void pause_listening(uint64_t now) {
    if (watch(listen_fd, EPOLL_CTL_MOD, 0, &listen_tag)) {
      listen_paused = true;
      listen_resume_ns = now + kListenPauseNs;
    }
  }

  // --- requests and answers ----------------------------------------------------

  void read_request(Connection& c, uint64_t now) {
    const size_t room =
        limits.max_request_head_bytes - std::min(c.in.size(), limits.max_request_head_bytes);
    if (room == 0) {  // cannot happen: a full buffer is answered 431 or has a request queued
      set_events(c, 0);
      return;
    }
    std::array<char, kReadChunk> buf{};
    const ssize_t n = recv(c.fd, buf.data(), std::min(room, buf.size()), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      close_connection(c, HttpCloseReason::kPeerClosed);
      return;
    }
    if (n < 0) return;
    // The first byte of a next request starts its request timeout.
    if (c.phase == Phase::kIdleKeepAlive) move_to(c, Phase::kAwaitingRequest, now);
    c.in.append(buf.data(), static_cast<size_t>(n));
    answer_one(c, now);
  }

  // Answers the first request buffered on `c`, if it is complete.
  void answer_one(Connection& c, uint64_t now) {
    if (const size_t skip = leading_empty_lines(c.in); skip > 0) {
      c.in.erase(0, skip);
      c.scanned = 0;
    }
    const size_t end = find_head_end(c.in, c.scanned);
    if (end == std::string::npos) {
      c.scanned = c.in.size();
      if (c.in.size() >= limits.max_request_head_bytes)
        answer_error(c, 431,
                     fmt::format("the request head is longer than {} bytes\n",
                                 limits.max_request_head_bytes),
                     HttpCloseReason::kTooLarge, now);
      return;
    }
    const ParsedHead parsed = parse_request_head(std::string_view(c.in).substr(0, end));
    c.in.erase(0, end);
    c.scanned = 0;
    if (parsed.error_status != 0) {
      answer_error(c, parsed.error_status, parsed.why + "\n", HttpCloseReason::kMalformed, now);
      return;
    }
    const RequestHead& r = parsed.head;
    // A body is not read: the connection ends after the answer (lingering
    // reads and drops it).
    const bool keep_alive = r.keep_alive && !r.has_body;
    ResponseHead head;
    head.keep_alive = keep_alive;
    head.minor_version = r.minor_version;
    HttpResponse response;
    if (r.method != "GET" && r.method != "HEAD") {
      response = {405, "text/plain; charset=utf-8", "", "only GET and HEAD are served here\n"};
      head.allow_get_head = true;
    } else {
      response = call_handler(HttpRequest{r.method, r.path, r.accepts_gzip});
    }
    head.status = response.status;
    head.content_type = response.content_type;
    head.content_encoding = response.content_encoding;
    head.content_length = response.body.size();
    c.out = format_response_head(head);
    if (r.method != "HEAD") c.out += response.body;
    start_answer(c, response.status, keep_alive, HttpCloseReason::kAnswered, now);
  }

  HttpResponse call_handler(const HttpRequest& request) {
    try {
      return handler(request);
    } catch (const std::exception& e) {
      return {500, "text/plain; charset=utf-8", "", fmt::format("{}\n", e.what())};
    }
  }

  void answer_error(Connection& c, int status, const std::string& body, HttpCloseReason reason,
                    uint64_t now) {
    ResponseHead head;
    head.status = status;
    head.content_type = "text/plain; charset=utf-8";
    head.content_length = body.size();
    head.keep_alive = false;
    c.out = format_response_head(head) + body;
    c.in.clear();
    start_answer(c, status, false, reason, now);
  }

  void start_answer(Connection& c, int status, bool keep_alive, HttpCloseReason closing_reason,
                    uint64_t now) {
    if (hooks.answered) hooks.answered(status);
    c.out_sent = 0;
    c.keep_alive = keep_alive;
    c.closing_reason = closing_reason;
    move_to(c, Phase::kWriting, now);
    write_answer(c, now);
  }

  void write_answer(Connection& c, uint64_t now) {
    while (c.out_sent < c.out.size()) {
      const ssize_t n =
          send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        set_events(c, EPOLLOUT);
        return;
      }
      if (n <= 0) {
        close_connection(c, HttpCloseReason::kPeerClosed);
        return;
      }
      c.out_sent += static_cast<size_t>(n);
    }
    c.out = std::string();  // its memory too: an idle connection keeps nothing
    if (!c.keep_alive) {
      linger(c, now);
      return;
    }
    if (c.in.empty()) {
      c.in = std::string();
      move_to(c, Phase::kIdleKeepAlive, now);
      set_events(c, EPOLLIN);
      return;
    }
    // A pipelined request is buffered: answered next turn, not read meanwhile.
    move_to(c, Phase::kAwaitingRequest, now);
    set_events(c, 0);
    c.queued = true;
    ready.push_back(&c);
  }

  void serve_ready(uint64_t now) {
    std::vector<Connection*> turn;
    turn.swap(ready);
    for (Connection* c : turn) {
      c->queued = false;
      if (c->phase != Phase::kAwaitingRequest) continue;
      set_events(*c, EPOLLIN);
      answer_one(*c, now);
    }
  }

  void linger(Connection& c, uint64_t now) {
    shutdown(c.fd, SHUT_WR);
    c.in = std::string();
    move_to(c, Phase::kLingering, now);
    set_events(c, EPOLLIN);
  }

  void drain(Connection& c) {
    std::array<char, kReadChunk> buf{};
    for (size_t drained = 0; drained < kDrainPerTurn;) {
      const ssize_t n = recv(c.fd, buf.data(), buf.size(), 0);
      if (n > 0) {
        drained += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
      close_connection(c, c.closing_reason);  // the client closed: done
      return;
    }
  }
};

HttpServer::HttpServer(std::unique_ptr<Loop> loop) : loop_(std::move(loop)) {}

Expected<std::unique_ptr<HttpServer>> HttpServer::start(const ListenAddress& address,
                                                        HttpHandler handler,
                                                        const HttpLimits& limits,
                                                        HttpServerHooks hooks) {
  auto loop = std::make_unique<Loop>(std::move(handler), limits, std::move(hooks));
  if (auto ok = loop->open(address); !ok) return ok.error();
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(loop)));
  // The loop's thread takes no signal: SIGTERM and SIGINT go to the
  // exporter's main thread, whose handler stops it.
  sigset_t all{};
  sigset_t before{};
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &before);
  server->thread_ = std::thread([loop = server->loop_.get()] { loop->run(); });
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return server;
}

HttpServer::~HttpServer() {
  loop_->stop();
  if (thread_.joinable()) thread_.join();
}

size_t HttpServer::connection_limit() const { return loop_->limit; }

}  // namespace ckpt
