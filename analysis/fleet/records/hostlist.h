// Slurm hostlist expressions ("gpu[01-03,07],cpu5", "rack[1-2]-n[1-2]") as
// the node names they stand for, in order (Slurm's src/common/hostlist.c:
// ranges keep the zero padding of their lower bound; several bracket groups
// in one name give every combination).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace ckpt::fleet::records {

// "" and Slurm's "None assigned" / "(null)" are no nodes. A malformed
// expression is an error naming the expression and what is wrong.
Expected<std::vector<std::string>> expand_hostlist(std::string_view expression);

}  // namespace ckpt::fleet::records
