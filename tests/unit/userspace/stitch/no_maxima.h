// A MaximaProvider that knows no maximum: for stitcher tests about which
// calls land in which checkpoint, not about fractions of a maximum.
#pragma once

#include <string>
#include <vector>

#include "stitch/maxima.h"

namespace ckpt::test {

class NoMaxima : public MaximaProvider {
 public:
  StageMax storage(Direction, const std::vector<FileId>&) override { return {}; }
  StageMax serialize(size_t /*threads*/) override { return {}; }
  StageMax transport(const std::string&) override { return {}; }
};

}  // namespace ckpt::test
