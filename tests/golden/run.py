#!/usr/bin/env python3
"""Golden tests of the mfu binary (bloaty's lit goldens, perfetto's diff tests).

Each case is a folder tests/golden/<area>/<case>/ holding
  cmd            the arguments after `mfu`, one shell line, run from the
                 source root (inputs are paths under tests/, or files in the
                 case folder named as {case}/file)
  expected.txt   stdout of `mfu <cmd>`
  expected.json  stdout of `mfu <cmd> --json` (absent when the command has no
                 JSON output)
  expected.csv   stdout of `mfu <cmd> --output-format csv` (recorded for the
                 CSV_AREAS; checked against the JSON, flattened)
Every JSON output must also pass the consistency checks of its result types
(check_consistency below): a waterfall's buckets sum to its step, its factors
are its buckets' ratios and mfu_hw = compute share x matrix share x matrix
efficiency; a utilization's mfu and hfu are its FLOP/s over the peak;
parameter groups sum to the total; flops' components sum to the forward
count (training = 3 x forward, hardware = training + recompute); calc's
FLOP/s are its tokens/s per GPU x FLOPs per token, with hfu >= mfu; infer's
points match their utilization and waterfall, its speculative, measured
and workload-mix figures their formulas; calibrate's summaries are those of
its runs, overall pooling the sources; kernels' groups are the statistics of
their modelled figures; hw lists positive peaks and no name twice; memory
components sum to their total; goodput's categories sum to the wall time; a
log's MFU is its throughput x FLOPs per token over the peak; a fleet's hours
and GPU-weighted MFU are its GPUs' sums. A case of an area with such checks
must meet at least one (CHECKED_AREAS). These checks are independent of the
recorded bytes, so a golden regenerated with a wrong sum still fails. The job
results (NOTE_AREAS) must also carry a top-level "notes" array of {kind,
code, message}.

  run.py --mfu BIN [--area AREA] [case-substring...]     compare
  run.py --mfu BIN --update [...]                        rewrite expected.*
                                                          (review the diff)
"""
import argparse
import csv
import io
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
# planner's search time is one (goodput's wall_s and fleet's covered_s are
# the input's own figures and stay pinned).
ELAPSED = [re.compile(r'("elapsed_s": )[0-9.eE+-]+')]


def normalize(text):
    for pattern in ELAPSED:
        text = pattern.sub(r'\1"<elapsed>"', text)
    return text


def close(a, b, rel=REL, abs_tol=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)


# Tolerance of an identity between figures a document prints in full. The
# JSON holds each double in its shortest round-trip form (nlohmann::json), so
# the parsed values are the program's own doubles, and the two sides of an
# identity differ only by the rounding of the few operations on each side
# (about 1e-16 relative each; the longest sum here, a calibration's 253
# runs, stays below 1e-13). 1e-12 is far above that and far below any
# change that alters a digit the text output prints.
EXACT = 1e-12


def exact(a, b):
    return close(a, b, rel=EXACT, abs_tol=0)


def ratio(num, den):
    """num / den, 0 when den is 0 (the library's Ratio)."""
    return num / den if den > 0 else 0.0


def check_consistency(node, path, errors):
    """Walks a JSON document and applies the invariant of each result type
    whose fields it recognises."""
    if isinstance(node, list):
        for i, child in enumerate(node):
            check_consistency(child, f"{path}[{i}]", errors)
        return
    if not isinstance(node, dict):
        return
    # Waterfall (mfu/result.h, measured or predicted): buckets in integer ns
    # summing exactly to step_ns, and its factors.
    if "buckets_ns" in node and "step_ns" in node:
        CHECKS[0] += 1
        check_waterfall(node, path, errors)
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
    check_utilization(node, path, errors)
    check_params(node, path, errors)
    check_flops(node, path, errors)
    check_calc(node, path, errors)
    check_infer(node, path, errors)
    check_calibrate(node, path, errors)
    check_kernels(node, path, errors)
    check_accelerators(node, path, errors)
    check_goodput(node, path, errors)
    check_fleet(node, path, errors)
    for key, child in node.items():
        check_consistency(child, f"{path}.{key}", errors)


# A waterfall's compute buckets (every bucket from non_matrix_kernels on)
# and matrix buckets (mfu/result.h, Waterfall::SetFactorsFromBuckets).
COMPUTE_BUCKETS = ("non_matrix_kernels", "matrix_unknown_flops", "matrix_below_peak", "matrix_at_peak")
MATRIX_BUCKETS = ("matrix_unknown_flops", "matrix_below_peak", "matrix_at_peak")
FACTORS = ("compute_share", "matrix_share", "matrix_efficiency", "mfu_hw")


def check_waterfall(node, path, errors):
    """A waterfall (mfu/result.h `Waterfall`; mfu trace, predict, plan,
    infer): the buckets, integer ns, sum exactly to step_ns; each factor is
    its ratio of the buckets (compute share = compute / step, matrix share =
    matrix / compute, matrix efficiency = at peak / matrix, mfu_hw = at peak
    / step: measured and predicted waterfalls both take them from the integer
    buckets); and the identity mfu_hw = compute share x matrix share x matrix
    efficiency. A measured step also spans end_ns - start_ns, and with a
    model its utilization's FLOP/s are its model and hardware FLOPs over the
    step."""
    buckets = node["buckets_ns"]
    values = buckets.values() if isinstance(buckets, dict) else [b["ns"] for b in buckets]
    step = node["step_ns"]
    if sum(values) != step:
        errors.append(f"{path}: buckets_ns sum {sum(values)} != step_ns {step}")
    if "start_ns" in node and "end_ns" in node and node["end_ns"] - node["start_ns"] != step:
        errors.append(f"{path}: step_ns {step} != end_ns - start_ns {node['end_ns'] - node['start_ns']}")
    if not isinstance(buckets, dict) or not all(k in node for k in FACTORS):
        return
    compute = sum(buckets[k] for k in COMPUTE_BUCKETS)
    matrix = sum(buckets[k] for k in MATRIX_BUCKETS)
    at_peak = buckets["matrix_at_peak"]
    derived = {"compute_share": ratio(compute, step), "matrix_share": ratio(matrix, compute),
               "matrix_efficiency": ratio(at_peak, matrix), "mfu_hw": ratio(at_peak, step)}
    for key, value in derived.items():
        if not exact(node[key], value):
            errors.append(f"{path}: {key} {node[key]!r} != its buckets' ratio {value!r}")
    product = node["compute_share"] * node["matrix_share"] * node["matrix_efficiency"]
    if not exact(product, node["mfu_hw"]):
        errors.append(f"{path}: compute_share x matrix_share x matrix_efficiency {product!r} != mfu_hw "
                      f"{node['mfu_hw']!r}")
    u = node.get("utilization")
    if isinstance(u, dict) and isinstance(node.get("model_flops"), (int, float)) and step > 0:
        seconds = step * 1e-9
        for key, flops in (("model_flops_per_s", "model_flops"), ("hardware_flops_per_s", "hardware_flops")):
            if not exact(u[key], node[flops] / seconds):
                errors.append(f"{path}.utilization: {key} {u[key]!r} != {flops} / step")
        if node["model_flops"] > 0 and not exact(node["executed_over_model"],
                                                 node["executed_flops"] / node["model_flops"]):
            errors.append(f"{path}: executed_over_model != executed_flops / model_flops")


def check_utilization(node, path, errors):
    """A Utilization (mfu/result.h; calc, predict, plan, infer, trace): mfu =
    model FLOP/s / dense peak FLOP/s and hfu = hardware FLOP/s / the same
    peak, per GPU (0 without a peak)."""
    keys = ("model_flops_per_s", "hardware_flops_per_s", "peak_flops_per_s", "mfu", "hfu")
    if not all(isinstance(node.get(k), (int, float)) for k in keys):
        return
    CHECKS[0] += 1
    for key, num in (("mfu", "model_flops_per_s"), ("hfu", "hardware_flops_per_s")):
        if not exact(node[key], ratio(node[num], node["peak_flops_per_s"])):
            errors.append(f"{path}: {key} {node[key]!r} != {num} / peak_flops_per_s")


# The parameter groups whose sum is ParamCounts::total (mfu/model.h; the
# final norm is in norms, MTP modules are not in the total).
PARAM_GROUPS = ("attention", "norms", "mlp", "routed_experts", "shared_experts", "router", "dit_embedders",
                "embedding", "position_embedding", "lm_head")


def check_params(node, path, errors):
    """Parameter counts (mfu/model.h ParamCounts; flops, memory, models): the
    groups sum to the total; non_embedding = total - input and position
    embeddings, active_non_embedding = active - the same; active <= total
    (only the top-k routed experts are active). A models list entry has only
    active and total."""
    params = node.get("params")
    if not isinstance(params, dict) or not all(isinstance(params.get(k), int) for k in ("active", "total")):
        return
    CHECKS[0] += 1
    where = f"{path}.params"
    if params["active"] > params["total"]:
        errors.append(f"{where}: active {params['active']} > total {params['total']}")
    if not all(k in params for k in PARAM_GROUPS + ("non_embedding", "active_non_embedding")):
        return
    total = sum(params[k] for k in PARAM_GROUPS)
    if total != params["total"]:
        errors.append(f"{where}: the groups sum to {total} != total {params['total']}")
    embeddings = params["embedding"] + params["position_embedding"]
    for key, whole in (("non_embedding", "total"), ("active_non_embedding", "active")):
        if params[key] != params[whole] - embeddings:
            errors.append(f"{where}: {key} {params[key]} != {whole} - embedding - position_embedding")


def check_flops(node, path, errors):
    """mfu flops (mfu/flops.h): the forward components sum to the forward
    FLOPs per token; training = 3 x forward (forward + backward); hardware =
    training + recompute; per step = per token x batch x seq_len; with
    --convention all, the chosen convention's row is the main count and no
    row's hardware count is below its training count. Inference: the
    components sum to the FLOPs per token, and the total is that x the
    tokens (batch x the prompt for a prefill, batch for a decode step)."""
    per_token = node.get("flops_per_token")
    if isinstance(per_token, dict) and isinstance(per_token.get("components_forward"), dict):
        CHECKS[0] += 1
        where = f"{path}.flops_per_token"
        components = sum(per_token["components_forward"].values())
        if not exact(components, per_token["forward"]):
            errors.append(f"{where}: components_forward sum {components!r} != forward {per_token['forward']!r}")
        if not exact(per_token["training"], 3 * per_token["forward"]):
            errors.append(f"{where}: training {per_token['training']!r} != 3 x forward")
        recompute = per_token["recompute"]
        if recompute < 0 or not exact(per_token["hardware"], per_token["training"] + recompute):
            errors.append(f"{where}: hardware {per_token['hardware']!r} != training + recompute (>= 0)")
        tokens = node["batch"] * node["seq_len"]
        for key in ("training", "hardware"):
            if not exact(node["flops_per_step"][key], per_token[key] * tokens):
                errors.append(f"{path}.flops_per_step: {key} != per token x batch x seq_len {tokens}")
        for i, row in enumerate(node.get("conventions", [])):
            if "training" not in row:
                continue
            if row["hardware"] < row["training"]:
                errors.append(f"{path}.conventions[{i}]: hardware {row['hardware']!r} < training")
            main = row["name"] == node["convention"]["name"]
            if main and not all(exact(row[k], per_token[k]) for k in ("training", "hardware")):
                errors.append(f"{path}.conventions[{i}]: the {row['name']} row differs from flops_per_token")
    inference = node.get("inference")
    if isinstance(inference, dict) and isinstance(inference.get("components_forward"), dict):
        CHECKS[0] += 1
        where = f"{path}.inference"
        components = sum(inference["components_forward"].values())
        if not exact(components, inference["flops_per_token"]):
            errors.append(f"{where}: components_forward sum {components!r} != flops_per_token")
        tokens = node["batch"] * (node["seq_len"] if inference["mode"] == "prefill" else 1)
        if inference["tokens"] != tokens:
            errors.append(f"{where}: tokens {inference['tokens']} != {tokens} (batch x new tokens per sequence)")
        if not exact(inference["flops_total"], inference["flops_per_token"] * inference["tokens"]):
            errors.append(f"{where}: flops_total {inference['flops_total']!r} != flops_per_token x tokens")


def check_calc(node, path, errors):
    """mfu calc: tokens/s per GPU = tokens/s / GPUs; model (hardware) FLOP/s
    per GPU = tokens/s per GPU x model (hardware) FLOPs per token; the mfu and
    hfu it reports are its utilization's; recomputation only adds, so
    hardware FLOPs per token >= model FLOPs per token and hfu >= mfu."""
    keys = ("tokens_per_s", "tokens_per_s_per_gpu", "gpus", "model_flops_per_token", "hardware_flops_per_token",
            "mfu", "hfu")
    u = node.get("utilization")
    if not isinstance(u, dict) or not all(isinstance(node.get(k), (int, float)) for k in keys):
        return
    CHECKS[0] += 1
    per_gpu = node["tokens_per_s_per_gpu"]
    if not exact(per_gpu, node["tokens_per_s"] / node["gpus"]):
        errors.append(f"{path}: tokens_per_s_per_gpu {per_gpu!r} != tokens_per_s / gpus")
    for rate, per_token in (("model_flops_per_s", "model_flops_per_token"),
                            ("hardware_flops_per_s", "hardware_flops_per_token")):
        if not exact(u[rate], per_gpu * node[per_token]):
            errors.append(f"{path}.utilization: {rate} {u[rate]!r} != tokens_per_s_per_gpu x {per_token}")
    for key in ("mfu", "hfu"):
        if node[key] != u[key]:
            errors.append(f"{path}: {key} {node[key]!r} != utilization.{key} {u[key]!r}")
    if node["hardware_flops_per_token"] < node["model_flops_per_token"] or node["hfu"] < node["mfu"]:
        errors.append(f"{path}: hardware FLOPs (hfu {node['hfu']!r}) below model FLOPs (mfu {node['mfu']!r})")


def check_infer_point(point, seconds, where, errors):
    """One decode-sweep or prefill point of mfu infer (see check_infer)."""
    u, w = point["utilization"], point["waterfall"]
    if not exact(point["mfu"], u["mfu"]):
        errors.append(f"{where}: mfu {point['mfu']!r} != utilization.mfu {u['mfu']!r}")
    if abs(w["step_ns"] - seconds * 1e9) > 1:
        errors.append(f"{where}: waterfall.step_ns {w['step_ns']} != the step's {seconds!r} s")
    at_peak = u["hfu"] * seconds * 1e9
    if abs(w["buckets_ns"]["matrix_at_peak"] - at_peak) > 1:
        errors.append(f"{where}: matrix_at_peak {w['buckets_ns']['matrix_at_peak']} ns != hfu x step {at_peak:.1f} ns")


def check_infer(node, path, errors):
    """mfu infer (docs/infer.md): each decode-sweep and prefill point reports
    its utilization's MFU, its waterfall spans its time (tpot_s, time_s) to
    the nanosecond, and its matrix_at_peak bucket, the executed FLOPs at the
    dense peak, is hfu x that time to the bucket's rounding (< 1 ns); a decode
    point serves pp x batch tokens per tpot_s. Speculative decoding emits
    (1 - a^(k+1)) / (1 - a) tokens per step_s. A measured rate scales the
    workload's MFU and MBU by measured / predicted tokens/s; a measured TTFT
    (TPOT) gives the prefill of input_len (the decode step at batch / pp)
    the MFU and MBU of its predicted time over the measured one. A workload
    mix's pairs take requests x output_len / tokens/s each, the mix their
    sum, with the time-weighted mean MFU and MBU."""
    layout = node.get("layout")
    sweep, prefill = node.get("decode_sweep"), node.get("prefill")
    if not isinstance(layout, dict) or not any(k in node for k in ("decode_sweep", "prefill", "workload")):
        return
    CHECKS[0] += 1
    for i, point in enumerate(sweep or []):
        where = f"{path}.decode_sweep[{i}]"
        check_infer_point(point, point["tpot_s"], where, errors)
        if not exact(point["output_tokens_per_s"], layout["pp"] * point["batch"] / point["tpot_s"]):
            errors.append(f"{where}: output_tokens_per_s {point['output_tokens_per_s']!r} != pp x batch / tpot_s")
    for i, point in enumerate(prefill or []):
        check_infer_point(point, point["time_s"], f"{path}.prefill[{i}]", errors)
    spec = node.get("speculative")
    if isinstance(spec, dict):
        a, k = spec["acceptance"], spec["draft_tokens"]
        if not exact(spec["tokens_per_step"], (1 - a ** (k + 1)) / (1 - a)):
            errors.append(f"{path}.speculative: tokens_per_step {spec['tokens_per_step']!r} != (1 - a^(k+1)) / (1 - a)")
        if not exact(spec["tpot_s"], spec["step_s"] / spec["tokens_per_step"]):
            errors.append(f"{path}.speculative: tpot_s {spec['tpot_s']!r} != step_s / tokens_per_step")
    measured = node.get("measured")
    if isinstance(measured, dict):
        scale = measured["output_tokens_per_s"] / node["output_tokens_per_s"]
        for key in ("mfu", "mbu"):
            if not exact(measured[key], node[key] * scale):
                errors.append(f"{path}.measured: {key} {measured[key]!r} != {key} x measured / predicted tokens/s")
    steps = (("measured_ttft", "time_s", [p for p in prefill or [] if p["prompt_len"] == node.get("input_len")]),
             ("measured_tpot", "tpot_s", [p for p in sweep or [] if p["batch"] * layout["pp"] == node.get("batch")]))
    for key, seconds, points in steps:
        if not isinstance(node.get(key), dict) or not points:
            continue
        m, p = node[key], points[-1]
        if m["predicted_s"] != p[seconds]:
            errors.append(f"{path}.{key}: predicted_s {m['predicted_s']!r} != the predicted step's {p[seconds]!r}")
        for util in ("mfu", "mbu") if "mbu" in p else ("mfu",):
            if not exact(m[util] * m["measured_s"], p[util] * m["predicted_s"]):
                errors.append(f"{path}.{key}: {util} {m[util]!r} != the step's x predicted_s / measured_s")
    workload = node.get("workload")
    if isinstance(workload, dict) and isinstance(workload.get("mix"), dict):
        mix, pairs = workload["mix"], workload["pairs"]
        times = [q["requests"] * q["output_len"] / q["output_tokens_per_s"] for q in pairs]
        total = sum(times)
        tokens = sum(q["requests"] * q["output_len"] for q in pairs)
        if not exact(mix["time_s"], total) or not exact(mix["output_tokens_per_s"], tokens / mix["time_s"]):
            errors.append(f"{path}.workload.mix: time_s {mix['time_s']!r} or output_tokens_per_s != the pairs' "
                          f"{total!r} s, {tokens} tokens")
        for key in ("mfu", "mbu"):
            mean = sum(t * q[key] for t, q in zip(times, pairs)) / total
            if not exact(mix[key], mean):
                errors.append(f"{path}.workload.mix: {key} {mix[key]!r} != the pairs' time-weighted {mean!r}")


def spearman(a, b):
    """Spearman's rank correlation with mid-ranks for ties, None below 3
    values or without spread (src/calibrate SpearmanCorrelation; JSON null)."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r, i = [0.0] * len(v), 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return r
    if len(a) < 3:
        return None
    ra, rb, mean = ranks(a), ranks(b), (len(a) + 1) / 2
    cov = sum((x - mean) * (y - mean) for x, y in zip(ra, rb))
    va, vb = sum((x - mean) ** 2 for x in ra), sum((y - mean) ** 2 for y in rb)
    return cov / math.sqrt(va * vb) if va > 0 and vb > 0 else None


def accuracy(runs):
    """A SourceAccuracy (mfu/calibrate.h) recomputed from run records."""
    done = [r for r in runs if not r["problem"]]
    n = len(done)
    predicted = [r["predicted_tokens_per_s_per_gpu"] for r in done]
    measured = [r["measured_tokens_per_s_per_gpu"] for r in done]
    return {"runs": n, "not_predicted": len(runs) - n,
            "mape": sum(r["ape"] for r in done) / n if n else 0.0,
            "max_ape": max((r["ape"] for r in done), default=0.0),
            "bias": sum(p / m - 1 for p, m in zip(predicted, measured)) / n if n else 0.0,
            "spearman": spearman(predicted, measured)}


def check_accuracy_pool(report, where, errors):
    """An AccuracyReport: overall pools every source's runs, so its counts
    are the sources' sums, its MAPE and bias their run-weighted means and its
    max APE their maximum."""
    overall, sources = report["overall"], report["by_source"]
    for key in ("runs", "not_predicted"):
        if overall[key] != sum(s[key] for s in sources):
            errors.append(f"{where}.overall: {key} {overall[key]} != the sources' sum")
    if overall["runs"] > 0:
        for key in ("mape", "bias"):
            mean = sum(s["runs"] * s[key] for s in sources if s["runs"]) / overall["runs"]
            if not exact(overall[key], mean):
                errors.append(f"{where}.overall: {key} {overall[key]!r} != the sources' run-weighted {mean!r}")
        if overall["max_ape"] != max(s["max_ape"] for s in sources):
            errors.append(f"{where}.overall: max_ape {overall['max_ape']!r} != the sources' maximum")


def check_calibrate(node, path, errors):
    """mfu calibrate (mfu/calibrate.h): a predicted run's ape = |predicted /
    measured - 1|; `after` (the fitted table, whose predictions `runs` lists)
    is the summary of `runs`: by source in first-appearance order and
    overall, each with its runs, runs not predicted, MAPE, max APE, bias
    (mean of predicted / measured - 1) and Spearman correlation; in `before`
    and `after` overall pools the sources (check_accuracy_pool)."""
    runs, after = node.get("runs"), node.get("after")
    if not (isinstance(runs, list) and isinstance(after, dict) and isinstance(node.get("before"), dict)):
        return
    CHECKS[0] += 1
    for i, r in enumerate(runs):
        if not r["problem"] and not exact(r["ape"], abs(r["predicted_tokens_per_s_per_gpu"] /
                                                        r["measured_tokens_per_s_per_gpu"] - 1)):
            errors.append(f"{path}.runs[{i}]: ape {r['ape']!r} != |predicted / measured - 1|")
    sources = list(dict.fromkeys(r["source"] for r in runs))
    if [s["source"] for s in after["by_source"]] != sources:
        errors.append(f"{path}.after.by_source: sources != the runs' {sources}")
    expected = [(f"by_source[{i}]", s, [r for r in runs if r["source"] == s["source"]])
                for i, s in enumerate(after["by_source"])] + [("overall", after["overall"], runs)]
    for where, summary, pool in expected:
        for key, value in accuracy(pool).items():
            if value is None or summary[key] is None:
                ok = value is None and summary[key] is None
            else:
                ok = exact(summary[key], value)
            if not ok:
                errors.append(f"{path}.after.{where}: {key} {summary[key]!r} != {value!r} from its runs")
    for key in ("before", "after"):
        check_accuracy_pool(node[key], f"{path}.{key}", errors)


def check_kernels(node, path, errors):
    """mfu kernels (mfu/kernel_figures.h): a figure's error = predicted /
    measured - 1; each group (family, kind) is the count, median |error|
    (the mean of the middle two for an even count) and max |error| of its
    modelled figures, and every family and kind with a modelled figure has
    its group; each family lists as unvalidated exactly the kinds it has no
    group for."""
    figures, groups = node.get("figures"), node.get("groups")
    if not (isinstance(figures, list) and isinstance(groups, list) and isinstance(node.get("unvalidated"), dict)):
        return
    CHECKS[0] += 1
    errors_by_group = {}
    for i, f in enumerate(figures):
        if not exact(f["error"], f["predicted"] / f["measured"] - 1):
            errors.append(f"{path}.figures[{i}]: error {f['error']!r} != predicted / measured - 1")
        if f["modelled"]:
            errors_by_group.setdefault((f["family"], f["kind"]), []).append(abs(f["error"]))
    for i, g in enumerate(groups):
        e = sorted(errors_by_group.get((g["family"], g["kind"]), []))
        median = (e[(len(e) - 1) // 2] + e[len(e) // 2]) / 2 if e else None
        if g["count"] != len(e) or not e or not exact(g["median_abs_error"], median) or g["max_abs_error"] != e[-1]:
            errors.append(f"{path}.groups[{i}] ({g['family']} {g['kind']}): count, median or max |error| differ "
                          f"from its {len(e)} modelled figures")
    grouped = {(g["family"], g["kind"]) for g in groups}
    if set(errors_by_group) != grouped:
        errors.append(f"{path}.groups: not one group per family and kind with modelled figures")
    kinds = {kind for _, kind in grouped}.union(*map(set, node["unvalidated"].values()))
    for family, unvalidated in node["unvalidated"].items():
        validated = {kind for fam, kind in grouped if fam == family}
        if set(unvalidated) & validated or set(unvalidated) | validated != kinds:
            errors.append(f"{path}.unvalidated.{family}: {unvalidated} is not the kinds without a group")


def check_accelerators(node, path, errors):
    """mfu hw (docs/cli.md): an accelerator's peak_flops_per_s lists a
    positive dense peak per supported dtype in FLOP/s (an unsupported one is
    absent, never 0 or null); in a list, no id, alias or display name
    (ignoring case) names two entries, as the database's keyed lookup
    requires."""
    if isinstance(node.get("peak_flops_per_s"), dict) and "id" in node:
        CHECKS[0] += 1
        for dtype, peak in node["peak_flops_per_s"].items():
            if not isinstance(peak, (int, float)) or not peak > 1e9:
                errors.append(f"{path}.peak_flops_per_s.{dtype}: {peak!r} is not a positive peak in FLOP/s")
    entries = node.get("accelerators")
    if isinstance(entries, list):
        CHECKS[0] += 1
        owner = {}
        for i, a in enumerate(entries):
            for name in {n.lower() for n in [a["id"], a["display_name"]] + a.get("aliases", [])}:
                if name in owner:
                    errors.append(f"{path}.accelerators[{i}]: '{name}' also names accelerators[{owner[name]}]")
                owner[name] = i


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
    """mfu fleet analyze: each GPU's MFU is its estimated FLOP/s over its
    peak and its hours by band sum to its covered_s x share; the fleet's
    hours are the GPUs' sum and its MFU is GPU-weighted: the sum of
    estimated FLOP/s over the sum of the peaks of the GPUs with an estimate
    (docs/fleet.md)."""
    if not (isinstance(node.get("fleet"), dict) and isinstance(node.get("gpus"), list)):
        return
    CHECKS[0] += 1
    hours, flops, peaks = 0.0, 0.0, 0.0
    for i, g in enumerate(node["gpus"]):
        where = f"{path}.gpus[{i}]"
        band_hours = sum(g["gpu_hours_by_band"].values())
        if not close(band_hours, g["covered_s"] * g["gpu_share"] / 3600):
            errors.append(f"{where}: gpu_hours_by_band sum {band_hours} != covered_s x gpu_share / 3600")
        hours += band_hours
        if g.get("estimated_mfu") is not None:
            if not close(g["estimated_mfu"], g["estimated_flops_per_s"] / g["peak_flops_per_s"]):
                errors.append(f"{where}: estimated_mfu {g['estimated_mfu']} != estimated_flops_per_s / peak_flops_per_s")
            flops += g["estimated_flops_per_s"]
            peaks += g["peak_flops_per_s"]
    fleet = node["fleet"]
    if fleet["gpus"] != len(node["gpus"]):
        errors.append(f"{path}.fleet: gpus {fleet['gpus']} != {len(node['gpus'])} GPUs listed")
    if not close(fleet["gpu_hours"], hours) or not close(sum(fleet["gpu_hours_by_band"].values()), hours):
        errors.append(f"{path}.fleet: gpu_hours {fleet['gpu_hours']} (or its bands) != the GPUs' sum {hours}")
    if fleet.get("estimated_mfu") is not None and not close(fleet["estimated_mfu"], flops / peaks):
        errors.append(f"{path}.fleet: estimated_mfu {fleet['estimated_mfu']} != GPU-weighted {flops / peaks}")


def check_log(doc, errors):
    """mfu log: every step with a throughput, and the steady state, give
    FLOP/s = tokens/s/GPU x model FLOPs per token and MFU, Megatron MFU and
    HFU = tokens/s/GPU x that convention's FLOPs per token / the peak."""
    inputs = doc.get("inputs") if isinstance(doc, dict) else None
    if not isinstance(inputs, dict) or not inputs.get("peak_flops_per_s"):
        return
    peak = inputs["peak_flops_per_s"]
    rows = [("steady_state", doc.get("steady_state") or {})] + [
        (f"steps[{i}]", s) for i, s in enumerate(doc.get("steps", []))]
    for where, row in rows:
        tokens = row.get("tokens_per_s_per_gpu")
        if tokens is None or row.get("model_flops_per_s_per_gpu") is None:
            continue
        CHECKS[0] += 1
        if not close(row["model_flops_per_s_per_gpu"], tokens * inputs["model_flops_per_token"]):
            errors.append(f"$.{where}: model_flops_per_s_per_gpu {row['model_flops_per_s_per_gpu']}"
                          " != tokens/s x model FLOPs per token")
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
CHECKED_AREAS = {"trace", "predict", "plan", "memory", "log", "goodput", "fleet", "calc", "flops", "infer",
                 "calibrate", "kernels", "hw", "models"}
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


# The JSON list each area's CSV rows are (mfu/reporter.h): absent, one row.
CSV_ROWS = {"plan": ["top"], "infer": ["decode_sweep", "workload.pairs"], "hw": ["accelerators"], "models": ["models"],
            "flops": ["conventions"], "calibrate": ["runs"], "kernels": ["figures"]}
# Areas whose cases record expected.csv (`--output-format csv`) on --update.
CSV_AREAS = ("predict", "plan", "infer", "hw", "flops", "memory", "calc", "models")


def flatten(node, prefix, out):
    """The scalar leaves of a JSON value by dotted path, lists of scalars
    as one value, lists of objects left out: what a CSV row holds."""
    if isinstance(node, dict):
        for key, child in node.items():
            flatten(child, f"{prefix}.{key}" if prefix else key, out)
    elif isinstance(node, list):
        if all(not isinstance(v, (dict, list)) for v in node):
            out[prefix] = node
    else:
        out[prefix] = node


def cell_matches(cell, value):
    if isinstance(value, list):
        parts = cell.split(";") if cell else []
        return len(parts) == len(value) and all(cell_matches(c, v) for c, v in zip(parts, value))
    if value is None:
        return cell == ""
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return float(cell) == float(value)
        except ValueError:
            return False
    return cell == value


def check_csv(area, doc, text, errors):
    """The CSV is the JSON flattened: its rows are the area's list (or the
    whole document, without the envelope, as one row), every cell the JSON
    value at its column's path (independent of the C++ flattening)."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        errors.append("csv: empty")
        return
    header, body = rows[0], rows[1:]
    items = None
    for key in CSV_ROWS.get(area, []):
        node = doc
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, list):
            items = node
            break
    if items is None:
        items = [{k: v for k, v in doc.items() if k not in ("schema_version", "mfu_version")}]
    if len(body) != len(items):
        errors.append(f"csv: {len(body)} rows, the JSON list has {len(items)}")
        return
    for i, (row, item) in enumerate(zip(body, items)):
        leaves = {}
        flatten(item, "", leaves)
        if len(row) != len(header):
            errors.append(f"csv: row {i + 1} has {len(row)} cells for {len(header)} columns")
            continue
        for column, cell in zip(header, row):
            if column not in leaves:
                if cell != "":
                    errors.append(f"csv: row {i + 1} column {column}: {cell!r} where the JSON has no value")
            elif not cell_matches(cell, leaves[column]):
                errors.append(f"csv: row {i + 1} column {column}: {cell!r} != JSON {leaves[column]!r}")
        missing = [k for k in leaves if k not in header]
        if missing:
            errors.append(f"csv: row {i + 1}: JSON leaves without a column: {missing[:5]}")


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
        csv_path = case / "expected.csv"
        if not csv_path.exists() and not (opts.update and case.parent.name in CSV_AREAS):
            continue
        rc, text, err = run(opts.mfu, args + ["--output-format", "csv"])
        if rc != 0:
            failures.append(f"{name}: mfu {' '.join(args)} --output-format csv exited {rc}: {err.strip()}")
            continue
        errors = []
        check_csv(case.parent.name, doc, text, errors)
        failures.extend(f"{name}: {e}" for e in errors[:20])
        compare(name, csv_path, text, opts.update, failures)
    for f in failures:
        print(f)
    verb = "updated" if opts.update else "passed"
    print(f"golden: {len(cases)} case(s), {len(failures)} failure(s)" + ("" if failures else f", {verb}"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
