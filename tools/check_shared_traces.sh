#!/usr/bin/env bash
# CI step that uses ../shared directly (not part of the self-contained test
# suite): parses every Kineto trace (*.json, *.json.gz) under
# ../shared/traces and fails if any file does not parse or has an
# error-severity diagnostic. Skipped, as they are not Kineto traces: PyTorch
# Execution Traces (*_et.json*, dlrm_eg_*.json), TraceLens'
# execution_details.json and the Chakra protobufs (chakra/).
# Prints one line per file: events, MB of JSON, MB/s, diagnostics.
#
#   tools/check_shared_traces.sh [PARSER] [TRACES_DIR]
#
# PARSER is the `mfu` binary (runs `mfu trace --json --strict`: parse plus
# analysis) or bench's trace_parse_main (parse only); default
# build/release/mfu. TRACES_DIR defaults to ../shared/traces.
set -euo pipefail
cd "$(dirname "$0")/.."
parser=$(realpath "${1:-build/release/mfu}")
traces=${2:-../shared/traces}
threads=${MFU_TRACE_THREADS:-2}

if [ ! -x "$parser" ]; then
  echo "check_shared_traces: $parser not found: build the release preset first" >&2
  exit 1
fi
if [ ! -d "$traces" ]; then
  echo "check_shared_traces: $traces is missing: CI expects ../shared beside the clone" >&2
  exit 1
fi

cd "$traces"
mapfile -t files < <(find . \( -name '*.json' -o -name '*.json.gz' \) -type f \
  -not -path './chakra/*' -not -name '*_et.json' -not -name '*_et.json.gz' \
  -not -name 'dlrm_eg_*.json' -not -name 'execution_details.json' | sed 's|^\./||' | LC_ALL=C sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "check_shared_traces: no trace files under $traces" >&2
  exit 1
fi

# `mfu trace --json` on one file (stdin) -> the line trace_parse_main prints.
read -r -d '' mfu_line_py <<'PY' || true
import json, sys
path, seconds, rc, err = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4].strip()
try:
    rank = json.loads(sys.stdin.read())["ranks"][0]
except Exception:
    print(f"FAIL {path}: exit code {rc}: {err}")
    sys.exit(1)
severity = {"error": 0, "data_loss": 0, "info": 0}
for d in rank["diagnostics"]:
    severity[d["severity"]] += d["count"]
names = " ".join(f"{d['name']}={d['count']}" for d in rank["diagnostics"])
mb = rank["input_bytes"] / 1e6
ok = rc == 0 and rank["error_diagnostics"] == 0
print(f"{'ok  ' if ok else 'FAIL'} {path}: {rank['events']} events, {mb:.1f} MB, {seconds:.3f} s, "
      f"{mb / seconds:.1f} MB/s (parse + analysis), errors={severity['error']} "
      f"data_loss={severity['data_loss']} [{names}]")
if not ok and err:
    print("     " + err)
sys.exit(0 if ok else 1)
PY
mfu_line() { python3 -c "$mfu_line_py" "$@"; }

err=$(mktemp)
trap 'rm -f "$err"' EXIT
failures=0
for f in "${files[@]}"; do
  # One process per file: a crash names its file and does not hide the rest.
  if [ "$(basename "$parser")" = mfu ]; then
    start=$(date +%s.%N)
    rc=0
    out=$("$parser" trace --json --strict --threads "$threads" "$f" 2>"$err") || rc=$?
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    mfu_line "$f" "$seconds" "$rc" "$(cat "$err")" <<<"$out" || failures=$((failures + 1))
  elif ! "$parser" --strict --threads "$threads" "$f"; then
    failures=$((failures + 1))
  fi
done
echo "check_shared_traces: ${#files[@]} files, $failures failed"
[ "$failures" -eq 0 ]
