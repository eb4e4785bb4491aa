// `ckptscope logwatch`, `logwatch train`, `eval-anomaly`: node-log anomaly
// detection (analysis/logwatch, docs/logwatch.md).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/logwatch/detector.h"
#include "analysis/logwatch/evaluation.h"
#include "analysis/logwatch/exporter_sink.h"
#include "analysis/logwatch/line_format.h"
#include "analysis/logwatch/line_source.h"
#include "analysis/logwatch/model_file.h"
#include "apps/cli/command_registry.h"
#include "apps/cli/number_check.h"
#include "apps/cli/session.h"
#include "json/json_io.h"
#include "probes/forward_protocol.h"

namespace ckpt::cli {

namespace {

namespace lw = ckpt::logwatch;

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int /*sig*/) { g_stop.store(true); }

// Without SA_RESTART so a blocked read() returns EINTR and the loop ends.
void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Settings of the tree and the scoring, shared by the three commands.
struct DetectorFlags {
  lw::DetectorConfig config;
  bool no_learn = false;
  // The tree's settings and --history: a model's own, so not to be given with --model.
  std::vector<CLI::Option*> tree_options;

  void add_tree(CLI::App* cmd) {
    tree_options.push_back(
        cmd->add_option("--similarity", config.drain.similarity,
                        "Drain similarity threshold st: share of equal tokens to join a template")
            ->check(number_in(0.0, 1.0))
            ->capture_default_str());
    tree_options.push_back(
        cmd->add_option("--prefix-tokens", config.drain.prefix_tokens,
                        "leading tokens that pick the Drain tree branch (logparser depth - 3)")
            ->check(number_in(0, 8))
            ->capture_default_str());
    tree_options.push_back(cmd->add_option("--max-templates", config.drain.max_templates,
                                           "template cap; the least recently matched is evicted")
                               ->check(number_in(std::size_t{1}, std::size_t{10000000}))
                               ->capture_default_str());
    tree_options.push_back(
        cmd->add_option("--history", config.history,
                        "previous templates that predict the next (n-gram order - 1)")
            ->check(number_in(1, lw::kMaxHistory))
            ->capture_default_str());
  }
  // The first tree flag given on the command line, nullptr when none.
  [[nodiscard]] const CLI::Option* given_tree_option() const {
    for (const auto* opt : tree_options)
      if (opt->count() > 0) return opt;
    return nullptr;
  }
  void add_scoring(CLI::App* cmd) {
    cmd->add_option("--top-k", config.top_k,
                    "a template among its context's k likeliest successors is never unexpected")
        ->check(number_in(1, 1000))
        ->capture_default_str();
    cmd->add_option("--sequence-quantile", config.sequence_quantile,
                    "a sequence is unexpected past this quantile of the learned lines' surprise "
                    "(-log2 P(template | context))")
        ->check(number_in(0.5, 1.0))
        ->capture_default_str();
    cmd->add_option("--min-support", config.min_support,
                    "judge sequences only after contexts seen at least this often")
        ->check(number_in(0.0, 1e9))
        ->capture_default_str();
    cmd->add_option("--rare-count", config.rare_count,
                    "a template seen fewer times than this is rare")
        ->check(number_in(0.0, 1e9))
        ->capture_default_str();
    cmd->add_option("--threshold", config.threshold,
                    "report anomalies with at least this score (score = novelty x severity "
                    "weight; default 0.5 for lines with a severity, 0 for lines without)")
        ->check(number_in(0.0, 1.0));
    cmd->add_flag("--no-learn", no_learn,
                  "score against the model only; do not learn from the stream");
    cmd->add_flag("--learn-anomalies", config.learn_anomalies,
                  "also learn the lines reported as anomalies (by default a repeated anomaly "
                  "stays one)");
  }
  lw::DetectorConfig scoring() const {
    lw::DetectorConfig c = config;
    c.learn = !no_learn;
    return c;
  }
};

// Grouping and the alert budget (alarm_grouper.h), shared by logwatch and eval-anomaly.
struct AlarmFlags {
  lw::AlarmConfig config;
  void add(CLI::App* cmd) {
    cmd->add_option("--group-window", config.group_window,
                    "an anomaly of a template alarmed within this many lines joins that alarm "
                    "(0: every anomaly is an alarm)")
        ->check(number_in(std::uint64_t{0}, std::uint64_t{1'000'000'000}))
        ->capture_default_str();
    cmd->add_option("--max-alarm-rate", config.max_rate,
                    "alarms per 1000 lines; past it the threshold is raised (and said so) "
                    "instead of flooding (0: no budget)")
        ->check(number_in(0.0, 1000.0))
        ->capture_default_str();
  }
};

struct WatchOptions {
  std::string source = "kmsg";
  std::string model;
  std::string format;  // empty: by source
  bool json = false;
  bool follow = false;
  bool from_start = false;
  std::uint64_t warmup = 0;
  std::string exporter_socket;  // empty: the default socket when it exists
  bool no_exporter = false;
  DetectorFlags detector;
  AlarmFlags alarms;
};

struct TrainOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string format = "raw";
  bool only_normal = false;
  DetectorFlags detector;
};

struct EvalOptions {
  std::string data;
  double train_fraction = 0.5;
  int folds = 5;
  bool json = false;
  std::optional<double> min_f1;
  std::optional<double> min_grouping;
  lw::CountBaselineConfig counts;
  std::string severity_at_least = "crit";
  bool ignore_severity = false;
  std::optional<double> max_false_alarm_rate;
  bool above_baselines = false;
  DetectorFlags detector;
  AlarmFlags alarms;
};

std::string default_format(const std::string& source) {
  if (source == "journal") return "journal";  // journalctl -o json
  return "raw";                               // kmsg records come without their header (KmsgSource)
}

// `--exporter-socket`, or the default socket when it exists (exporter_sink.h).
// 1 with an explicit socket that cannot be connected; a default one that is
// there but dead is a warning.
int open_exporter(const WatchOptions& o, std::unique_ptr<lw::ExporterSink>& sink) {
  if (o.no_exporter) return 0;
  std::string path = o.exporter_socket;
  const bool given = !path.empty();
  if (!given) {
    std::error_code ec;
    if (!std::filesystem::exists(kDefaultExporterSocket, ec)) return 0;  // no exporter here
    path = kDefaultExporterSocket;
  }
  auto connected = lw::ExporterSink::connect(path);
  if (!connected) {
    if (given) {
      warn("logwatch: --exporter-socket: " + connected.error().message);
      return 1;
    }
    warn("logwatch: warning: " + connected.error().message + "; anomalies are only printed");
    return 0;
  }
  sink = std::move(*connected);
  return 0;
}

void print_anomaly(const lw::Anomaly& a, bool json) {
  if (json) {
    nlohmann::json j = {{"line", a.line},   {"text", a.text},     {"template", a.template_text},
                        {"score", a.score}, {"reason", a.reason}, {"rank", lw::to_string(a.rank)}};
    if (a.level) j["level"] = lw::severity_name(*a.level);
    if (!a.kind.empty()) {
      j["kind"] = a.kind;
      j["fault"] = a.fault_id;
    }
    fmt::print("{}\n", dump_json(j));
  } else {
    fmt::print("line {}: {:.2f} {}{}: {}  [template: {}]\n", a.line, a.score, a.reason,
               a.kind.empty() ? "" : " " + a.kind, a.text, a.template_text);
  }
  std::fflush(stdout);
}

nlohmann::json held_json(const std::vector<lw::HeldTemplate>& held) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& h : held)
    out.push_back({{"template", h.template_text},
                   {"count", h.count},
                   {"first_line", h.first_line},
                   {"last_line", h.last_line},
                   {"rank", lw::to_string(h.rank)},
                   {"score", h.score}});
  return out;
}

// What the budget held back since the last digest: a line of its own, so
// that held back is never lost (JSON: reason "held_back").
void print_digest(std::uint64_t line, const std::vector<lw::HeldTemplate>& held, bool json) {
  if (held.empty()) return;
  if (json) {
    fmt::print("{}\n", dump_json(nlohmann::json{
                           {"line", line}, {"reason", "held_back"}, {"held", held_json(held)}}));
  } else {
    for (const auto& h : held)
      fmt::print("held back by the budget: {} lines {}-{} ({}, score {:.2f})  [template: {}]\n",
                 h.count, h.first_line, h.last_line, lw::to_string(h.rank), h.score,
                 h.template_text);
  }
  std::fflush(stdout);
}

// A group of more than one line that ended: said once, with its count, so
// the operator sees how long the burst lasted without a line per repeat.
void print_group(const lw::Alarm& a, bool json) {
  if (json) {
    nlohmann::json j = {{"line", a.first_line}, {"last_line", a.last_line},
                        {"count", a.count},     {"template", a.template_text},
                        {"score", a.score},     {"reason", "group_ended"}};
    fmt::print("{}\n", dump_json(j));
  } else {
    fmt::print("lines {}-{}: {} lines of the alarm at line {} ended  [template: {}]\n",
               a.first_line, a.last_line, a.count, a.first_line, a.template_text);
  }
  std::fflush(stdout);
}

int logwatch_command(const WatchOptions& o) {
  auto format = lw::parse_line_format(o.format.empty() ? default_format(o.source) : o.format);
  if (!format) {
    warn("logwatch: " + format.error().message);
    return 2;
  }
  if (!o.format.empty() && (o.source == "kmsg" || o.source == "journal") &&
      o.format != default_format(o.source)) {
    warn(fmt::format("logwatch: --format {}: --source {} reads its own format ({})", o.format,
                     o.source, default_format(o.source)));
    return 2;
  }
  if (const CLI::Option* tree = o.detector.given_tree_option(); tree && !o.model.empty()) {
    warn(fmt::format(
        "logwatch: {} cannot be given with --model: the tree settings and history are the "
        "model's (set them with `logwatch train`)",
        tree->get_name()));
    return 2;
  }
  lw::LogDetector detector(o.detector.scoring());
  if (!o.model.empty()) {
    auto loaded = lw::load_model(o.model);
    if (!loaded) {
      warn("logwatch: " + loaded.error().message);
      return 2;
    }
    detector = std::move(*loaded);
    detector.set_scoring(o.detector.scoring());
  } else if (o.warmup == 0) {
    warn(
        "logwatch: no --model: every template is new until seen; train one with `logwatch "
        "train` or give --warmup N");
  }
  install_stop_handlers();
  // --follow: what happens to the file (truncated, rotated, gone, back) is said on stderr.
  auto source = lw::open_source(o.source, o.follow, o.from_start, &g_stop,
                                [](const std::string& notice) { warn("logwatch: " + notice); });
  if (!source) {
    warn("logwatch: " + source.error().message);
    return 2;
  }
  std::unique_ptr<lw::ExporterSink> sink;
  if (int rc = open_exporter(o, sink); rc != 0) return rc;
  std::string line;
  std::string scratch;
  std::uint64_t number = 0;
  std::uint64_t anomalies = 0;
  lw::AlarmGrouper alarms(o.alarms.config,
                          [](const std::string& notice) { warn("logwatch: " + notice); });
  // Lines held back not yet counted at the exporter.
  std::uint64_t held_unsent = 0;
  auto send_held = [&](std::uint64_t& lines) {
    if (sink && lines > 0)
      if (auto warning = sink->send_held_back(lines)) warn("logwatch: warning: " + *warning);
    lines = 0;
  };
  int rc = 0;
  for (;;) {
    auto more = (*source)->next(line);
    if (!more) {
      warn(fmt::format("logwatch: {}: {}", o.source, more.error().message));
      rc = 1;
      break;
    }
    if (!*more) break;
    ++number;
    lw::ParsedLine p = lw::parse_line(line, *format, scratch);
    if (auto level = (*source)->severity()) p.severity = level;
    if (number <= o.warmup) {
      detector.learn(p.message);
      continue;
    }
    if (auto a = detector.observe_line(number, p.message, p.severity)) {
      ++anomalies;
      switch (alarms.add(number, a->template_text, a->score, a->level, a->rank)) {
        case lw::AlarmDecision::kNewAlarm:
          print_anomaly(*a, o.json);
          if (sink)
            if (auto warning = sink->send(*a)) warn("logwatch: warning: " + *warning);
          break;
        case lw::AlarmDecision::kHeld:
          ++held_unsent;
          break;
        case lw::AlarmDecision::kGrouped:
          break;
      }
    } else {
      alarms.tick(number);
    }
    while (auto ended = alarms.closed(number)) print_group(*ended, o.json);
    // Each rate window, what the budget held back in it.
    if (number % o.alarms.config.rate_window == 0) {
      print_digest(number, alarms.digest(), o.json);
      send_held(held_unsent);
    }
  }
  while (auto ended = alarms.closed(number, true)) print_group(*ended, o.json);
  print_digest(number, alarms.digest(), o.json);
  send_held(held_unsent);
  const std::vector<lw::HeldTemplate> held = alarms.held_templates();
  if (o.json)
    fmt::print("{}\n", dump_json(nlohmann::json{{"line", number},
                                                {"reason", "summary"},
                                                {"lines", number},
                                                {"anomalies", anomalies},
                                                {"alarms", alarms.alarms()},
                                                {"held_back", alarms.held()},
                                                {"held_back_untracked", alarms.held_untracked()},
                                                {"held", held_json(held)}}));
  warn(fmt::format(
      "logwatch: {} lines, {} anomalies in {} alarms ({} held back by the budget){}, {} templates "
      "({} evicted), {} dropped, {} cut at {} bytes",
      number, anomalies, alarms.alarms(), alarms.held(),
      sink ? fmt::format(" ({} sent to the exporter)", sink->sent()) : "", detector.miner().size(),
      detector.miner().evictions(), (*source)->drops(), (*source)->truncated(), lw::kMaxLineBytes));
  for (const auto& h : held)
    warn(fmt::format("logwatch: held back: {} lines {}-{} ({}, score {:.2f})  [template: {}]",
                     h.count, h.first_line, h.last_line, lw::to_string(h.rank), h.score,
                     h.template_text));
  if (alarms.held_untracked() > 0)
    warn(fmt::format("logwatch: held back: {} more lines of templates past the first {}",
                     alarms.held_untracked(), lw::kMaxHeldTemplates));
  return rc;
}

int train_command(const TrainOptions& o) {
  auto format = lw::parse_line_format(o.format);
  if (!format) {
    warn("logwatch train: " + format.error().message);
    return 2;
  }
  if (o.only_normal && *format != lw::LineFormat::kBgl) {
    warn("logwatch train: --only-normal needs labelled lines (--format bgl)");
    return 2;
  }
  lw::DetectorConfig config = o.detector.config;
  config.learn = true;
  lw::LogDetector detector(config);
  std::uint64_t learned = 0;
  std::uint64_t skipped = 0;
  for (const auto& input : o.inputs) {
    auto source = lw::open_source(input, false, true, nullptr);
    if (!source) {
      warn("logwatch train: " + source.error().message);
      return 2;
    }
    std::string line;
    std::string scratch;
    for (;;) {
      auto more = (*source)->next(line);
      if (!more) {
        warn(fmt::format("logwatch train: {}: {}", input, more.error().message));
        return 2;
      }
      if (!*more) break;
      lw::ParsedLine p = lw::parse_line(line, *format, scratch);
      if (o.only_normal && p.label != "-") {
        ++skipped;
        continue;
      }
      detector.learn(p.message);
      ++learned;
    }
    detector.reset_history();  // files are separate streams
  }
  if (learned == 0) {
    warn("logwatch train: no lines to learn from");
    return 2;
  }
  if (auto saved = lw::save_model(detector, o.output); !saved) {
    warn("logwatch train: " + saved.error().message);
    return 1;
  }
  fmt::print("learned {} lines ({} labelled anomalies skipped): {} templates, {} contexts -> {}\n",
             learned, skipped, detector.miner().size(), detector.context_count(), o.output);
  return 0;
}

// The Loghub samples when --data is not given: the copy in the source tree
// this binary was built from, so a checkout evaluates with nothing beside it.
const std::string kDefaultLoghub =
    std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/third_party/loghub";

std::string default_loghub() {
  return std::filesystem::exists(kDefaultLoghub + "/BGL/BGL_2k.log") ? kDefaultLoghub
                                                                     : std::string();
}

nlohmann::json methods_json(const std::vector<lw::MethodResult>& methods) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& m : methods)
    out[m.name] = {{"precision", m.counts.precision()},
                   {"recall", m.counts.recall()},
                   {"f1", m.counts.f1()},
                   {"tp", m.counts.tp},
                   {"fp", m.counts.fp},
                   {"fn", m.counts.fn},
                   {"tn", m.counts.tn},
                   {"alarms", m.alarms}};
  return out;
}

void print_methods(const std::vector<lw::MethodResult>& methods) {
  fmt::print("  {:<14} {:>9} {:>7} {:>6} {:>5} {:>5} {:>5} {:>7}\n", "method", "precision",
             "recall", "F1", "TP", "FP", "FN", "alarms");
  for (const auto& m : methods)
    fmt::print("  {:<14} {:>9.3f} {:>7.3f} {:>6.3f} {:>5} {:>5} {:>5} {:>7}\n", m.name,
               m.counts.precision(), m.counts.recall(), m.counts.f1(), m.counts.tp, m.counts.fp,
               m.counts.fn, m.alarms);
}

// The healthy samples: trained on the first half, every flag on the second a false alarm.
struct HealthySample {
  const char* name;
  const char* path;  // under the Loghub directory
  lw::LineFormat format;
};
constexpr HealthySample kHealthy[] = {
    {"Thunderbird_2k", "/Thunderbird/Thunderbird_2k.log", lw::LineFormat::kThunderbird},
    {"HDFS_2k", "/HDFS/HDFS_2k.log", lw::LineFormat::kHdfs}};

int eval_anomaly_command(const EvalOptions& o) {
  std::string dir = o.data.empty() ? default_loghub() : o.data;
  if (dir.empty()) {
    warn("eval-anomaly: the Loghub samples were not found (looked for " + kDefaultLoghub +
         "); give --data DIR");
    return 2;
  }
  auto lines = lw::load_bgl(dir + "/BGL/BGL_2k.log", dir + "/BGL/BGL_2k.log_structured.csv");
  if (!lines) {
    warn("eval-anomaly: " + lines.error().message);
    return 2;
  }
  lw::EvalOptions options;
  options.detector = o.detector.scoring();
  options.counts = o.counts;
  options.alarms = o.alarms.config;
  auto at_least = lw::parse_severity(o.severity_at_least);
  if (!at_least) {
    warn(
        fmt::format("eval-anomaly: --severity-at-least {}: not a syslog level (emerg, alert, "
                    "crit, err, warning, notice, info, debug or 0-7)",
                    o.severity_at_least));
    return 2;
  }
  options.severity_at_least = *at_least;
  options.use_severity = !o.ignore_severity;
  options.train_fraction = o.train_fraction;
  options.folds = o.folds;
  auto r = lw::evaluate(*lines, options);
  if (!r) {
    warn("eval-anomaly: " + r.error().message);
    return 2;
  }
  std::vector<std::pair<std::string, lw::HealthyResult>> healthy;
  for (const auto& sample : kHealthy) {
    auto h = lw::load_log(dir + sample.path, sample.format);
    if (!h) {
      warn("eval-anomaly: " + h.error().message);
      return 2;
    }
    healthy.emplace_back(sample.name, lw::evaluate_healthy(*h, options));
  }
  const double detector_f1 = std::min(r->split.methods[0].counts.f1(), r->kfold[0].counts.f1());
  if (o.json) {
    nlohmann::json hj = nlohmann::json::object();
    for (const auto& [name, h] : healthy) {
      nlohmann::json methods = methods_json(h.methods);
      for (const auto& m : h.methods) methods[m.name]["alarms_per_1000_lines"] = h.rate(m);
      hj[name] = {{"train_lines", h.train_lines},
                  {"test_lines", h.test_lines},
                  {"held", h.held},
                  {"detector_before_budget_per_1000_lines", h.rate_before_budget()},
                  {"methods", std::move(methods)}};
    }
    nlohmann::json j = {
        {"data", dir + "/BGL/BGL_2k.log"},
        {"lines", r->lines},
        {"anomalies", r->anomalies},
        {"grouping_accuracy", r->grouping_accuracy},
        {"templates_mined", r->templates_mined},
        {"templates_truth", r->templates_truth},
        {"split",
         {{"train_fraction", o.train_fraction},
          {"train_lines", r->split.train_lines},
          {"test_lines", r->split.test_lines},
          {"test_anomalies", r->split.test_anomalies},
          {"held", r->split.held},
          {"methods", methods_json(r->split.methods)}}},
        {"kfold",
         {{"folds", o.folds}, {"chronological", true}, {"methods", methods_json(r->kfold)}}},
        {"healthy", std::move(hj)},
        {"max_alarm_rate", o.alarms.config.max_rate},
        {"group_window", o.alarms.config.group_window},
        {"detector_uses_severity", !o.ignore_severity},
        {"severity_at_least", lw::severity_name(*at_least)}};
    fmt::print("{}\n", dump_json(j, 2));
  } else {
    fmt::print("BGL_2k ({}): {} lines, {} labelled anomalies\n", dir, r->lines, r->anomalies);
    fmt::print(
        "template grouping accuracy {:.3f} ({} templates mined, {} in the ground truth; "
        "Drain published 0.963)\n",
        r->grouping_accuracy, r->templates_mined, r->templates_truth);
    fmt::print(
        "train on the normal lines of the first {:.0f}% ({} lines), test on the rest ({} "
        "lines, {} anomalies; {} detector lines held back by the budget):\n",
        o.train_fraction * 100, r->split.train_lines, r->split.test_lines, r->split.test_anomalies,
        r->split.held);
    print_methods(r->split.methods);
    fmt::print("{} contiguous folds, each after the normal lines of the earlier ones (summed):\n",
               o.folds);
    print_methods(r->kfold);
    for (const auto& [name, h] : healthy) {
      fmt::print(
          "{} as a healthy log: trained on the first {} lines, {} lines scored; false alarms "
          "per 1000 lines:",
          name, h.train_lines, h.test_lines);
      for (const auto& m : h.methods) fmt::print(" {} {:.1f}", m.name, h.rate(m));
      fmt::print(" ({:.1f} before the budget; {} detector lines held back)\n",
                 h.rate_before_budget(), h.held);
    }
    fmt::print(
        "detector: calibrated surprise x severity weight{}, alarms grouped within {} lines, at "
        "most {} per 1000 lines; new_template, count_outlier: templates only; severity: Level at "
        "{} or worse, nothing else\n",
        o.ignore_severity ? " (severity ignored: --ignore-severity)" : "",
        o.alarms.config.group_window, o.alarms.config.max_rate, lw::severity_name(*at_least));
  }
  if (o.min_grouping && r->grouping_accuracy < *o.min_grouping) {
    warn(fmt::format("eval-anomaly: grouping accuracy {:.3f} is below {:.3f}", r->grouping_accuracy,
                     *o.min_grouping));
    return 1;
  }
  if (o.min_f1 && detector_f1 < *o.min_f1) {
    warn(
        fmt::format("eval-anomaly: detector F1 {:.3f} (the lower of split and k-fold) is below "
                    "{:.3f}",
                    detector_f1, *o.min_f1));
    return 1;
  }
  if (o.above_baselines) {
    const auto& methods = r->split.methods;
    for (std::size_t m = 1; m < methods.size(); ++m) {
      // Without severity the detector is held to the template-only baselines.
      if (o.ignore_severity && methods[m].name == "severity") continue;
      if (methods[0].counts.f1() <= methods[m].counts.f1()) {
        warn(fmt::format("eval-anomaly: detector split F1 {:.3f} is not above {}'s {:.3f}",
                         methods[0].counts.f1(), methods[m].name, methods[m].counts.f1()));
        return 1;
      }
    }
  }
  // The detector's floor, not the budget's: taken with no budget, which
  // would cap the rate at its own figure.
  if (o.max_false_alarm_rate)
    for (const auto& [name, h] : healthy)
      if (h.rate_before_budget() > *o.max_false_alarm_rate) {
        warn(
            fmt::format("eval-anomaly: {}: the detector raised {:.1f} false alarms per 1000 "
                        "healthy lines before the budget, above {:.1f}",
                        name, h.rate_before_budget(), *o.max_false_alarm_rate));
        return 1;
      }
  return 0;
}

}  // namespace

void add_logwatch_commands(CLI::App& app, CommandList& commands) {
  auto* watch = app.add_subcommand(
      "logwatch", "flag anomalous node-log lines as they arrive (docs/logwatch.md)");
  auto watch_opts = std::make_shared<WatchOptions>();
  auto* train = watch->add_subcommand("train", "learn templates and sequences from normal logs");
  auto train_opts = std::make_shared<TrainOptions>();
  train->add_option("FILE", train_opts->inputs, "normal logs (- for stdin)")->required();
  train->add_option("-o,--output", train_opts->output, "the model file to write")->required();
  train
      ->add_option("--format", train_opts->format,
                   "line header: raw, bgl, kmsg, syslog or journal (journalctl -o json)")
      ->capture_default_str();
  train->add_flag("--only-normal", train_opts->only_normal,
                  "learn only lines labelled normal (`-`, --format bgl)");
  train_opts->detector.add_tree(train);
  commands.push_back({train, [train_opts] { return train_command(*train_opts); }});

  watch->add_option("--source", watch_opts->source, "kmsg, journal, a FILE or - for stdin")
      ->capture_default_str();
  watch->add_option("--model", watch_opts->model, "a model from `logwatch train`");
  watch->add_flag("--json", watch_opts->json,
                  "one JSON object per anomaly: line, text, template, score, reason");
  watch->add_option("--format", watch_opts->format,
                    "line header: raw, bgl, kmsg, syslog or journal (default: journal for --source "
                    "journal, else raw)");
  watch->add_flag("--follow", watch_opts->follow,
                  "follow a FILE by name as `tail -F` does: as it grows, after a truncation or "
                  "rotation, and when it does not exist yet");
  watch->add_flag("--from-start", watch_opts->from_start,
                  "kmsg, journal: read the records already there too");
  watch->add_option("--warmup", watch_opts->warmup, "learn the first N lines without reporting")
      ->check(number_in(std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max()));
  auto* socket_opt =
      watch->add_option("--exporter-socket", watch_opts->exporter_socket,
                        std::string("send each anomaly to the exporter listening here (default: ") +
                            kDefaultExporterSocket + " when it exists)");
  watch->add_flag("--no-exporter", watch_opts->no_exporter, "do not send anomalies to the exporter")
      ->excludes(socket_opt);
  watch_opts->detector.add_tree(watch);
  watch_opts->detector.add_scoring(watch);
  watch_opts->alarms.add(watch);
  commands.push_back({watch, [watch_opts] { return logwatch_command(*watch_opts); }});

  auto* eval = app.add_subcommand(
      "eval-anomaly",
      "the log anomaly detector and its baselines on Loghub BGL_2k, Thunderbird_2k and HDFS_2k");
  auto eval_opts = std::make_shared<EvalOptions>();
  eval->add_option("--data", eval_opts->data,
                   "the Loghub samples (default: the source tree's tests/data/third_party/loghub)")
      ->check(CLI::ExistingDirectory);
  eval->add_option("--train-fraction", eval_opts->train_fraction,
                   "the earlier share of lines trained on")
      ->check(number_in(0.05, 0.95))
      ->capture_default_str();
  eval->add_option("--folds", eval_opts->folds, "contiguous folds")
      ->check(number_in(2, 100))
      ->capture_default_str();
  eval->add_option("--window", eval_opts->counts.window, "count_outlier: lines per window")
      ->check(number_in(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  eval->add_flag("--json", eval_opts->json, "JSON instead of tables");
  eval->add_option("--severity-at-least", eval_opts->severity_at_least,
                   "the severity baseline flags lines at this syslog level or worse")
      ->capture_default_str();
  eval->add_flag("--ignore-severity", eval_opts->ignore_severity,
                 "give the detector no severity (to see what severity adds)");
  eval->add_option("--min-f1", eval_opts->min_f1,
                   "exit 1 when the detector's F1 (split or k-fold) is below this")
      ->check(number_in(0.0, 1.0));
  eval->add_option("--min-grouping", eval_opts->min_grouping,
                   "exit 1 when the grouping accuracy is below this")
      ->check(number_in(0.0, 1.0));
  eval->add_option("--max-false-alarm-rate", eval_opts->max_false_alarm_rate,
                   "exit 1 when the detector raises more alarms per 1000 lines than this on a "
                   "healthy log (Thunderbird_2k, HDFS_2k)")
      ->check(number_in(0.0, 1000.0));
  eval->add_flag("--above-baselines", eval_opts->above_baselines,
                 "exit 1 unless the detector's split F1 is above every baseline's");
  eval_opts->detector.add_tree(eval);
  eval_opts->detector.add_scoring(eval);
  eval_opts->alarms.add(eval);
  commands.push_back({eval, [eval_opts] { return eval_anomaly_command(*eval_opts); }});
}

}  // namespace ckpt::cli
