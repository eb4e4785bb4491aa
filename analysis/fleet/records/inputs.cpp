#include "analysis/fleet/records/inputs.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/fleet/records/pytorchjob.h"
#include "analysis/fleet/records/sacct_json.h"
#include "analysis/fleet/records/sacct_text.h"
#include "analysis/fleet/records/sessions_csv.h"
#include "analysis/fleet/records/sinfo_reasons.h"
#include "analysis/fleet/records/slurm_record.h"
#include "analysis/fleet/records/torchelastic_log.h"

namespace ckpt::fleet::records {

bool Inputs::empty() const {
  return sacct_json.empty() && sacct_text.empty() && sinfo.empty() && torchelastic.empty() &&
         pytorchjob.empty() && sessions.empty();
}

Expected<std::string> read_input_file(const std::string& path) {
  if (path == "-") {
    std::ostringstream text;
    text << std::cin.rdbuf();
    return text.str();
  }
  // A directory opens as a stream on Linux and only fails (by throwing) when
  // read: say what it is instead. Pipes and /dev/stdin are fine.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return make_error(fmt::format("{}: is a directory, not a records file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  // istream::read turns a failing read into badbit (it does not throw).
  std::string text;
  std::array<char, 1 << 16> buffer{};
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0)
    text.append(buffer.data(), static_cast<size_t>(in.gcount()));
  if (in.bad()) return make_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  return text;
}

Expected<Records> read_inputs(const Inputs& inputs) {
  using Reader = Expected<void> (*)(std::string_view, std::string_view, Records&);
  Records records;
  const std::pair<const std::vector<std::string>*, Reader> sources[] = {
      {&inputs.sacct_json, read_sacct_json},  {&inputs.sacct_text, read_sacct_text},
      {&inputs.sinfo, read_sinfo_reasons},    {&inputs.torchelastic, read_torchelastic_log},
      {&inputs.pytorchjob, read_pytorchjobs}, {&inputs.sessions, read_sessions_csv}};
  for (const auto& [paths, reader] : sources)
    for (const auto& path : *paths) {
      auto text = read_input_file(path);
      if (!text) return text.error();
      auto read = reader(*text, path == "-" ? "<stdin>" : path, records);
      if (!read) return read.error();
    }
  if (auto chains = check_sessions_chains(records); !chains) return chains.error();
  finish_slurm_chains(records);
  if (inputs.resubmits_by_name) join_manual_resubmissions(records);
  return records;
}

}  // namespace ckpt::fleet::records
