// `ckptscope fleet exclusions` and `ckptscope fleet retries`: node exclusions
// and retry chains from scheduler records (docs/fleet/records.md).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "analysis/fleet/records/hostlist.h"
#include "analysis/fleet/records/inputs.h"
#include "analysis/fleet/records/render.h"
#include "analysis/fleet/records/statistics.h"
#include "apps/cli/command_registry.h"
#include "files/output_file.h"
#include "json/json_io.h"

namespace ckpt::cli {
namespace {

namespace records = ckpt::fleet::records;

struct RecordsOutput {
  bool json = false;
  std::string html_path;
};

struct ExclusionsOptions {
  records::Inputs inputs;
  std::vector<std::string> nodes;  // hostlists: the population beyond the records
  int top = 10;
  RecordsOutput output;
};

struct RetriesOptions {
  records::Inputs inputs;
  int chains_shown = 20;
  RecordsOutput output;
};

std::string describe_inputs(const records::Inputs& in) {
  std::vector<std::string> parts;
  auto add = [&](const char* what, const std::vector<std::string>& files) {
    for (const auto& f : files) parts.push_back(fmt::format("{} {}", what, f));
  };
  add("sacct --json", in.sacct_json);
  add("sacct -P", in.sacct_text);
  add("sinfo -R", in.sinfo);
  add("TorchElastic", in.torchelastic);
  add("PyTorchJob", in.pytorchjob);
  add("sessions", in.sessions);
  return fmt::format("{}", fmt::join(parts, ", "));
}

int write_html(const std::string& path, const std::string& html, const char* command) {
  if (auto written = replace_file_contents(path, html, "--html"); !written) {
    fmt::print(stderr, "ckptscope fleet {}: {}\n", command, written.error().message);
    return 1;
  }
  return 0;
}

int run_exclusions(const ExclusionsOptions& opts) {
  if (opts.inputs.empty()) {
    fmt::print(stderr,
               "ckptscope fleet exclusions: give at least one of --sacct-json, --sacct, --sinfo, "
               "--sessions\n");
    return 2;
  }
  if (opts.top < 1) {
    fmt::print(stderr, "ckptscope fleet exclusions: --top {}: must be at least 1\n", opts.top);
    return 2;
  }
  std::set<std::string> extra_nodes;
  for (const auto& list : opts.nodes) {
    auto nodes = records::expand_hostlist(list);
    if (!nodes) {
      fmt::print(stderr, "ckptscope fleet exclusions: --nodes: {}\n", nodes.error().message);
      return 2;
    }
    extra_nodes.insert(nodes->begin(), nodes->end());
  }
  auto read = records::read_inputs(opts.inputs);
  if (!read) {
    fmt::print(stderr, "ckptscope fleet exclusions: {}\n", read.error().message);
    return 2;
  }
  // top_k_share: always k = 1, 3, 5 (the JSON contract), plus --top's k
  // (10 by default), so the table's "top N" figure is in the JSON too.
  std::vector<int> top_ks{1, 3, 5};
  if (opts.top != 1 && opts.top != 3 && opts.top != 5) top_ks.push_back(opts.top);
  auto stats = records::exclusion_stats(*read, extra_nodes, top_ks);
  if (!opts.output.html_path.empty()) {
    int rc = write_html(opts.output.html_path,
                        records::exclusions_html(stats, describe_inputs(opts.inputs), opts.top),
                        "exclusions");
    if (rc != 0) return rc;
  }
  if (opts.output.json)
    fmt::print("{}\n", dump_json(records::exclusions_json(stats), 2));
  else if (opts.output.html_path.empty())
    fmt::print("{}", records::exclusions_table(stats, opts.top));
  return 0;
}

int run_retries(const RetriesOptions& opts) {
  if (opts.inputs.empty()) {
    fmt::print(stderr,
               "ckptscope fleet retries: give at least one of --sacct-json, --sacct, "
               "--torchelastic, --pytorchjob, --sessions\n");
    return 2;
  }
  if (opts.chains_shown < 0) {
    fmt::print(stderr, "ckptscope fleet retries: --chains {}: must be at least 0\n",
               opts.chains_shown);
    return 2;
  }
  auto read = records::read_inputs(opts.inputs);
  if (!read) {
    fmt::print(stderr, "ckptscope fleet retries: {}\n", read.error().message);
    return 2;
  }
  auto stats = records::retry_stats(*read);
  if (!opts.output.html_path.empty()) {
    int rc = write_html(opts.output.html_path,
                        records::retries_html(stats, describe_inputs(opts.inputs)), "retries");
    if (rc != 0) return rc;
  }
  if (opts.output.json)
    fmt::print("{}\n", dump_json(records::retries_json(stats), 2));
  else if (opts.output.html_path.empty())
    fmt::print("{}", records::retries_table(stats, opts.chains_shown));
  return 0;
}

void add_slurm_options(CLI::App& cmd, records::Inputs& in) {
  cmd.add_option("--sacct-json", in.sacct_json,
                 "sacct --json output, Slurm 21.08 to 24.x (repeatable; - = stdin)");
  cmd.add_option("--sacct", in.sacct_text,
                 "sacct -P or -p output with its header: JobID,JobName,User,State,Submit,Start,"
                 "End,NodeList,FailedNode (repeatable; - = stdin)");
  cmd.add_option("--sessions", in.sessions,
                 "a sessions CSV (docs/fleet/records.md; repeatable; - = stdin)");
}

void add_output_options(CLI::App& cmd, RecordsOutput& out) {
  cmd.add_flag("--json", out.json, "JSON on stdout, for scripts");
  cmd.add_option("--html", out.html_path, "write a self-contained HTML page with the charts");
}

}  // namespace

void add_fleet_record_commands(CLI::App& fleet, CommandList& commands) {
  auto exclusions_opts = std::make_shared<ExclusionsOptions>();
  auto* exclusions = fleet.add_subcommand(
      "exclusions",
      "how concentrated node exclusions are (top-k share, Lorenz curve, Gini), from Slurm "
      "records or a sessions CSV");
  add_slurm_options(*exclusions, exclusions_opts->inputs);
  exclusions->add_option("--sinfo", exclusions_opts->inputs.sinfo,
                         "sinfo -R output: each drain event is one exclusion per node "
                         "(repeatable; - = stdin)");
  exclusions->add_option("--nodes", exclusions_opts->nodes,
                         "every node of the fleet as a hostlist (gpu[01-63]), so nodes never "
                         "excluded count in the Gini (repeatable)");
  exclusions->add_option("--top", exclusions_opts->top, "node rows in the table (default 10)");
  add_output_options(*exclusions, exclusions_opts->output);
  commands.push_back({exclusions, [exclusions_opts] { return run_exclusions(*exclusions_opts); }});

  auto retries_opts = std::make_shared<RetriesOptions>();
  auto* retries = fleet.add_subcommand(
      "retries",
      "retry chains: automatic versus manual resubmission, success rates, attempts per chain, "
      "retry intervals");
  add_slurm_options(*retries, retries_opts->inputs);
  retries->add_option("--torchelastic", retries_opts->inputs.torchelastic,
                      "a TorchElastic agent's log: one chain (repeatable; - = stdin)");
  retries->add_option("--pytorchjob", retries_opts->inputs.pytorchjob,
                      "kubectl get pytorchjob -o json (a job or a List; repeatable; - = stdin)");
  retries->add_flag("--resubmits-by-name", retries_opts->inputs.resubmits_by_name,
                    "Slurm: a job resubmitted by its user under the same name after the last "
                    "one failed continues that chain as a manual retry");
  retries->add_option("--chains", retries_opts->chains_shown,
                      "chain rows in the table (default 20)");
  add_output_options(*retries, retries_opts->output);
  commands.push_back({retries, [retries_opts] { return run_retries(*retries_opts); }});
}

}  // namespace ckpt::cli
