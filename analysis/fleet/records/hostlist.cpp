#include "analysis/fleet/records/hostlist.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>

namespace ckpt::fleet::records {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// "01-03,07" → {"01","02","03","07"}.
Expected<std::vector<std::string>> expand_ranges(std::string_view ranges, std::string_view whole) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= ranges.size()) {
    size_t comma = ranges.find(',', pos);
    if (comma == std::string_view::npos) comma = ranges.size();
    std::string_view item = ranges.substr(pos, comma - pos);
    size_t dash = item.find('-');
    std::string_view lo = item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    if (!all_digits(lo) || !all_digits(hi))
      return make_error(
          fmt::format("hostlist \"{}\": \"{}\" is not a number or a range N-M", whole, item));
    uint64_t first = 0, last = 0;
    std::from_chars(lo.data(), lo.data() + lo.size(), first);
    std::from_chars(hi.data(), hi.data() + hi.size(), last);
    if (last < first)
      return make_error(fmt::format("hostlist \"{}\": range \"{}\" runs backwards", whole, item));
    if (last - first > 100000)
      return make_error(fmt::format("hostlist \"{}\": range \"{}\" is too large", whole, item));
    for (uint64_t n = first; n <= last; ++n) out.push_back(fmt::format("{:0{}}", n, lo.size()));
    pos = comma + 1;
  }
  return out;
}

// One name with any number of bracket groups: every combination, in order.
Expected<std::vector<std::string>> expand_name(std::string_view name, std::string_view whole) {
  std::vector<std::string> prefixes{""};
  size_t pos = 0;
  while (pos < name.size()) {
    size_t open = name.find('[', pos);
    std::string_view literal =
        name.substr(pos, open == std::string_view::npos ? name.npos : open - pos);
    if (literal.find(']') != std::string_view::npos)
      return make_error(fmt::format("hostlist \"{}\": \"]\" without \"[\"", whole));
    for (auto& p : prefixes) p.append(literal);
    if (open == std::string_view::npos) break;
    size_t close = name.find(']', open);
    if (close == std::string_view::npos)
      return make_error(fmt::format("hostlist \"{}\": \"[\" without \"]\"", whole));
    auto values = expand_ranges(name.substr(open + 1, close - open - 1), whole);
    if (!values) return values.error();
    std::vector<std::string> next;
    next.reserve(prefixes.size() * values->size());
    for (const auto& p : prefixes)
      for (const auto& v : *values) next.push_back(p + v);
    prefixes = std::move(next);
    pos = close + 1;
  }
  return prefixes;
}

}  // namespace

Expected<std::vector<std::string>> expand_hostlist(std::string_view expression) {
  while (!expression.empty() && (expression.front() == ' ' || expression.front() == '\t'))
    expression.remove_prefix(1);
  while (!expression.empty() && (expression.back() == ' ' || expression.back() == '\t'))
    expression.remove_suffix(1);
  std::vector<std::string> nodes;
  if (expression.empty() || expression == "None assigned" || expression == "(null)" ||
      expression == "None")
    return nodes;
  // Split on commas outside brackets.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= expression.size(); ++i) {
    char c = i < expression.size() ? expression[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0)
      return make_error(fmt::format("hostlist \"{}\": \"]\" without \"[\"", expression));
    if (c == ' ' && depth == 0)
      return make_error(fmt::format("hostlist \"{}\": a space inside the list", expression));
    if (c != ',' || depth != 0) continue;
    std::string_view name = expression.substr(start, i - start);
    if (name.empty())
      return make_error(fmt::format("hostlist \"{}\": an empty name between commas", expression));
    auto expanded = expand_name(name, expression);
    if (!expanded) return expanded.error();
    nodes.insert(nodes.end(), expanded->begin(), expanded->end());
    start = i + 1;
  }
  if (depth != 0)
    return make_error(fmt::format("hostlist \"{}\": \"[\" without \"]\"", expression));
  return nodes;
}

}  // namespace ckpt::fleet::records
