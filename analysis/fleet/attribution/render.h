// The outputs of `fleet attribute`: a table for people, JSON for scripts (a
// contract, extended never renamed: docs/fleet/attribute.md) and an HTML page
// with the charts.
#pragma once

#include <string>

#include "analysis/fleet/attribution/attribution.h"

namespace ckpt::fleet::attribution {

struct RenderContext {
  std::string prometheus_url;
  AttributionOptions options;
};

std::string render_table(const Attribution& a, const RenderContext& context);
std::string render_json(const Attribution& a, const RenderContext& context);
std::string render_html(const Attribution& a, const RenderContext& context);

// "+6m30s", "-45s": the lead time with its sign (positive = before the failure).
std::string signed_duration(double seconds);

}  // namespace ckpt::fleet::attribution
