// Online template mining in the style of Drain (He, Zhu, Zheng, Lyu, "Drain:
// An Online Log Parsing Approach with Fixed Depth Tree", ICWS 2017; the
// reference code is logpai/logparser's Drain.py). A message's masked tokens
// walk a tree of fixed depth: the root's children are message lengths, the
// next `prefix_tokens` layers are the leading tokens (a variable token, or a
// node already holding `max_children` children, goes to the `<*>` child), and
// each leaf holds a few clusters. Within the leaf the cluster with the most
// equal tokens wins when at least `similarity` of the positions agree; its
// template then turns the positions that differ into `<*>`. Otherwise the
// message starts a new cluster.
//
// Memory is bounded for an endless stream: at most `max_templates` clusters;
// adding one more evicts the least recently matched (its tree nodes go with it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ckpt::logwatch {

struct DrainConfig {
  // Leading-token layers of the tree (logparser's `depth` is this plus 3: its
  // root, length and leaf layers, counted from 1; 4 there is 1 here).
  int prefix_tokens = 1;
  double similarity = 0.5;  // st: fraction of equal tokens to join a cluster
  int max_children = 100;   // per tree node before tokens share `<*>`
  std::size_t max_templates = 10000;
};

using TemplateId = std::uint32_t;

struct Cluster {
  TemplateId id = 0;
  std::vector<std::string> tokens;  // the template, `<*>` where variable
  std::vector<std::string> path;    // tree keys below the root, leaf last
  std::uint64_t matched = 0;        // messages matched since creation or load
};

struct MatchResult {
  TemplateId id = 0;
  bool created = false;               // a new template (no cluster was similar)
  bool template_changed = false;      // a position became `<*>`
  std::optional<TemplateId> evicted;  // dropped to stay under max_templates
};

class TemplateMiner {
 public:
  explicit TemplateMiner(DrainConfig config = {});
  TemplateMiner(const TemplateMiner& other);
  TemplateMiner& operator=(const TemplateMiner& other);
  TemplateMiner(TemplateMiner&&) noexcept;
  TemplateMiner& operator=(TemplateMiner&&) noexcept;
  ~TemplateMiner();

  // Mines one message's masked tokens (tokenize_and_mask).
  MatchResult add(const std::vector<std::string>& tokens);
  // add() for tokens whose match() is already known (`matched`, as match()
  // returned it, with nothing added since): the tree is not searched again.
  MatchResult add_matched(const std::vector<std::string>& tokens,
                          std::optional<TemplateId> matched);
  // The cluster `tokens` would join, without changing anything.
  [[nodiscard]] std::optional<TemplateId> match(const std::vector<std::string>& tokens) const;

  [[nodiscard]] const Cluster* cluster(TemplateId id) const;
  [[nodiscard]] std::string template_text(TemplateId id) const;
  [[nodiscard]] std::size_t size() const { return clusters_.size(); }
  [[nodiscard]] std::uint64_t evictions() const { return evictions_; }
  [[nodiscard]] const DrainConfig& config() const { return config_; }
  [[nodiscard]] TemplateId next_id() const { return next_id_; }

  // Clusters from least to most recently matched (the order a model keeps).
  [[nodiscard]] std::vector<const Cluster*> clusters_by_recency() const;
  // Puts back a saved cluster (model load), as the most recently matched.
  void restore(Cluster cluster);
  void set_next_id(TemplateId id) { next_id_ = std::max(next_id_, id); }

 private:
  struct Node;
  struct Entry {
    Cluster cluster;
    std::list<TemplateId>::iterator recency;
  };

  [[nodiscard]] std::vector<std::string> path_for_new(const std::vector<std::string>& tokens) const;
  [[nodiscard]] const Node* find_leaf(const std::vector<std::string>& tokens) const;
  [[nodiscard]] std::optional<TemplateId> best_in_leaf(
      const Node& leaf, const std::vector<std::string>& tokens) const;
  Node& make_path(const std::vector<std::string>& path);
  void unlink(const Cluster& cluster);
  void touch(Entry& e);
  void copy_from(const TemplateMiner& other);

  DrainConfig config_;
  std::unique_ptr<Node> root_;
  std::unordered_map<TemplateId, Entry> clusters_;
  std::list<TemplateId> recency_;  // front: least recently matched
  TemplateId next_id_ = 1;
  std::uint64_t evictions_ = 0;
};

std::string join_tokens(const std::vector<std::string>& tokens);

}  // namespace ckpt::logwatch
