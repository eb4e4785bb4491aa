// Fixture paths for the fleet/records unit tests.
#pragma once

#include <string>

#include "analysis/fleet/records/inputs.h"

namespace ckpt::fleet::records::test {

inline std::string fixture(const std::string& name) {
  return std::string(CKPTSCOPE_SOURCE_DIR) + "/tests/data/fleet/records/" + name;
}

}  // namespace ckpt::fleet::records::test
