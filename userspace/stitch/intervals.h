// Wall-time arithmetic on [start, end) intervals in nanoseconds: a stage's
// busy time is the union of its intervals, so parallel calls are not counted
// twice.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace ckpt {

using Interval = std::pair<uint64_t, uint64_t>;

// Length of the union of `intervals` clipped to [lo, hi). Sorts in place.
inline uint64_t union_length(std::vector<Interval>& intervals, uint64_t lo, uint64_t hi) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t total = 0;
  uint64_t cur_start = 0;
  uint64_t cur_end = 0;
  bool open = false;
  for (auto [s, e] : intervals) {
    s = std::max(s, lo);
    e = std::min(e, hi);
    if (e <= s) continue;
    if (open && s <= cur_end) {
      cur_end = std::max(cur_end, e);
      continue;
    }
    if (open) total += cur_end - cur_start;
    cur_start = s;
    cur_end = e;
    open = true;
  }
  if (open) total += cur_end - cur_start;
  return total;
}

// A set of instants as sorted, disjoint, non-empty intervals (touching ones
// merged): the form the set operations below take and give.
using IntervalSet = std::vector<Interval>;

// `intervals` as a set: sorted, overlapping and touching ones merged.
inline IntervalSet interval_set(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  IntervalSet out;
  for (auto [s, e] : intervals) {
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(s, e);
    }
  }
  return out;
}

inline uint64_t set_length(const IntervalSet& set) {
  uint64_t total = 0;
  for (auto [s, e] : set) total += e - s;
  return total;
}

inline IntervalSet set_union(const IntervalSet& a, const IntervalSet& b) {
  std::vector<Interval> both(a);
  both.insert(both.end(), b.begin(), b.end());
  return interval_set(std::move(both));
}

// The instants of `a` not in `b`. Each interval of `a` finds its first
// overlap in `b` by binary search, so a small set minus a large one (one
// file's calls minus a whole checkpoint's transport) costs what they share.
inline IntervalSet set_minus(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  for (auto [s, e] : a) {
    auto it = std::upper_bound(b.begin(), b.end(), s,
                               [](uint64_t t, const Interval& iv) { return t < iv.second; });
    uint64_t cur = s;
    for (; it != b.end() && it->first < e; ++it) {
      if (it->first > cur) out.emplace_back(cur, it->first);
      cur = std::max(cur, it->second);
      if (cur >= e) break;
    }
    if (cur < e) out.emplace_back(cur, e);
  }
  return out;
}

}  // namespace ckpt
