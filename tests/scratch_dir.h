// A directory of its own for one test, removed with everything in it when
// the test ends. Shared by every test binary.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ckpt::test {

class ScratchDir {
 public:
  ScratchDir() {
    // Under the build tree's disk, not /tmp (which may be tmpfs): tests
    // about storage want a real file system.
    std::string tmpl = (std::filesystem::temp_directory_path() / "ckptscope-test-XXXXXX").string();
    if (const char* d = std::getenv("CKPTSCOPE_TEST_TMP"))
      tmpl = std::string(d) + "/ckptscope-test-XXXXXX";
    path_ = mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string operator/(const std::string& rel) const {
    return (path_ / rel).string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace ckpt::test
