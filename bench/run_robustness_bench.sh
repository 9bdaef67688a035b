#!/usr/bin/env bash
# Trace input bounds (issue #12): time and peak RSS (/usr/bin/time -v) of
# `mfu trace` on generated adversarial traces, at two sizes each so that
# linearity shows:
#   * gzip with gigabytes of whitespace inside traceEvents (default 5 and 10 GB);
#   * a plain trace of millions of events (default 15 M and 30 M, ~1.3 and
#     2.6 GB), parsed fully (--max-events 0) and then under the default
#     --max-events cap of 8 M events (refused with exit 1 in bounded memory).
# The traces are generated at bench time by bench/gen_big_traces.py into
# $TMPDIR (default /tmp; check `df -h /tmp`: the event traces need ~4 GB) and
# removed on exit; nothing is committed.
#
#   bench/run_robustness_bench.sh [WS_GB_SMALL WS_GB_LARGE EV_M_SMALL EV_M_LARGE]
set -euo pipefail
cd "$(dirname "$0")/.."

ws_small=${1:-5}
ws_large=${2:-10}
ev_small=${3:-15}
ev_large=${4:-30}

build=${MFU_BUILD_DIR:-build/release}
mfu=$build/mfu
if [ ! -x "$mfu" ]; then
  echo "run_robustness_bench: $mfu not built (cmake --build --preset release --target mfu_main)" >&2
  exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mfu_robustness.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Runs `mfu trace ARGS`, prints: label, exit code, wall s, peak RSS MiB.
measure() {
  local label=$1
  shift
  local rc=0
  /usr/bin/time -v "$mfu" trace --quiet "$@" >"$tmp/out" 2>"$tmp/time" || rc=$?
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$tmp/time")
  printf '%-34s exit %d  wall %-9s  peak RSS %6s MiB  %s\n' "$label" "$rc" "$wall" "$rss" \
    "$(grep -m1 '^mfu:' "$tmp/time" || true)"
}

for gb in "$ws_small" "$ws_large"; do
  python3 bench/gen_big_traces.py whitespace "$tmp/ws.json.gz" "$gb"
  measure "whitespace ${gb} GB (gzip $(du -h "$tmp/ws.json.gz" | cut -f1))" "$tmp/ws.json.gz" --threads 1
  rm -f "$tmp/ws.json.gz"
done
for m in "$ev_small" "$ev_large"; do
  python3 bench/gen_big_traces.py events "$tmp/ev.json" "$m"
  size=$(du -h "$tmp/ev.json" | cut -f1)
  measure "${m}M events (${size})" "$tmp/ev.json" --threads 2 --max-events 0
  measure "${m}M events, default cap (8M)" "$tmp/ev.json" --threads 2
  rm -f "$tmp/ev.json"
done
uptime
