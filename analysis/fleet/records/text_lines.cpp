#include "analysis/fleet/records/text_lines.h"

namespace ckpt::fleet::records {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (true) {
    size_t end = text.find(separator, pos);
    if (end == std::string_view::npos) {
      fields.push_back(text.substr(pos));
      return fields;
    }
    fields.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace ckpt::fleet::records
