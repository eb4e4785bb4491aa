// The fleet record targets share this: read one input as `fleet exclusions`
// and `fleet retries` read it, then compute and render what those commands
// print (table, JSON, page), so what a reader accepts is also rendered.
#pragma once

#include <string_view>

#include "analysis/fleet/records/records.h"
#include "analysis/fleet/records/render.h"
#include "analysis/fleet/records/sessions_csv.h"
#include "analysis/fleet/records/statistics.h"
#include "common/expected.h"
#include "json/json_io.h"

namespace ckpt::fuzz {

template <typename Reader>
void read_and_render(std::string_view text, Reader reader) {
  fleet::records::Records records;
  if (!reader(text, "fuzz", records)) return;
  // read_inputs() refuses the records when this fails, before any statistics.
  if (!fleet::records::check_sessions_chains(records)) return;
  auto exclusions = fleet::records::exclusion_stats(records, {}, {1, 3, 5});
  (void)fleet::records::exclusions_table(exclusions, 10);
  (void)fleet::records::exclusions_html(exclusions, "fuzz", 10);
  (void)dump_json(fleet::records::exclusions_json(exclusions), 2);
  auto retries = fleet::records::retry_stats(records);
  (void)fleet::records::retries_table(retries, 10);
  (void)fleet::records::retries_html(retries, "fuzz");
  (void)dump_json(fleet::records::retries_json(retries), 2);
}

}  // namespace ckpt::fuzz
