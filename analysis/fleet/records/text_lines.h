// Splitting record text into lines and fields.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/fleet/common/csv.h"  // trim

namespace ckpt::fleet::records {

// Lines without their "\n" or "\r\n"; a final line without a newline counts.
std::vector<std::string_view> split_lines(std::string_view text);
std::vector<std::string_view> split(std::string_view text, char separator);
std::string lower(std::string_view text);

}  // namespace ckpt::fleet::records
