#include "analysis/fleet/attribution/counter_rate.h"

#include <cmath>
#include <string_view>

#include "analysis/fleet/common/counter.h"

namespace ckpt::fleet::attribution {

std::vector<Sample> counter_rate(const std::vector<Sample>& samples, double window_s) {
  // Reset-corrected running total at each finite sample.
  std::vector<Sample> cumulative;
  cumulative.reserve(samples.size());
  double total = 0;
  double previous = 0;
  for (const auto& s : samples) {
    if (!std::isfinite(s.value)) continue;
    if (!cumulative.empty()) total += counter_increase(previous, s.value);
    previous = s.value;
    cumulative.push_back({s.time_s, total});
  }
  std::vector<Sample> rates;
  if (cumulative.empty()) return rates;
  const double first_time = cumulative.front().time_s;
  std::size_t start = 0;
  for (const auto& c : cumulative) {
    if (c.time_s - first_time < window_s) continue;
    while (cumulative[start].time_s < c.time_s - window_s) ++start;
    const double elapsed = c.time_s - cumulative[start].time_s;
    if (elapsed <= 0) continue;
    rates.push_back({c.time_s, (c.value - cumulative[start].value) / elapsed});
  }
  return rates;
}

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view strip(std::string_view s, std::string_view suffix) {
  return s.substr(0, s.size() - suffix.size());
}

}  // namespace

bool is_counter(const std::string& name, const std::map<std::string, std::string>& metric_types) {
  auto type_of = [&](std::string_view family) -> const std::string* {
    auto it = metric_types.find(std::string(family));
    return it == metric_types.end() ? nullptr : &it->second;
  };
  if (const auto* t = type_of(name)) {
    if (*t == "counter") return true;
    if (*t != "unknown" && *t != "untyped") return false;
  }
  if (ends_with(name, "_total")) {
    if (const auto* t = type_of(strip(name, "_total"))) return *t == "counter";
    return true;
  }
  for (std::string_view suffix : {"_sum", "_count"}) {
    if (!ends_with(name, suffix)) continue;
    if (const auto* t = type_of(strip(name, suffix))) return *t == "histogram" || *t == "summary";
    return true;
  }
  return false;
}

}  // namespace ckpt::fleet::attribution
