#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "apps/cli/command_registry.h"

namespace ckpt::cli {

int exec_fleet(const std::vector<std::string>& args) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path beside = self.parent_path() / "ckptscope-fleet";
  const std::string program =
      !ec && std::filesystem::exists(beside, ec) ? beside.string() : "ckptscope-fleet";
  std::vector<std::string> owned = {"ckptscope fleet"};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(owned.size() + 1);
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(program.c_str(), argv.data());
  fmt::print(stderr,
             "ckptscope fleet: cannot run {}: {} (it is built and installed with ckptscope)\n",
             program, std::strerror(errno));
  return 127;
}

}  // namespace ckpt::cli
