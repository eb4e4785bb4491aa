// The pages of one file a checkpoint has counted, as disjoint inclusive
// ranges: mmap faults (and the kernel's fault-around) map the same pages
// again and again, and a load moves each page once.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

namespace ckpt {

class PageSet {
 public:
  // Adds [first, last] (inclusive) and returns the parts of it that were not
  // in the set yet, in page order.
  std::vector<std::pair<uint64_t, uint64_t>> add(uint64_t first, uint64_t last) {
    std::vector<std::pair<uint64_t, uint64_t>> fresh;
    if (first > last) return fresh;
    // The first range that could overlap or touch [first, last].
    auto it = ranges_.upper_bound(first);
    if (it != ranges_.begin()) {
      auto before = std::prev(it);
      if (before->second >= first || before->second + 1 == first) it = before;
    }
    uint64_t merged_first = first;
    uint64_t merged_last = last;
    uint64_t cursor = first;  // next page of [first, last] not yet accounted for
    bool cursor_done = false;
    while (it != ranges_.end() && (last == UINT64_MAX || it->first <= last + 1)) {
      const auto [a, b] = *it;
      if (!cursor_done && a > cursor) fresh.emplace_back(cursor, std::min(a - 1, last));
      if (b >= last) {
        cursor_done = true;
      } else if (b + 1 > cursor) {
        cursor = b + 1;
      }
      merged_first = std::min(merged_first, a);
      merged_last = std::max(merged_last, b);
      it = ranges_.erase(it);
    }
    if (!cursor_done && cursor <= last) fresh.emplace_back(cursor, last);
    ranges_.emplace(merged_first, merged_last);
    return fresh;
  }

  [[nodiscard]] size_t ranges() const { return ranges_.size(); }

 private:
  std::map<uint64_t, uint64_t> ranges_;  // first -> last, disjoint, not adjacent
};

}  // namespace ckpt
