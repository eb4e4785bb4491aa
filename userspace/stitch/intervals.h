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

}  // namespace ckpt
