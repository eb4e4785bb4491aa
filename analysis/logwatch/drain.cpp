#include "analysis/logwatch/drain.h"

#include <string>

#include "analysis/logwatch/masking.h"

namespace ckpt::logwatch {

struct TemplateMiner::Node {
  std::unordered_map<std::string, std::unique_ptr<Node>> children;
  std::vector<TemplateId> clusters;  // on leaves only
};

std::string join_tokens(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) {
    if (!out.empty()) out += ' ';
    out += t;
  }
  return out;
}

TemplateMiner::TemplateMiner(DrainConfig config)
    : config_(config), root_(std::make_unique<Node>()) {}

TemplateMiner::~TemplateMiner() = default;
TemplateMiner::TemplateMiner(TemplateMiner&&) noexcept = default;
TemplateMiner& TemplateMiner::operator=(TemplateMiner&&) noexcept = default;

TemplateMiner::TemplateMiner(const TemplateMiner& other) : root_(std::make_unique<Node>()) {
  copy_from(other);
}

TemplateMiner& TemplateMiner::operator=(const TemplateMiner& other) {
  if (this != &other) {
    root_ = std::make_unique<Node>();
    clusters_.clear();
    recency_.clear();
    copy_from(other);
  }
  return *this;
}

void TemplateMiner::copy_from(const TemplateMiner& other) {
  config_ = other.config_;
  for (const Cluster* c : other.clusters_by_recency()) restore(*c);
  next_id_ = other.next_id_;
  evictions_ = other.evictions_;
}

const TemplateMiner::Node* TemplateMiner::find_leaf(const std::vector<std::string>& tokens) const {
  // logparser Drain.treeSearch: an exact child, else the `<*>` child, else no match.
  auto it = root_->children.find(std::to_string(tokens.size()));
  if (it == root_->children.end()) return nullptr;
  const Node* node = it->second.get();
  const std::size_t layers = std::min<std::size_t>(config_.prefix_tokens, tokens.size());
  for (std::size_t i = 0; i < layers; ++i) {
    auto child = node->children.find(tokens[i]);
    if (child == node->children.end()) child = node->children.find(std::string(kWildcard));
    if (child == node->children.end()) return nullptr;
    node = child->second.get();
  }
  return node;
}

std::optional<TemplateId> TemplateMiner::best_in_leaf(
    const Node& leaf, const std::vector<std::string>& tokens) const {
  // logparser Drain.fastMatch: the highest share of equal (non-wildcard)
  // tokens; ties go to the template with more wildcards.
  double best_sim = -1;
  int best_params = -1;
  std::optional<TemplateId> best;
  for (TemplateId id : leaf.clusters) {
    const Cluster& c = clusters_.at(id).cluster;
    if (c.tokens.size() != tokens.size()) continue;
    int equal = 0;
    int params = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (c.tokens[i] == kWildcard)
        ++params;
      else if (c.tokens[i] == tokens[i])
        ++equal;
    }
    double sim = tokens.empty() ? 1.0 : static_cast<double>(equal) / tokens.size();
    if (sim > best_sim || (sim == best_sim && params > best_params)) {
      best_sim = sim;
      best_params = params;
      best = id;
    }
  }
  if (best && best_sim >= config_.similarity) return best;
  return std::nullopt;
}

std::optional<TemplateId> TemplateMiner::match(const std::vector<std::string>& tokens) const {
  const Node* leaf = find_leaf(tokens);
  if (leaf == nullptr) return std::nullopt;
  return best_in_leaf(*leaf, tokens);
}

std::vector<std::string> TemplateMiner::path_for_new(const std::vector<std::string>& tokens) const {
  // logparser Drain.addSeqToPrefixTree: a token with a digit goes to `<*>`;
  // a node keeps at most max_children children, its last slot being `<*>`.
  std::vector<std::string> path{std::to_string(tokens.size())};
  auto it = root_->children.find(path.front());
  const Node* node = it == root_->children.end() ? nullptr : it->second.get();
  const std::size_t layers = std::min<std::size_t>(config_.prefix_tokens, tokens.size());
  const std::string wildcard(kWildcard);
  for (std::size_t i = 0; i < layers; ++i) {
    const std::string& token = tokens[i];
    std::string key = token;
    if (is_variable_token(token)) {
      key = wildcard;
    } else if (node != nullptr && node->children.count(token) == 0) {
      const std::size_t n = node->children.size();
      const auto max = static_cast<std::size_t>(config_.max_children);
      if (node->children.count(wildcard) != 0) {
        if (n >= max) key = wildcard;
      } else if (n + 1 >= max) {
        key = wildcard;
      }
    }
    path.push_back(key);
    if (node != nullptr) {
      auto child = node->children.find(key);
      node = child == node->children.end() ? nullptr : child->second.get();
    }
  }
  return path;
}

TemplateMiner::Node& TemplateMiner::make_path(const std::vector<std::string>& path) {
  Node* node = root_.get();
  for (const auto& key : path) {
    auto& child = node->children[key];
    if (!child) child = std::make_unique<Node>();
    node = child.get();
  }
  return *node;
}

void TemplateMiner::unlink(const Cluster& cluster) {
  // Walk down remembering the nodes, drop the id, then prune empty nodes.
  std::vector<Node*> nodes{root_.get()};
  for (const auto& key : cluster.path) {
    auto it = nodes.back()->children.find(key);
    if (it == nodes.back()->children.end()) return;
    nodes.push_back(it->second.get());
  }
  auto& ids = nodes.back()->clusters;
  std::erase(ids, cluster.id);
  for (std::size_t depth = cluster.path.size(); depth > 0; --depth) {
    Node* node = nodes[depth];
    if (!node->clusters.empty() || !node->children.empty()) break;
    nodes[depth - 1]->children.erase(cluster.path[depth - 1]);
  }
}

void TemplateMiner::touch(Entry& e) { recency_.splice(recency_.end(), recency_, e.recency); }

MatchResult TemplateMiner::add(const std::vector<std::string>& tokens) {
  return add_matched(tokens, match(tokens));
}

MatchResult TemplateMiner::add_matched(const std::vector<std::string>& tokens,
                                       std::optional<TemplateId> matched) {
  MatchResult r;
  if (matched) {
    Entry& e = clusters_.at(*matched);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (e.cluster.tokens[i] != kWildcard && e.cluster.tokens[i] != tokens[i]) {
        e.cluster.tokens[i] = kWildcard;
        r.template_changed = true;
      }
    }
    ++e.cluster.matched;
    touch(e);
    r.id = *matched;
    return r;
  }
  if (config_.max_templates > 0 && clusters_.size() >= config_.max_templates) {
    TemplateId victim = recency_.front();
    unlink(clusters_.at(victim).cluster);
    recency_.pop_front();
    clusters_.erase(victim);
    ++evictions_;
    r.evicted = victim;
  }
  Cluster c;
  c.id = next_id_++;
  c.tokens = tokens;
  c.path = path_for_new(tokens);
  c.matched = 1;
  r.id = c.id;
  r.created = true;
  restore(std::move(c));
  return r;
}

void TemplateMiner::restore(Cluster cluster) {
  TemplateId id = cluster.id;
  if (id >= next_id_) next_id_ = id + 1;
  make_path(cluster.path).clusters.push_back(id);
  recency_.push_back(id);
  Entry e{std::move(cluster), std::prev(recency_.end())};
  clusters_.insert_or_assign(id, std::move(e));
}

const Cluster* TemplateMiner::cluster(TemplateId id) const {
  auto it = clusters_.find(id);
  return it == clusters_.end() ? nullptr : &it->second.cluster;
}

std::string TemplateMiner::template_text(TemplateId id) const {
  const Cluster* c = cluster(id);
  return c == nullptr ? std::string() : join_tokens(c->tokens);
}

std::vector<const Cluster*> TemplateMiner::clusters_by_recency() const {
  std::vector<const Cluster*> out;
  out.reserve(recency_.size());
  for (TemplateId id : recency_) out.push_back(&clusters_.at(id).cluster);
  return out;
}

}  // namespace ckpt::logwatch
