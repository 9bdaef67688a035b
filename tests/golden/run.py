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
identity holds, memory components sum to their total, goodput's categories
sum to the wall time, a log's MFU is its throughput x FLOPs per token over
the peak, a fleet's hours and GPU-weighted MFU are its GPUs' sums; a case of
an area with such a check must meet at least one (CHECKED_AREAS). These checks are
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
# How many consistency checks the current document met (a case whose area
# has checks must meet at least one: see CHECKED_AREAS).
CHECKS = [0]
# Wall-clock fields: their values are replaced before comparing. Only the
# planner's search time is one (goodput's wall_s and fleet's seconds are
# the input's own figures and stay pinned).
ELAPSED = [re.compile(r'("fitting": [0-9]+,\s*"seconds": )[0-9.eE+-]+')]


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
        CHECKS[0] += 1
        total = sum(node["buckets_us"].values())
        if not close(total, node["step_us"], rel=1e-6, abs_tol=1e-3):
            errors.append(f"{path}: buckets_us sum {total} != step_us {node['step_us']}")
        if all(k in node for k in ("compute_share", "matrix_share", "matrix_efficiency", "mfu_hw")):
            product = node["compute_share"] * node["matrix_share"] * node["matrix_efficiency"]
            if not close(product, node["mfu_hw"], abs_tol=1e-9):
                errors.append(f"{path}: compute x matrix share x efficiency {product} != mfu_hw {node['mfu_hw']}")
    # Generic waterfall object: buckets in integer ns summing to step_ns.
    if "buckets_ns" in node and "step_ns" in node:
        CHECKS[0] += 1
        buckets = node["buckets_ns"]
        values = buckets.values() if isinstance(buckets, dict) else [b["ns"] for b in buckets]
        if sum(values) != node["step_ns"]:
            errors.append(f"{path}: buckets_ns sum {sum(values)} != step_ns {node['step_ns']}")
    # Predicted step (predict, plan): the waterfall and the breakdown each sum
    # to the step time; memory components sum to the per-GPU total.
    if "step_time_s" in node and "waterfall_s" in node:
        CHECKS[0] += 1
        total = sum(node["waterfall_s"].values())
        if not close(total, node["step_time_s"], rel=1e-6):
            errors.append(f"{path}: waterfall_s sum {total} != step_time_s {node['step_time_s']}")
    if "step_time_s" in node and "breakdown_s" in node:
        CHECKS[0] += 1
        total = sum(node["breakdown_s"].values())
        if not close(total, node["step_time_s"], rel=1e-6):
            errors.append(f"{path}: breakdown_s sum {total} != step_time_s {node['step_time_s']}")
    if "memory_per_gpu_bytes" in node and isinstance(node.get("memory"), dict):
        CHECKS[0] += 1
        parts = {k: v for k, v in node["memory"].items() if k != "capacity"}
        total = sum(parts.values())
        if not close(total, node["memory_per_gpu_bytes"], rel=1e-9):
            errors.append(f"{path}: memory components {total} != memory_per_gpu_bytes {node['memory_per_gpu_bytes']}")
    # Memory in integer bytes (schema 2): the components sum to total_bytes.
    parts_keys = ("weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "reserved_bytes")
    if all(k in node for k in parts_keys + ("total_bytes", "capacity_bytes")):
        CHECKS[0] += 1
        parts = [node[k] for k in parts_keys]
        if sum(parts) != node["total_bytes"]:
            errors.append(f"{path}: memory components {sum(parts)} != total_bytes {node['total_bytes']}")
    # Memory per GPU (mfu memory's per_gpu, with its layout): the components
    # sum to the total. (Its `training` block is not checked: docs/memory.md
    # says its total_bytes is the unsharded one while its activation fields
    # stay per tensor-parallel rank.)
    components = ("weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes")
    if all(k in node for k in components + ("total_bytes", "layout")) and "capacity_bytes" not in node:
        CHECKS[0] += 1
        total = sum(node[k] for k in components) + node.get("reserved_bytes", 0)
        if total != node["total_bytes"]:
            errors.append(f"{path}: memory components {total} != total_bytes {node['total_bytes']}")
    # Temporal breakdown (mfu trace, every rank): busy + idle = span, compute +
    # non-compute = busy, non-compute = the exposed comm, memcpy and memset.
    if all(k in node for k in ("span_ns", "busy_ns", "idle_ns", "compute_ns", "non_compute_ns")):
        CHECKS[0] += 1
        if node["busy_ns"] + node["idle_ns"] != node["span_ns"]:
            errors.append(f"{path}: busy_ns + idle_ns != span_ns {node['span_ns']}")
        if node["compute_ns"] + node["non_compute_ns"] != node["busy_ns"]:
            errors.append(f"{path}: compute_ns + non_compute_ns != busy_ns {node['busy_ns']}")
        exposed = sum(node.get(k, 0) for k in ("exposed_comm_ns", "exposed_memcpy_ns", "exposed_memset_ns"))
        if exposed != node["non_compute_ns"]:
            errors.append(f"{path}: exposed comm + memcpy + memset {exposed} != non_compute_ns")
    # Predicted waterfall (predict, plan): it sums to the step time.
    if "step_time_s" in node and isinstance(node.get("waterfall"), dict) and "step_ns" in node["waterfall"]:
        if abs(node["waterfall"]["step_ns"] - node["step_time_s"] * 1e9) > 1:
            errors.append(f"{path}: waterfall.step_ns {node['waterfall']['step_ns']} != step_time_s {node['step_time_s']}")
    check_goodput(node, path, errors)
    check_fleet(node, path, errors)
    for key, child in node.items():
        check_consistency(child, f"{path}.{key}", errors)


# The badput categories in the order docs/goodput.md "Exact sum" adds them.
BADPUT_ORDER = ("initialization", "data_loading", "checkpoint_save", "checkpoint_restore", "wasted_progress",
                "idle_between_attempts", "evaluation", "other")


def check_goodput(node, path, errors):
    """mfu goodput: productive + badput == wall exactly (docs/goodput.md),
    ETTR = productive / wall, effective MFU = ETTR x steady-state MFU; the
    what-if's Young interval is sqrt(2 x checkpoint time x MTBF)."""
    if all(k in node for k in ("productive_s", "badput_s")) and isinstance(node.get("wall_s"), (int, float)):
        CHECKS[0] += 1
        total = node["productive_s"]
        for k in BADPUT_ORDER:
            total += node["badput_s"][k]
        if set(node["badput_s"]) != set(BADPUT_ORDER):
            errors.append(f"{path}: badput_s categories {sorted(node['badput_s'])} are not {sorted(BADPUT_ORDER)}")
        if total != node["wall_s"]:
            errors.append(f"{path}: productive_s + badput_s = {total!r} != wall_s {node['wall_s']!r}")
        if node["wall_s"] > 0 and not close(node["ettr"], node["productive_s"] / node["wall_s"]):
            errors.append(f"{path}: ettr {node['ettr']} != productive_s / wall_s")
        if node.get("steady_state_mfu") is not None and node.get("effective_mfu") is not None:
            if not close(node["effective_mfu"], node["ettr"] * node["steady_state_mfu"]):
                errors.append(f"{path}: effective_mfu {node['effective_mfu']} != ettr x steady_state_mfu")
    if all(isinstance(node.get(k), (int, float)) for k in ("young_s", "checkpoint_time_s", "mtbf_s")):
        CHECKS[0] += 1
        young = math.sqrt(2 * node["checkpoint_time_s"] * node["mtbf_s"])
        if not close(node["young_s"], young):
            errors.append(f"{path}: young_s {node['young_s']} != sqrt(2 x checkpoint_time_s x mtbf_s) {young}")


def check_fleet(node, path, errors):
    """mfu fleet analyze: each GPU's MFU is its estimated TFLOP/s over its
    peak and its hours by band sum to its seconds x share; the fleet's hours
    are the GPUs' sum and its MFU is GPU-weighted: the sum of estimated
    FLOP/s over the sum of the peaks of the GPUs with an estimate
    (docs/fleet.md)."""
    if not (isinstance(node.get("fleet"), dict) and isinstance(node.get("gpus"), list)):
        return
    CHECKS[0] += 1
    hours, flops, peaks = 0.0, 0.0, 0.0
    for i, g in enumerate(node["gpus"]):
        where = f"{path}.gpus[{i}]"
        band_hours = sum(g["gpu_hours_by_band"].values())
        if not close(band_hours, g["seconds"] * g["gpu_share"] / 3600):
            errors.append(f"{where}: gpu_hours_by_band sum {band_hours} != seconds x gpu_share / 3600")
        hours += band_hours
        if g.get("estimated_mfu") is not None:
            if not close(g["estimated_mfu"], g["estimated_tflops"] / g["peak_tflops"]):
                errors.append(f"{where}: estimated_mfu {g['estimated_mfu']} != estimated_tflops / peak_tflops")
            flops += g["estimated_tflops"]
            peaks += g["peak_tflops"]
    fleet = node["fleet"]
    if fleet["gpus"] != len(node["gpus"]):
        errors.append(f"{path}.fleet: gpus {fleet['gpus']} != {len(node['gpus'])} GPUs listed")
    if not close(fleet["gpu_hours"], hours) or not close(sum(fleet["gpu_hours_by_band"].values()), hours):
        errors.append(f"{path}.fleet: gpu_hours {fleet['gpu_hours']} (or its bands) != the GPUs' sum {hours}")
    if fleet.get("estimated_mfu") is not None and not close(fleet["estimated_mfu"], flops / peaks):
        errors.append(f"{path}.fleet: estimated_mfu {fleet['estimated_mfu']} != GPU-weighted {flops / peaks}")


def check_log(doc, errors):
    """mfu log: every step with a throughput, and the steady state, give
    TFLOP/s = tokens/s/GPU x model FLOPs per token and MFU, Megatron MFU and
    HFU = tokens/s/GPU x that convention's FLOPs per token / the peak."""
    inputs = doc.get("inputs") if isinstance(doc, dict) else None
    if not isinstance(inputs, dict) or not inputs.get("peak_flops_per_s"):
        return
    peak = inputs["peak_flops_per_s"]
    rows = [("steady_state", doc.get("steady_state") or {})] + [
        (f"steps[{i}]", s) for i, s in enumerate(doc.get("steps", []))]
    for where, row in rows:
        tokens = row.get("tokens_per_s_per_gpu")
        if tokens is None or row.get("tflops_per_gpu") is None:
            continue
        CHECKS[0] += 1
        if not close(row["tflops_per_gpu"] * 1e12, tokens * inputs["model_flops_per_token"]):
            errors.append(f"$.{where}: tflops_per_gpu {row['tflops_per_gpu']} != tokens/s x model FLOPs per token")
        for key, per_token in (("mfu", "model_flops_per_token"), ("mfu_megatron", "megatron_flops_per_token"),
                               ("hfu", "hardware_flops_per_token")):
            if row.get(key) is not None and not close(row[key], tokens * inputs[per_token] / peak):
                errors.append(f"$.{where}: {key} {row[key]} != tokens/s x {per_token} / peak")


# The job results that carry notes (docs/design.md "One result vocabulary"):
# a top-level "notes" array, always present, of {kind, code, message}.
NOTE_AREAS = {"calc", "flops", "memory", "predict", "plan", "infer", "log", "goodput", "fleet"}
# The areas whose results have a consistency check above: each case's JSON
# must meet at least one, so a schema change that renames the checked fields
# fails instead of skipping the check.
CHECKED_AREAS = {"trace", "predict", "plan", "memory", "log", "goodput", "fleet"}
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
        CHECKS[0] = 0
        check_consistency(doc, "$", errors)
        if case.parent.name == "log":
            check_log(doc, errors)
        check_notes(case.parent.name, doc, errors)
        if case.parent.name in CHECKED_AREAS and CHECKS[0] == 0:
            errors.append("$: none of the consistency checks of its result type applies")
        failures.extend(f"{name}: {e}" for e in errors[:20])
        compare(name, json_path, out, opts.update, failures)
    for f in failures:
        print(f)
    verb = "updated" if opts.update else "passed"
    print(f"golden: {len(cases)} case(s), {len(failures)} failure(s)" + ("" if failures else f", {verb}"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
