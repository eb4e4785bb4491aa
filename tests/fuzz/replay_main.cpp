// Replays inputs through the fuzz targets without libFuzzer, so every
// regression input (and every seed) runs in the normal build's ctest, with
// gcc, and under ASan in the asan preset.
//
//   fuzz_replay TARGET [--seeds LIST --root DIR] [FILE|DIR]...
//
// LIST holds "TARGET GLOB" lines (tests/fuzz/seeds.txt), globs relative to
// DIR; a directory argument is every file in it (none is fine: a target with
// no regressions yet). A crash is the failure; the inputs are named first so
// the one that crashed is the last one printed.
#include <glob.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/replay_targets.h"

namespace {

using Entry = int (*)(const uint8_t*, size_t);

std::vector<std::string> seeds_of(const std::string& target, const std::string& list,
                                  const std::string& root) {
  std::vector<std::string> paths;
  std::ifstream in(list);
  if (!in) {
    std::fprintf(stderr, "fuzz_replay: cannot read %s\n", list.c_str());
    std::exit(2);
  }
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name, pattern;
    if (!(fields >> name >> pattern) || name[0] == '#' || name != target) continue;
    std::string full = root;
    full += '/';
    full += pattern;
    glob_t found{};
    if (glob(full.c_str(), 0, nullptr, &found) == 0)
      for (size_t i = 0; i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
    globfree(&found);
  }
  return paths;
}

int replay(Entry entry, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz_replay: cannot read %s\n", path.c_str());
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
  std::fflush(stdout);
  entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET [--seeds LIST --root DIR] [FILE|DIR]...\n");
    return 2;
  }
  const std::string target = argv[1];
  Entry entry = nullptr;
  for (const auto& t : ckpt::fuzz::kReplayTargets)
    if (target == t.name) entry = t.entry;
  if (entry == nullptr) {
    std::fprintf(stderr, "fuzz_replay: no target %s\n", target.c_str());
    return 2;
  }
  std::vector<std::string> inputs;
  std::string seeds_list, root = ".";
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--seeds" && i + 1 < argc) {
      seeds_list = argv[++i];
    } else if (arg == "--root" && i + 1 < argc) {
      root = argv[++i];
    } else if (std::filesystem::is_directory(argv[i])) {
      for (const auto& file : std::filesystem::directory_iterator(argv[i]))
        if (file.is_regular_file()) inputs.push_back(file.path().string());
    } else if (std::filesystem::exists(argv[i])) {
      inputs.emplace_back(argv[i]);
    }
    // A missing path is a target with no regressions yet: nothing to replay.
  }
  if (!seeds_list.empty()) {
    auto seeds = seeds_of(target, seeds_list, root);
    inputs.insert(inputs.end(), seeds.begin(), seeds.end());
  }
  // Every target has seeds: replaying nothing means a glob or a path broke,
  // and a test that ran nothing must not pass.
  if (inputs.empty()) {
    std::fprintf(stderr, "fuzz_replay %s: no inputs found (seeds or paths missing)\n",
                 target.c_str());
    return 1;
  }
  int failed = 0;
  for (const auto& path : inputs) failed |= replay(entry, path);
  std::printf("fuzz_replay %s: %zu inputs, none crashed\n", target.c_str(), inputs.size());
  return failed;
}
