#include "analysis/report/svg.h"

#include <fmt/format.h>

#include <cmath>

namespace ckpt::report::svg {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control bytes are not allowed in XML 1.0: shown as spaces.
        out.push_back(static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' ? ' ' : c);
    }
  }
  return out;
}

namespace {

Unit scaled(double max, const char* const* names, size_t n, double step) {
  size_t i = 0;
  double divisor = 1;
  while (i + 1 < n && max >= divisor * step) {
    divisor *= step;
    ++i;
  }
  return {divisor, names[i]};
}

}  // namespace

std::string page_preamble() {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'; img-src data:\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"color-scheme\" content=\"light dark\">\n";
}

Unit time_unit(double max_ns) {
  static const char* const kNames[] = {"ns", "µs", "ms", "s"};
  return scaled(max_ns, kNames, std::size(kNames), 1000);
}

Unit bytes_unit(double max_bytes) {
  static const char* const kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  return scaled(max_bytes, kNames, std::size(kNames), 1024);
}

Unit rate_unit(double max_Bps) {
  static const char* const kNames[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
  return scaled(max_Bps, kNames, std::size(kNames), 1024);
}

Unit plain_unit(std::string name) { return {1, std::move(name)}; }

std::vector<double> ticks(double max, int count) {
  if (!(max > 0) || !std::isfinite(max)) return {0, 1};
  const double raw = max / std::max(count, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> out;
  for (int i = 0;; ++i) {
    double v = step * i;
    out.push_back(v);
    if (v >= max - 1e-9 * max) break;
  }
  return out;
}

std::string tick_label(double v) {
  if (v == 0) return "0";
  if (std::fabs(v - std::round(v)) < 1e-9 * std::max(1.0, std::fabs(v)))
    return fmt::format("{:.0f}", v);
  std::string s = fmt::format("{:.3f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string x_axis(const Frame& f, const std::vector<double>& t, std::string_view label) {
  std::string out;
  const double base = f.top + f.height;
  out += fmt::format(R"(<line class="axis" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)",
                     f.left, base, f.left + f.width, base);
  for (double v : t) {
    double x = f.x(v);
    out += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", x,
                       f.top, x, base);
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                       x, base + 14, tick_label(v));
  }
  out += fmt::format(R"(<text class="label" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                     f.left + f.width / 2, base + 30, escape(label));
  return out;
}

std::string y_axis(const Frame& f, const std::vector<double>& t, std::string_view label) {
  std::string out;
  out += fmt::format(R"(<line class="axis" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)",
                     f.left, f.top, f.left, f.top + f.height);
  for (double v : t) {
    double y = f.y(v);
    out += fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)",
                       f.left, y, f.left + f.width, y);
    out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)",
                       f.left - 5, y + 4, tick_label(v));
  }
  out += fmt::format(
      R"svg(<text class="label" transform="translate({:.1f},{:.1f}) rotate(-90)" text-anchor="middle">{}</text>)svg",
      f.left - 48, f.top + f.height / 2, escape(label));
  return out;
}

std::string open(double width, double height, std::string_view title) {
  return fmt::format(
      R"(<svg viewBox="0 0 {:.0f} {:.0f}" width="{:.0f}" height="{:.0f}" role="img"><title>{}</title>)",
      width, height, width, height, escape(title));
}

}  // namespace ckpt::report::svg
