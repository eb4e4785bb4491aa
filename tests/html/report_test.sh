#!/usr/bin/env bash
# CTest report_html_chromium: render a trace's HTML report, then check it in
# headless Chromium (tests/html/check_html.py) and keep a screenshot.
#
#   report_test.sh CKPTSCOPE TRACE.db[,TRACE.db...] REPORT.html REPORT.png PYTHON3 [--expect SELECTOR ...]
#
# Runs   CKPTSCOPE report TRACE.db... -o REPORT.html   (a comma list: one trace per node)
# then   PYTHON3 check_html.py --html REPORT.html --screenshot REPORT.png --expect ...
# The screenshot (the test's artifact) stays in place after the test, pass or fail.
set -euo pipefail

if [ "$#" -lt 5 ]; then
  echo "usage: $0 CKPTSCOPE TRACE.db REPORT.html REPORT.png PYTHON3 [--expect SELECTOR ...]" >&2
  exit 2
fi
ckptscope=$1 trace=$2 html=$3 png=$4 python=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$(dirname "$html")" "$(dirname "$png")"
rm -f "$html" "$png"  # never check (or show) a previous run's output

IFS=, read -r -a traces <<<"$trace"
for t in "${traces[@]}"; do
  [ -f "$t" ] || { echo "report_html_chromium: FAIL: no trace $t" >&2; exit 1; }
done
echo "report_html_chromium: \$ $ckptscope report ${traces[*]} -o $html"
rc=0
"$ckptscope" report "${traces[@]}" -o "$html" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "report_html_chromium: FAIL: ckptscope report exited $rc" >&2
  exit 1
fi
if [ ! -s "$html" ]; then
  echo "report_html_chromium: FAIL: ckptscope report wrote no $html" >&2
  exit 1
fi
echo "report_html_chromium: report written: $html ($(stat -c %s "$html") bytes)"

rc=0
"$python" "$here/check_html.py" --html "$html" --screenshot "$png" --timeout 60 "$@" || rc=$?
if [ -s "$png" ]; then
  echo "report_html_chromium: screenshot (test artifact): $png"
fi
exit "$rc"
