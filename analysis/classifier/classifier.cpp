#include "analysis/classifier/classifier.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <re2/re2.h>
#include <re2/set.h>

namespace ckpt::classify {

struct Classifier::Engine {
  explicit Engine(const RE2::Options& options)
      : rules(options, RE2::UNANCHORED), noise(options, RE2::UNANCHORED) {}
  RE2::Set rules;
  RE2::Set noise;
  bool has_noise = false;
  std::vector<int> pattern_rule;  // pattern index in `rules` -> rule index
};

namespace {

RE2::Options set_options() {
  RE2::Options o;
  o.set_log_errors(false);
  // The DFA of ~100 patterns outgrows RE2's 8 MiB default on long lines;
  // when it runs out RE2 falls back to slow matching (or fails the match).
  o.set_max_mem(int64_t{256} << 20);
  return o;
}

std::string cut_evidence(std::string_view text) {
  if (text.size() <= kMaxEvidenceChars) return std::string(text);
  size_t n = kMaxEvidenceChars;
  // Do not cut a UTF-8 sequence in half.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return std::string(text.substr(0, n)) + "…";
}

}  // namespace

Classifier::Classifier(RuleBase rules, std::unique_ptr<Engine> engine)
    : rules_(std::move(rules)), engine_(std::move(engine)) {
  for (const auto& r : rules_.rules) top_precedence_ = std::max(top_precedence_, r.precedence);
}
Classifier::Classifier(Classifier&&) noexcept = default;
Classifier& Classifier::operator=(Classifier&&) noexcept = default;
Classifier::~Classifier() = default;

Expected<Classifier> Classifier::create(RuleBase rules) {
  auto engine = std::make_unique<Engine>(set_options());
  std::string err;
  for (size_t i = 0; i < rules.rules.size(); ++i) {
    for (const auto& p : rules.rules[i].patterns) {
      if (engine->rules.Add(p, &err) < 0)
        return make_error(fmt::format("{}: rule \"{}\": pattern \"{}\": {}", rules.origin,
                                      rules.rules[i].id, p, err));
      engine->pattern_rule.push_back(static_cast<int>(i));
    }
  }
  for (const auto& n : rules.noise) {
    for (const auto& p : n.patterns) {
      if (engine->noise.Add(p, &err) < 0)
        return make_error(
            fmt::format("{}: noise rule \"{}\": pattern \"{}\": {}", rules.origin, n.id, p, err));
      engine->has_noise = true;
    }
  }
  if (!engine->rules.Compile() || (engine->has_noise && !engine->noise.Compile()))
    return make_error(rules.origin + ": the rules do not fit RE2's memory budget");
  return Classifier(std::move(rules), std::move(engine));
}

const Classifier& Classifier::builtin() {
  static const Classifier instance = [] {
    auto base = parse_rule_base(builtin_rules_json(), "built-in rules");
    if (!base) {
      std::fprintf(stderr, "ckptscope: %s\n", base.error().message.c_str());
      std::abort();
    }
    auto c = create(std::move(*base));
    if (!c) {
      std::fprintf(stderr, "ckptscope: %s\n", c.error().message.c_str());
      std::abort();
    }
    return std::move(*c);
  }();
  return instance;
}

void Classifier::match_line(std::string_view line, std::vector<int>& rule_indices) const {
  rule_indices.clear();
  thread_local std::vector<int> patterns;  // no allocation per line
  if (!engine_->rules.Match(re2::StringPiece(line.data(), line.size()), &patterns)) return;
  if (engine_->has_noise &&
      engine_->noise.Match(re2::StringPiece(line.data(), line.size()), nullptr))
    return;
  for (int p : patterns) rule_indices.push_back(engine_->pattern_rule[static_cast<size_t>(p)]);
  std::sort(rule_indices.begin(), rule_indices.end());
  rule_indices.erase(std::unique(rule_indices.begin(), rule_indices.end()), rule_indices.end());
}

bool Classifier::outranks(int a, int b) const {
  if (b < 0) return a >= 0;
  if (a < 0) return false;
  int pa = rules_.rules[static_cast<size_t>(a)].precedence;
  int pb = rules_.rules[static_cast<size_t>(b)].precedence;
  return pa > pb || (pa == pb && a < b);
}

Scan::Scan(const Classifier& classifier, size_t max_evidence)
    : classifier_(classifier),
      max_evidence_(max_evidence),
      hits_(classifier.rules().rules.size()) {}

bool Scan::add_line(std::string_view text, uint64_t line, std::string_view source) {
  ++lines;
  bytes += text.size() + 1;
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  classifier_.match_line(text, matched_);
  for (int r : matched_) {
    auto& h = hits_[static_cast<size_t>(r)];
    ++h.count;
    if (h.evidence.size() < max_evidence_)
      h.evidence.push_back(Evidence{line, cut_evidence(text), std::string(source)});
    if (classifier_.outranks(r, best_)) best_ = r;
  }
  return !matched_.empty();
}

bool Scan::settled() const {
  if (best_ < 0) return false;
  const auto& rules = classifier_.rules().rules;
  if (rules[static_cast<size_t>(best_)].precedence < classifier_.top_precedence()) return false;
  // Only an earlier-listed rule of equal precedence could still outrank it.
  for (int i = 0; i < best_; ++i)
    if (rules[static_cast<size_t>(i)].precedence == classifier_.top_precedence()) return false;
  return true;
}

Classification Scan::finish() const {
  Classification c;
  c.lines_scanned = lines;
  c.bytes_scanned = bytes;
  if (best_ < 0) return c;
  const auto& rules = classifier_.rules().rules;
  const auto& winner = rules[static_cast<size_t>(best_)];
  c.cls = winner.cls;
  c.rule = winner.id;
  c.precedence = winner.precedence;
  c.evidence = hits_[static_cast<size_t>(best_)].evidence;
  auto by_line = [](const Evidence& a, const Evidence& b) {
    return a.source != b.source ? a.source < b.source : a.line < b.line;
  };
  std::sort(c.evidence.begin(), c.evidence.end(), by_line);
  // Symptoms: the best rule of every other class that matched.
  std::vector<int> order;
  for (size_t i = 0; i < hits_.size(); ++i)
    if (hits_[i].count > 0 && rules[i].cls != winner.cls) order.push_back(static_cast<int>(i));
  std::sort(order.begin(), order.end(), [&](int a, int b) { return classifier_.outranks(a, b); });
  std::vector<std::string> seen;
  for (int i : order) {
    const auto& r = rules[static_cast<size_t>(i)];
    if (std::find(seen.begin(), seen.end(), r.cls) != seen.end()) continue;
    // A line of the cause that other rules also match (the exception line of
    // a CUDA error is also a Python exception) is not a separate symptom.
    auto ev = hits_[static_cast<size_t>(i)].evidence;
    std::sort(ev.begin(), ev.end(), by_line);
    // ... nor is a line a stronger symptom already stands for.
    auto own = std::find_if(ev.begin(), ev.end(), [&](const Evidence& e) {
      auto same = [&](const Evidence& x) { return x.line == e.line && x.source == e.source; };
      return std::none_of(c.evidence.begin(), c.evidence.end(), same) &&
             std::none_of(c.symptoms.begin(), c.symptoms.end(),
                          [&](const Symptom& s) { return same(s.first); });
    });
    if (own == ev.end()) continue;
    seen.push_back(r.cls);
    c.symptoms.push_back(Symptom{r.cls, r.id, *own});
  }
  return c;
}

Classification Classifier::classify_text(std::string_view text, std::string_view source) const {
  Scan scan(*this);
  uint64_t line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    scan.add_line(text.substr(pos, end - pos), ++line, source);
    pos = end + 1;
  }
  return scan.finish();
}

namespace {

// A read-only mapping of a whole file; closes and unmaps on scope exit.
class MappedFile {
 public:
  static Expected<MappedFile> open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return make_error(fmt::format("{}: {}", path, std::strerror(errno)));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return make_error(fmt::format("{}: not a regular file", path));
    }
    MappedFile f;
    f.size_ = static_cast<size_t>(st.st_size);
    if (f.size_ > 0) {
      void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        int e = errno;
        ::close(fd);
        return make_error(fmt::format("{}: cannot map it: {}", path, std::strerror(e)));
      }
      f.data_ = static_cast<const char*>(p);
    }
    ::close(fd);
    return f;
  }
  MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_) munmap(const_cast<char*>(data_), size_);
  }
  [[nodiscard]] std::string_view view() const { return {data_, size_}; }

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

constexpr size_t kChunkBytes = size_t{8} << 20;

}  // namespace

Expected<Classification> Classifier::classify_file(const std::string& path,
                                                   const ScanOptions& options,
                                                   const std::vector<Evidence>& also) const {
  auto file = MappedFile::open(path);
  if (!file) return file.error();
  std::string_view all = file->view();
  Scan scan(*this, options.max_evidence);
  for (const auto& line : also) scan.add_line(line.text, line.line, line.source);
  size_t start = 0;
  if (options.tail_bytes > 0 && options.tail_bytes < all.size()) {
    start = all.size() - options.tail_bytes;
    // Begin at a whole line.
    size_t nl = all.find('\n', start - 1);
    start = nl == std::string_view::npos ? all.size() : nl + 1;
  }
  // Chunks from the end; lines numbered from the end until the start is known.
  uint64_t lines_after = 0;
  size_t end = all.size();
  while (end > start) {
    size_t begin = end - std::min(kChunkBytes, end - start);
    if (begin > start) {
      size_t nl = all.rfind('\n', begin - 1);
      begin = (nl == std::string_view::npos || nl < start) ? start : nl + 1;
    }
    std::string_view chunk = all.substr(begin, end - begin);
    uint64_t chunk_lines = static_cast<uint64_t>(std::count(chunk.begin(), chunk.end(), '\n'));
    if (!chunk.empty() && chunk.back() != '\n') ++chunk_lines;  // an unterminated last line
    uint64_t index = 0;
    size_t pos = 0;
    while (pos < chunk.size()) {
      size_t nl = chunk.find('\n', pos);
      size_t stop = nl == std::string_view::npos ? chunk.size() : nl;
      scan.add_line(chunk.substr(pos, stop - pos), lines_after + (chunk_lines - index), path);
      ++index;
      pos = stop + 1;
    }
    lines_after += chunk_lines;
    end = begin;
    if (options.stop_when_settled && scan.settled()) break;
  }
  // Lines before where the scan stopped: one fast count, so evidence carries
  // real line numbers.
  uint64_t before = static_cast<uint64_t>(std::count(all.begin(), all.begin() + end, '\n'));
  uint64_t total = before + lines_after;
  scan.renumber(path, [total](uint64_t from_end) { return total - from_end + 1; });
  Classification c = scan.finish();
  c.whole_input = end == 0;
  return c;
}

void apply_exit_status(Classification& c, const ExitInfo& exit) {
  if (c.cls != kUnknownClass) return;
  if (exit.signal && *exit.signal == 11) {  // SIGSEGV
    c.cls = "segfault";
    c.rule = "exit-signal-sigsegv";
    c.evidence.push_back(
        Evidence{0, "the process was killed by signal 11 (SIGSEGV)", "exit_status"});
  }
}

}  // namespace ckpt::classify
