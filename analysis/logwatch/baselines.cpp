#include "analysis/logwatch/baselines.h"

#include <algorithm>
#include <cmath>

namespace ckpt::logwatch {

std::vector<bool> new_template_baseline(const std::vector<TemplateId>& test_ids,
                                        TemplateId first_new_id) {
  std::vector<bool> out(test_ids.size());
  for (std::size_t i = 0; i < test_ids.size(); ++i) out[i] = test_ids[i] >= first_new_id;
  return out;
}

void CountOutlierBaseline::fit(const std::vector<TemplateId>& train_ids) {
  stats_.clear();
  const std::size_t w = std::max<std::size_t>(config_.window, 1);
  const std::size_t windows = (train_ids.size() + w - 1) / w;
  if (windows == 0) return;
  // Sum and sum of squares per template; a window without it counts 0.
  std::unordered_map<TemplateId, std::pair<double, double>> sums;
  for (std::size_t start = 0; start < train_ids.size(); start += w) {
    std::unordered_map<TemplateId, double> counts;
    for (std::size_t i = start; i < std::min(train_ids.size(), start + w); ++i)
      counts[train_ids[i]] += 1;
    for (const auto& [id, c] : counts) {
      sums[id].first += c;
      sums[id].second += c * c;
    }
  }
  for (const auto& [id, s] : sums) {
    double mean = s.first / static_cast<double>(windows);
    double var = std::max(0.0, s.second / static_cast<double>(windows) - mean * mean);
    stats_[id] = {mean, std::sqrt(var)};
  }
}

std::vector<bool> CountOutlierBaseline::flag(const std::vector<TemplateId>& test_ids) const {
  std::vector<bool> out(test_ids.size());
  const std::size_t w = std::max<std::size_t>(config_.window, 1);
  for (std::size_t start = 0; start < test_ids.size(); start += w) {
    const std::size_t end = std::min(test_ids.size(), start + w);
    std::unordered_map<TemplateId, double> counts;
    for (std::size_t i = start; i < end; ++i) counts[test_ids[i]] += 1;
    for (std::size_t i = start; i < end; ++i) {
      Stats s;
      if (auto it = stats_.find(test_ids[i]); it != stats_.end()) s = it->second;
      double z = (counts[test_ids[i]] - s.mean) / std::max(s.std, config_.min_std);
      out[i] = z > config_.z;
    }
  }
  return out;
}

}  // namespace ckpt::logwatch
