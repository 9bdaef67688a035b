#!/usr/bin/env python3
"""Golden tests of the mfu binary (bloaty's lit goldens, perfetto's diff tests).

Each case is a folder tests/golden/<area>/<case>/ holding
  cmd            the arguments after `mfu`, one shell line, run from the
                 source root (inputs are paths under tests/, or files in the
                 case folder named as {case}/file)
  expected.txt   stdout of `mfu <cmd>`
  expected.json  stdout of `mfu <cmd> --json` (absent when the command has no
                 JSON output)
Every JSON output must also pass the consistency checks of its result types
(check_consistency below): waterfall buckets sum to the step, the waterfall
identity holds, memory components sum to their total. These checks are
independent of the recorded bytes, so a golden regenerated with a wrong sum
still fails. The job results (calc, flops, memory, predict, plan, infer) must
also carry a top-level "notes" array of {kind, code, message}.

  run.py --mfu BIN [--area AREA] [case-substring...]     compare
  run.py --mfu BIN --update [...]                        rewrite expected.*
                                                          (review the diff)
"""
import argparse
import difflib
import json
import math
import pathlib
import re
import shlex
import os
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
REL = 1e-6
# Wall-clock fields: their values are replaced before comparing.
ELAPSED = [re.compile(r'("(?:seconds|elapsed_s|wall_s)": )[0-9.eE+-]+')]


def normalize(text):
    for pattern in ELAPSED:
        text = pattern.sub(r'\1"<elapsed>"', text)
    return text


def close(a, b, rel=REL, abs_tol=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


def check_consistency(node, path, errors):
    """Walks a JSON document and applies the invariant of each result type
    whose fields it recognises."""
    if isinstance(node, list):
        for i, child in enumerate(node):
            check_consistency(child, f"{path}[{i}]", errors)
        return
    if not isinstance(node, dict):
        return
    # Measured waterfall (mfu trace): buckets in us sum to the step; the
    # identity mfu = compute share x matrix share x matrix efficiency.
    if "buckets_us" in node and "step_us" in node:
        total = sum(node["buckets_us"].values())
        if not close(total, node["step_us"], rel=1e-6, abs_tol=1e-3):
            errors.append(f"{path}: buckets_us sum {total} != step_us {node['step_us']}")
        if all(k in node for k in ("compute_share", "matrix_share", "matrix_efficiency", "mfu_hw")):
            product = node["compute_share"] * node["matrix_share"] * node["matrix_efficiency"]
            if not close(product, node["mfu_hw"], abs_tol=1e-9):
                errors.append(f"{path}: compute x matrix share x efficiency {product} != mfu_hw {node['mfu_hw']}")
    # Generic waterfall object: buckets in integer ns summing to step_ns.
    if "buckets_ns" in node and "step_ns" in node:
        buckets = node["buckets_ns"]
        values = buckets.values() if isinstance(buckets, dict) else [b["ns"] for b in buckets]
        if sum(values) != node["step_ns"]:
            errors.append(f"{path}: buckets_ns sum {sum(values)} != step_ns {node['step_ns']}")
    # Predicted step (predict, plan): the waterfall and the breakdown each sum
    # to the step time; memory components sum to the per-GPU total.
    if "step_time_s" in node and "waterfall_s" in node:
        total = sum(node["waterfall_s"].values())
        if not close(total, node["step_time_s"], rel=1e-6):
            errors.append(f"{path}: waterfall_s sum {total} != step_time_s {node['step_time_s']}")
    if "step_time_s" in node and "breakdown_s" in node:
        total = sum(node["breakdown_s"].values())
        if not close(total, node["step_time_s"], rel=1e-6):
            errors.append(f"{path}: breakdown_s sum {total} != step_time_s {node['step_time_s']}")
    if "memory_per_gpu_bytes" in node and isinstance(node.get("memory"), dict):
        parts = {k: v for k, v in node["memory"].items() if k != "capacity"}
        total = sum(parts.values())
        if not close(total, node["memory_per_gpu_bytes"], rel=1e-9):
            errors.append(f"{path}: memory components {total} != memory_per_gpu_bytes {node['memory_per_gpu_bytes']}")
    # Memory in integer bytes (schema 2): the components sum to total_bytes.
    parts_keys = ("weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "reserved_bytes")
    if all(k in node for k in parts_keys + ("total_bytes", "capacity_bytes")):
        parts = [node[k] for k in parts_keys]
        if sum(parts) != node["total_bytes"]:
            errors.append(f"{path}: memory components {sum(parts)} != total_bytes {node['total_bytes']}")
    # Predicted waterfall (predict, plan): it sums to the step time.
    if "step_time_s" in node and isinstance(node.get("waterfall"), dict) and "step_ns" in node["waterfall"]:
        if abs(node["waterfall"]["step_ns"] - node["step_time_s"] * 1e9) > 1:
            errors.append(f"{path}: waterfall.step_ns {node['waterfall']['step_ns']} != step_time_s {node['step_time_s']}")
    for key, child in node.items():
        check_consistency(child, f"{path}.{key}", errors)


# The job results that carry notes (docs/design.md "One result vocabulary"):
# a top-level "notes" array, always present, of {kind, code, message}.
NOTE_AREAS = {"calc", "flops", "memory", "predict", "plan", "infer"}
NOTE_KINDS = {"assumption", "warning"}


def check_notes(area, doc, errors):
    if area not in NOTE_AREAS:
        return
    notes = doc.get("notes") if isinstance(doc, dict) else None
    if not isinstance(notes, list):
        errors.append("$: no \"notes\" array (every job result has one, empty when nothing is assumed)")
        return
    for i, note in enumerate(notes):
        if not isinstance(note, dict) or set(note) != {"kind", "code", "message"}:
            errors.append(f"$.notes[{i}]: not an object of kind, code, message")
        elif note["kind"] not in NOTE_KINDS or not note["code"] or not note["message"]:
            errors.append(f"$.notes[{i}]: kind {note['kind']!r} (assumption or warning), empty code or message")


def run(mfu, args):
    # Piped output is 100 columns wide unless COLUMNS says otherwise: the
    # goldens are the piped layout, whatever the caller's terminal.
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([mfu] + args, cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def case_args(case):
    line = (case / "cmd").read_text().strip()
    return [a.replace("{case}", str(case.relative_to(ROOT))) for a in shlex.split(line)]


def compare(name, expected_path, actual, update, failures):
    actual = normalize(actual)
    if update:
        expected_path.write_text(actual)
        return
    if not expected_path.exists():
        failures.append(f"{name}: {expected_path.name} missing (run with --update)")
        return
    expected = expected_path.read_text()
    if expected != actual:
        diff = "".join(list(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                                 f"{expected_path.relative_to(ROOT)}", "actual"))[:60])
        failures.append(f"{name}: output differs from {expected_path.name}\n{diff}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mfu", required=True)
    parser.add_argument("--area")
    parser.add_argument("--update", action="store_true")
    parser.add_argument("filters", nargs="*")
    opts = parser.parse_args()
    cases = sorted(p.parent for p in GOLDEN.glob("*/*/cmd"))
    if opts.area:
        cases = [c for c in cases if c.parent.name == opts.area]
    if opts.filters:
        cases = [c for c in cases if any(f in str(c.relative_to(GOLDEN)) for f in opts.filters)]
    if not cases:
        print("golden: no cases matched", file=sys.stderr)
        return 1
    failures = []
    for case in cases:
        name = str(case.relative_to(GOLDEN))
        args = case_args(case)
        rc, out, err = run(opts.mfu, args)
        if rc != 0:
            failures.append(f"{name}: mfu {' '.join(args)} exited {rc}: {err.strip()}")
            continue
        compare(name, case / "expected.txt", out, opts.update, failures)
        json_path = case / "expected.json"
        if (case / "no-json").exists():
            continue
        rc, out, err = run(opts.mfu, args + ["--json"])
        if rc != 0:
            failures.append(f"{name}: mfu {' '.join(args)} --json exited {rc}: {err.strip()}")
            continue
        try:
            doc = json.loads(out)
        except json.JSONDecodeError as e:
            failures.append(f"{name}: --json output is not JSON: {e}")
            continue
        errors = []
        check_consistency(doc, "$", errors)
        check_notes(case.parent.name, doc, errors)
        failures.extend(f"{name}: {e}" for e in errors[:20])
        compare(name, json_path, out, opts.update, failures)
    for f in failures:
        print(f)
    verb = "updated" if opts.update else "passed"
    print(f"golden: {len(cases)} case(s), {len(failures)} failure(s)" + ("" if failures else f", {verb}"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
