// Markdown text for the report and the sections other analyses add to it.
#pragma once

#include <string>
#include <string_view>

namespace ckpt::report {

// A table cell: no pipe or newline may break the row; invalid UTF-8 replaced.
std::string markdown_cell(std::string_view s);

}  // namespace ckpt::report
