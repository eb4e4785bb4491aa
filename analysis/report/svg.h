// Small inline-SVG chart primitives for the HTML report: a unit chosen for a
// value range, "nice" ticks, axes with labelled units, escaping. Colors are
// CSS classes (report_html.cpp's style sheet) so one chart reads in light and
// dark mode alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ckpt::report::svg {

// Text for XML/HTML content and attribute values.
std::string escape(std::string_view s);

// A unit to show values of up to `max` in: the divisor and its name.
struct Unit {
  double divisor = 1;
  std::string name;  // "ms", "MiB/s", "KiB", ...
};
Unit time_unit(double max_ns);      // ns, us, ms, s
Unit bytes_unit(double max_bytes);  // B, KiB, MiB, GiB, TiB
Unit rate_unit(double max_Bps);     // B/s ... TiB/s
Unit plain_unit(std::string name);  // divisor 1

// About `count` round tick values from 0 to at least `max` (in the unit's
// terms): steps of 1, 2 or 5 times a power of ten.
std::vector<double> ticks(double max, int count);

// A number as a tick label: "0", "2.5", "40", "1200".
std::string tick_label(double v);

// A chart's plot area in pixels and its value ranges.
struct Frame {
  double left, top, width, height;
  double x_max = 1;  // in x unit
  double y_max = 1;  // in y unit
  [[nodiscard]] double x(double v) const { return left + (x_max > 0 ? v / x_max : 0) * width; }
  [[nodiscard]] double y(double v) const {
    return top + height - (y_max > 0 ? v / y_max : 0) * height;
  }
};

// The x axis under the frame, with ticks, grid lines and "label (unit)".
std::string x_axis(const Frame& f, const std::vector<double>& ticks, std::string_view label);
// The y axis left of the frame, likewise.
std::string y_axis(const Frame& f, const std::vector<double>& ticks, std::string_view label);

// The start of a self-contained page, up to and including the viewport and
// color-scheme metas: a Content-Security-Policy that allows no request and no
// script (inline style and data: images only). The report's and the fleet
// pages' shared head; the caller adds <title> and <style>.
std::string page_preamble();

// <svg> opening tag with a viewBox, role and title (for screen readers).
std::string open(double width, double height, std::string_view title);

}  // namespace ckpt::report::svg
