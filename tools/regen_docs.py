#!/usr/bin/env python3
"""Regenerates the command-output blocks in the Markdown docs by running mfu
(STYLE.md section 4; bloaty's regen-readme.py does the same for its README).

A block sits between two marker comments:

    <!-- BEGIN mfu ARGS -->
    ...generated, do not edit...
    <!-- END -->

ARGS is an mfu command line, split like a shell would (shlex). The block
becomes "$ mfu ARGS" and the command's stdout in a fenced code block (json
when ARGS has --json, text otherwise). With "ARGS | RENDERER" the command must
print JSON and RENDERER (see RENDERERS below) turns it into a Markdown table.

Usage:
    tools/regen_docs.py [--check] [MFU]

MFU is the mfu binary (default: build/release/mfu). Without --check the docs
are rewritten in place; with --check nothing is written and the exit status
is 1 when any block differs from what the binary prints now (the docs are
stale), 0 otherwise. Python 3 standard library only.
"""
import argparse
import csv
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = sorted(ROOT.glob("docs/*.md")) + sorted(ROOT.glob("*.md"))
BLOCK = re.compile(r"(<!-- BEGIN mfu (?P<spec>[^\n]*?) -->\n)(?P<body>.*?)(<!-- END -->)", re.DOTALL)

# Training FLOPs per token of Llama-3.1-8B(-Instruct) at sequence length 8192,
# recomputed independently from each framework's own formula (7 significant
# digits) when the conventions were researched; the formulas' sources are
# cited in docs/conventions.md. llm-foundry has no independent value.
REFERENCE_FLOPS = {
    ("llama-3.1-8b-instruct", 8192): {
        "megatron": (5.147040e10, "Megatron-LM training.py num_floating_point_operations"),
        "palm": (5.791445e10, "torchtitan get_dense_model_nparams_and_flops; PaLM App. B / nanoGPT 6N+12LHQT"),
        "kaplan": (4.187753e10, "Kaplan et al. 2020 6N, non-embedding"),
        "exact": (5.791285e10, "every GEMM incl. router and logits, full attention"),
        "hf": (4.502955e10, "HF transformers floating_point_ops"),
        "maxtext": (5.147040e10, "MaxText calculate_tflops_training_per_device"),
    },
}

# Parameter counts published for each preset. `exact` is the count Hugging
# Face reports for the checkpoint (total, and for MoE models the active count
# including the input embedding, both computed module by module and equal to
# HF's); `vendor` is the rounded figure the model's authors publish, with its
# source. Wan DiTs have no published exact count.
PUBLISHED_PARAMS = {
    "glm-4.5": (None, None, "355B / 32B", "GLM-4.5 report, arXiv:2508.06471"),
    "glm-4.5-air": (None, None, "106B / 12B", "GLM-4.5 report, arXiv:2508.06471"),
    "kimi-k2": (None, None, "1.04T / 32.6B", "Kimi K2 report, arXiv:2507.20534"),
    "llama-3-70b": (70553706496, None, "70.6B", "HF meta-llama/Meta-Llama-3-70B"),
    "llama-3-8b": (8030261248, None, "8.03B", "HF meta-llama/Meta-Llama-3-8B"),
    "llama-3.3-70b-instruct": (70553706496, None, "70.6B", "HF meta-llama/Llama-3.3-70B-Instruct"),
    "llama-4-maverick-17b-128e": (None, None, "400B / 17B (with vision)", "Meta Llama 4 model card"),
    "llama-4-scout-17b-16e": (None, None, "109B / 17B (with vision)", "Meta Llama 4 model card"),
    "mistral-large-2407": (None, None, "123B", "HF mistralai/Mistral-Large-Instruct-2407 model card"),
    "qwen2.5-72b": (None, None, "72.7B", "HF Qwen/Qwen2.5-72B model card"),
    "qwen3-235b-a22b": (None, None, "235B / 22B", "HF Qwen/Qwen3-235B-A22B model card"),
    "deepseek-v2-lite": (15706484224, 2661150208, "15.7B / 2.4B", "DeepSeek-V2 paper, arXiv:2405.04434"),
    "deepseek-v3": (671026419200, 37552297472, "671B / 37B", "DeepSeek-V3 report, arXiv:2412.19437, Table 1"),
    "gemma-2-27b": (27227128320, None, "27.2B", "HF google/gemma-2-27b"),
    "gemma-2-9b": (9241705984, None, "9.24B", "HF google/gemma-2-9b"),
    "gemma-3-1b-it": (999885952, None, "1.0B", "HF google/gemma-3-1b-it"),
    "gpt-oss-120b": (116829156672, 5711982912, "116.8B / 5.13B", "OpenAI gpt-oss model card, Table 1"),
    "gpt2": (124439808, None, "124M", "HF openai-community/gpt2"),
    "gpt2-large": (774030080, None, "774M", "HF openai-community/gpt2-large"),
    "llama-2-70b": (68976648192, None, "69.0B", "HF meta-llama/Llama-2-70b-hf"),
    "llama-2-7b": (6738415616, None, "6.74B", "HF meta-llama/Llama-2-7b-hf"),
    "llama-3.1-405b": (405853388800, None, "405B", "Llama 3 Herd of Models, arXiv:2407.21783"),
    "llama-3.1-70b-instruct": (70553706496, None, "70.6B", "HF meta-llama/Llama-3.1-70B-Instruct"),
    "llama-3.1-8b-instruct": (8030261248, None, "8.03B", "HF meta-llama/Llama-3.1-8B-Instruct"),
    "llama-3.2-1b-instruct": (1235814400, None, "1.23B", "HF meta-llama/Llama-3.2-1B-Instruct"),
    "mistral-7b-instruct-v0.3": (7248023552, None, "7.25B", "HF mistralai/Mistral-7B-Instruct-v0.3"),
    "mistral-7b-v0.1": (7241732096, None, "7.24B", "HF mistralai/Mistral-7B-v0.1"),
    "mixtral-8x7b-v0.1": (46702792704, 12879925248, "46.7B / 12.9B", "Mixtral of Experts, arXiv:2401.04088"),
    "phi-3.5-mini-instruct": (3821079552, None, "3.82B", "HF microsoft/Phi-3.5-mini-instruct"),
    "phi-4": (14659507200, None, "14.7B", "HF microsoft/phi-4"),
    "qwen1.5-moe-a2.7b": (14315784192, 2689173504, "14.3B / 2.7B", "Qwen1.5-MoE blog / HF model card"),
    "qwen2.5-7b-instruct": (7615616512, None, "7.61B", "HF Qwen/Qwen2.5-7B-Instruct"),
    "qwen3-30b-a3b": (30532122624, 3353032704, "30.5B / 3.3B", "Qwen3 report, arXiv:2505.09388, Table 2"),
    "qwen3-32b": (32762123264, None, "32.8B", "HF Qwen/Qwen3-32B"),
    "qwen3-8b": (8190735360, None, "8.2B", "HF Qwen/Qwen3-8B"),
    "redpajama-incite-3b-gpt-neox": (2775864320, None, "2.78B", "HF togethercomputer/RedPajama-INCITE-3B"),
    "wan2.1-t2v-1.3b": (None, None, "1.3B", "Wan-Video/Wan2.1 README"),
    "wan2.1-t2v-14b": (None, None, "14B", "Wan-Video/Wan2.1 README; arXiv:2503.20314"),
    "wan2.2-ti2v-5b": (None, None, "5B", "Wan-Video/Wan2.2 README"),
}


class RegenError(Exception):
    pass


def run_mfu(mfu, args):
    proc = subprocess.run([mfu] + args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RegenError(f"'mfu {shlex.join(args)}' exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def thousands(value):
    return f"{int(value):,}"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def render_conventions(mfu, args, data):
    """`mfu flops ... --convention all --json`: each convention's training
    FLOPs per token, its ratio to megatron, and the independent reference."""
    rows_in = data["conventions"]
    megatron = next(r["training"] for r in rows_in if r["name"] == "megatron")
    reference = REFERENCE_FLOPS.get((data["model"]["name"], data["seq_len"]), {})
    rows = []
    for r in rows_in:
        ref, source = reference.get(r["name"], (None, "none"))
        rows.append([
            f"`{r['name']}`",
            f"{r['training']:.6e}",
            f"{r['training'] / megatron:.3f}",
            f"{ref:.6e}" if ref else "-",
            f"{r['training'] / ref:.6f}" if ref else "-",
            source,
        ])
    header = ["convention", "mfu FLOPs/token", "vs megatron", "reference", "mfu / reference", "reference formula"]
    return table(header, rows)


def render_presets(mfu, args, data):
    """`mfu models --json`: total and active parameters of every preset next
    to the published counts. Runs `mfu flops --model NAME --seq-len 1024
    --json` per preset for the active count without embeddings."""
    rows = []
    for m in data["models"]:
        flops = json.loads(run_mfu(mfu, ["flops", "--model", m["name"], "--seq-len", "1024", "--json"]))
        active_ne = flops["params"]["active_non_embedding"]
        exact_total, exact_active, vendor, source = PUBLISHED_PARAMS.get(m["name"], (None, None, "-", "-"))
        total, active = m["params"]["total"], m["params"]["active"]
        if exact_total is None:
            equal = "no exact count"
        elif total == exact_total and active == (exact_active or exact_total):
            equal = "yes"
        else:
            equal = "**NO**"
        exact = "-" if exact_total is None else thousands(exact_total)
        if exact_active:
            exact += " / " + thousands(exact_active)
        shown_ne = thousands(active_ne) if active != total else "-"
        rows.append([f"`{m['name']}`", m["family"], thousands(total), thousands(active), shown_ne, exact, equal,
                     vendor, source])
    header = ["preset", "family", "total (mfu)", "active (mfu)", "active w/o embedding (mfu)",
              "exact count (HF): total / active", "equal", "vendor figure", "vendor source"]
    return table(header, rows)


# FlopsComponent order (include/mfu/flops.h); JSON objects come sorted by key.
COMPONENT_ORDER = ["q_proj", "k_proj", "v_proj", "o_proj", "attn_scores", "attn_context", "mlp", "routed_experts",
                   "shared_experts", "router", "lm_head", "mtp", "embedding", "norms_biases", "cross_attention",
                   "dit_embedders"]


def render_components(mfu, args, data):
    """`mfu flops ... --json` (training or --inference): forward FLOPs per
    token by component (non-zero ones) and the totals."""
    inference = data.get("inference")
    flops = inference if inference else data["flops_per_token"]
    components = flops["components_forward"]
    forward = inference["flops_per_token"] if inference else flops["forward"]
    names = [n for n in COMPONENT_ORDER if n in components] + sorted(set(components) - set(COMPONENT_ORDER))
    rows = [[f"`{n}`", f"{components[n]:.4e}", f"{components[n] / forward:.1%}"] for n in names if components[n] > 0]
    rows.append(["forward total", f"{forward:.4e}", "100.0%"])
    if inference:
        tokens = f"{inference['mode']}: {inference['tokens']:,.0f} token(s) in all"
        rows.append([tokens, f"{inference['flops_total']:.4e}", ""])
    else:
        rows.append(["training (3 x forward)", f"{flops['training']:.4e}", ""])
        rows.append([f"recompute ({data['recompute']})", f"{flops['recompute']:.4e}", ""])
        rows.append(["hardware (training + recompute)", f"{flops['hardware']:.4e}", ""])
    return table(["component", "FLOPs per token", "share of forward"], rows)


# Korthikanti et al. 2022 (arXiv:2205.05198) Table 5 runs (GPT, seq 2048,
# vocab 51200, sequence parallelism + selective recompute) and the MFU / HFU
# percentages the Megatron-LM README (commit 2e90a342f5, 2022-05-19)
# published for them.
KORTHIKANTI_RUNS = [
    ("GPT 22B", 48, 6144, 64, 41.5, 43.7),
    ("GPT 175B", 96, 12288, 96, 51.4, 52.8),
    ("GPT 530B", 105, 20480, 128, 56.0, 57.0),
    ("GPT 1T", 128, 25600, 160, 56.3, 57.0),
]


def render_korthikanti(mfu, args, data):
    """`mfu flops --layers L --hidden H --heads A --vocab 51200 --mlp plain
    --seq-len 2048 --convention exact --recompute selective --json`: runs the
    command for each of KORTHIKANTI_RUNS (replacing --layers/--hidden/--heads)
    under each recompute mode and compares hardware / model FLOPs with the
    published HFU / MFU."""
    rows = []
    for name, layers, hidden, heads, mfu_pct, hfu_pct in KORTHIKANTI_RUNS:
        ratios = []
        for recompute in ("selective", "selective-literal", "full"):
            run = list(args)
            for flag, value in (("--layers", layers), ("--hidden", hidden), ("--heads", heads),
                                ("--recompute", recompute)):
                run[run.index(flag) + 1] = str(value)
            f = json.loads(run_mfu(mfu, run))["flops_per_token"]
            ratios.append(f"{f['hardware'] / f['training']:.4f}")
        rows.append([name, str(layers), str(hidden), str(heads), f"{mfu_pct} / {hfu_pct}",
                     f"{hfu_pct / mfu_pct:.4f}"] + ratios)
    header = ["run", "layers", "hidden", "heads", "published MFU / HFU (%)", "published HFU/MFU",
              "mfu `selective`", "mfu `selective-literal`", "mfu `full`"]
    return table(header, rows)


def render_memory(mfu, args, data):
    """`mfu memory ... --json`: every byte count of the training and KV-cache
    blocks, exact and in GiB."""
    rows = []
    for block in ("training", "kv_cache"):
        for key, value in data.get(block, {}).items():
            if key.endswith("_bytes") or key.startswith("bytes_"):
                rows.append([f"`{block}.{key}`", thousands(value), f"{value / 2**30:.3f}"])
    return table(["field", "bytes", "GiB"], rows)


def render_activation_forms(mfu, args, data):
    """`mfu memory --layers L --hidden H --heads A ... --mlp plain --json`
    (a GPT layer): reruns the command with the parallelism and recompute
    options of Korthikanti et al. 2022 and compares the bytes per layer with
    the paper's closed forms."""
    s, h, a = (float(args[args.index(flag) + 1]) for flag in ("--seq-len", "--hidden", "--heads"))
    t = 8
    cases = [
        ("no parallelism, no flash attention", ["--no-flash"], s * h * (34 + 5 * a * s / h), "sbh(34 + 5as/h)"),
        ("TP 8", ["--no-flash", "--tp", "8"], s * h * (10 + 24 / t + 5 * a * s / (h * t)),
         "sbh(10 + 24/t + 5as/(ht))"),
        ("TP 8 + SP", ["--no-flash", "--tp", "8", "--sp"], s * h / t * (34 + 5 * a * s / h), "sbh/t (34 + 5as/h)"),
        ("TP 8 + SP, selective recompute", ["--recompute", "selective", "--tp", "8", "--sp"], 34 * s * h / t,
         "34 sbh/t"),
        ("full recompute", ["--recompute", "full"], 2 * s * h, "2 sbh"),
    ]
    rows = []
    for name, extra, expected, formula in cases:
        got = json.loads(run_mfu(mfu, list(args) + extra))["training"]["activations_per_layer_bytes"]
        rows.append([name, f"`{' '.join(extra)}`", thousands(got), formula, thousands(round(expected))])
    return table(["case", "options", "mfu bytes / layer", "Korthikanti et al.", "formula bytes"], rows)


# HTA v0.6.1 (facebookresearch/HolisticTraceAnalysis @f4d0062c) on two
# trace sets, transcribed from shared/reference/hta-reference-outputs.md:
# get_temporal_breakdown (idle, compute, non-compute, kernel time; us),
# get_comm_comp_overlap (percent, 2 decimals), get_cuda_kernel_launch_stats
# (launches, launch-delay median and p95 in us, short kernels),
# get_gpu_kernel_breakdown's kernel_type_metrics_df (us, pooled over the
# ranks) and get_potential_stragglers. Keyed by the path `mfu trace` is given.
HTA_REFERENCE = {
    "tests/data/traces/dlrm_kineto": {
        "source": "hta-reference-outputs.md section 3 (8-rank DLRM, V100, 1 ProfilerStep per rank)",
        "temporal": {
            0: (6419, 1034, 5556, 13009, 4.50),
            1: (6428, 1246, 11075, 18749, 2.47),
            2: (7046, 1068, 3236, 11350, 7.88),
            3: (8145, 1240, 9468, 18853, 3.31),
            4: (8887, 1126, 6576, 16589, 0.56),
            5: (9121, 1041, 6230, 16392, 0.64),
            6: (7051, 1051, 3308, 11410, 7.56),
            7: (8308, 1059, 1600, 10967, 9.51),
        },
        "launches": {
            0: (261, 2.0, 371.0, 180),
            1: (262, 2.0, 372.6999999999997, 183),
            2: (262, 2.0, 269.5499999999999, 182),
            3: (273, 2.0, 257.19999999999936, 216),
            4: (273, 2.0, 12.999999999999886, 188),
            5: (261, 2.0, 4.0, 200),
            6: (262, 2.0, 259.5499999999999, 181),
            7: (262, 2.0, 149.5499999999999, 179),
        },
        "kernel_types": {
            "COMMUNICATION": 46880,
            "COMPUTATION": 7213,
            "COMPUTATION overlapping COMMUNICATION": 1652,
            "MEMORY": 159,
            "COMMUNICATION overlapping MEMORY": 10,
        },
        "stragglers": [2, 7],
    },
    "tests/data/traces/hta_sampled": {
        "source": "hta-reference-outputs.md section 5.1 (HTA's sampled 2-rank set, 2 ProfilerSteps per rank)",
        "temporal": {
            0: (321378, 106252, 172428, 600058, 11.81),
            1: (328671, 135548, 136455, 600674, 20.05),
        },
        "launches": {
            0: (602, 10246.0, 64814.85, 140),
            1: (577, 10282.0, 73663.0, 140),
        },
        "kernel_types": {
            "COMMUNICATION": 305584,
            "COMPUTATION": 185023,
            "COMPUTATION overlapping COMMUNICATION": 56747,
            "MEMORY": 2288,
            "COMMUNICATION overlapping MEMORY": 1011,
            "COMPUTATION overlapping MEMORY": 18,
            "COMPUTATION overlapping COMMUNICATION overlapping MEMORY": 12,
        },
        "stragglers": [0, 1],
    },
}


def same(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def render_hta_parity(mfu, args, data):
    """`mfu trace SET --hta-compat --json`: per rank, the temporal breakdown,
    comm/compute overlap and launch statistics, then the kernel-type time
    pooled over the ranks, next to HTA's own output on the same files
    (HTA_REFERENCE), and both tools' straggler lists."""
    reference = HTA_REFERENCE.get(args[1].rstrip("/"))
    if reference is None or data.get("variant") != "hta":
        raise RegenError(f"hta-parity: no HTA reference for '{args[1]}', or the command lacks --hta-compat")
    pair = lambda ours, theirs, fmt: f"{ours:{fmt}} / {theirs:{fmt}}"
    temporal_rows, launch_rows = [], []
    for r in data["ranks"]:
        idle, compute, non_compute, span, overlap = reference["temporal"][r["rank"]]
        t = {k[:-3] + "_us": v / 1e3 for k, v in r["temporal"].items() if k.endswith("_ns")}
        ok = (same(t["idle_us"], idle) and same(t["compute_us"], compute) and same(t["non_compute_us"], non_compute)
              and same(t["span_us"], span) and round(r["overlap_pct"], 2) == overlap)
        temporal_rows.append([str(r["rank"]), f"`{r['window']}`", pair(t["idle_us"], idle, ".0f"),
                              pair(t["compute_us"], compute, ".0f"), pair(t["non_compute_us"], non_compute, ".0f"),
                              pair(t["span_us"], span, ".0f"), pair(r["overlap_pct"], overlap, ".2f"),
                              "yes" if ok else "**NO**"])
        count, median, p95, short = reference["launches"][r["rank"]]
        l = {k.replace("_ns", "_us"): (v / 1e3 if k.endswith("_ns") and v is not None else v) for k, v in r["launches"].items()}
        ok = (l["count"] == count and same(l["launch_delay_median_us"], median)
              and same(l["launch_delay_p95_us"], p95) and l["short_kernels"] == short)
        launch_rows.append([str(r["rank"]), pair(l["count"], count, "d"), pair(l["launch_delay_median_us"], median, ".1f"),
                            pair(l["launch_delay_p95_us"], p95, ".2f"), pair(l["short_kernels"], short, "d"),
                            "yes" if ok else "**NO**"])
    header = ["rank", "window", "idle us", "compute us", "non-compute us", "kernel time us", "overlap %", "equal"]
    text = table(header, temporal_rows) + "\n"
    header = ["rank", "launches", "launch delay median us", "launch delay p95 us", "short kernels", "equal"]
    text += table(header, launch_rows) + "\n"
    pooled = {}
    for r in data["ranks"]:
        for name, ns in r["kernel_types_ns"].items():
            pooled[name] = pooled.get(name, 0.0) + ns / 1e3
    type_rows = []
    for name in list(reference["kernel_types"]) + sorted(set(pooled) - set(reference["kernel_types"])):
        ours, theirs = pooled.get(name, 0.0), reference["kernel_types"].get(name, 0)
        type_rows.append([name, pair(ours, theirs, ".0f"), "yes" if same(ours, theirs) else "**NO**"])
    text += table(["kernel type (all ranks)", "us", "equal"], type_rows) + "\n"
    ours = data["collectives"].get("hta_stragglers")
    text += (f"Stragglers (HTA's `get_potential_stragglers`): mfu `{ours}`, HTA `{reference['stragglers']}` "
             f"({'equal' if ours == reference['stragglers'] else '**NOT EQUAL**'}). "
             f"Each cell is mfu / HTA; HTA's values: {reference['source']}.\n")
    return text


def trim_json(value, key=""):
    """Every list cut to its first element, objects keyed by kernel class cut
    to their first class, long strings shortened."""
    if isinstance(value, dict):
        items = sorted(value.items())
        if key == "classes":
            items = items[:1]
        return {k: trim_json(v, k) for k, v in items}
    if isinstance(value, list):
        return [trim_json(value[0])] if value else []
    if isinstance(value, str) and len(value) > 72:
        return value[:69] + "..."
    return value


def render_trace_json_excerpt(mfu, args, data):
    """`mfu trace ... --json`: the output trimmed (trim_json); in `steps[0]`
    the fields it shares with the rank's own window are elided."""
    trimmed = trim_json(data)
    for rank in trimmed["ranks"]:
        for step in rank["steps"]:
            for key in ("classes", "idle_breakdown", "kernel_types_ns", "launches", "temporal", "top_kernels",
                        "waterfall"):
                if key in step:
                    step[key] = "... (the fields of the rank's own)"
    text = json.dumps(trimmed, indent=2, sort_keys=True)
    return f"```json\n$ mfu {shlex.join(args)}   (trimmed)\n{text}\n```\n"


def csv_tables(mfu, args):
    """Reruns `mfu ARGS --csv DIR` (without --json) and returns {file: rows}."""
    with tempfile.TemporaryDirectory() as tmp:
        run_mfu(mfu, [a for a in args if a != "--json"] + ["--csv", tmp])
        tables = {}
        for path in sorted(pathlib.Path(tmp).glob("*.csv")):
            with open(path, newline="") as f:
                tables[path.name] = list(csv.reader(f))
    return tables


def render_trace_diagnostics(mfu, args, data):
    """`mfu trace FILE --json`: every diagnostic the parser counts (the
    X-macro table of src/trace/trace_stats.h, as diagnostics.csv of `--csv`
    lists it, zero or not) with its severity and meaning."""
    rows = csv_tables(mfu, args)["diagnostics.csv"]
    header, body = rows[0], rows[1:]
    name, severity, description = (header.index(c) for c in ("name", "severity", "description"))
    first_rank = body[0][0]
    return table(["diagnostic", "severity", "meaning"],
                 [[f"`{r[name]}`", r[severity], r[description]] for r in body if r[0] == first_rank])


def render_trace_csv_columns(mfu, args, data):
    """`mfu trace ... --json`: reruns the command with `--csv DIR` and lists
    each file with its columns and its number of data rows."""
    rows = [[f"`{name}`", ", ".join(f"`{c}`" for c in t[0]), str(len(t) - 1)]
            for name, t in csv_tables(mfu, args).items()]
    return table(["file", "columns", f"rows for `{' '.join(args[1:-1])}`"], rows)


def render_trace_waterfall(mfu, args, data):
    """`mfu trace FILE --json`: the main waterfall of the first rank, every
    bucket with its share of the step, their sum against the step time, and
    the MFU_hw identity."""
    w = data["ranks"][0]["waterfall"]
    step = w["step_ns"] / 1e3
    order = ["idle", "exposed_communication", "exposed_memcpy", "[unattributed]", "non_matrix_kernels",
             "matrix_unknown_flops", "matrix_below_peak", "matrix_at_peak"]
    buckets = {name: ns / 1e3 for name, ns in w["buckets_ns"].items()}
    names = order + sorted(set(buckets) - set(order))
    rows = [[f"`{n}`", f"{buckets[n]:.3f}", f"{buckets[n] / step:.2%}"] for n in names]
    total = sum(buckets[n] for n in names)
    rows.append(["sum of the buckets", f"{total:.3f}", f"{total / step:.2%}"])
    rows.append([f"step time (`{w['label']}`)", f"{step:.3f}", "100.00%"])
    text = table(["bucket", "us", "share of the step"], rows)
    product = w["compute_share"] * w["matrix_share"] * w["matrix_efficiency"]
    text += (f"\nMFU_hw = {w['mfu_hw']:.6f} = compute share {w['compute_share']:.6f} x matrix share "
             f"{w['matrix_share']:.6f} x matrix efficiency {w['matrix_efficiency']:.6f} (product {product:.6f}); "
             f"FLOPs from shapes cover {w['coverage']:.1%} of the matrix time.\n")
    return text


RENDERERS = {
    "conventions-table": render_conventions,
    "presets-table": render_presets,
    "components-table": render_components,
    "korthikanti-table": render_korthikanti,
    "memory-table": render_memory,
    "activation-forms": render_activation_forms,
    "hta-parity": render_hta_parity,
    "trace-json-excerpt": render_trace_json_excerpt,
    "trace-diagnostics": render_trace_diagnostics,
    "trace-csv-columns": render_trace_csv_columns,
    "trace-waterfall": render_trace_waterfall,
}


def render_block(mfu, spec):
    command, _, renderer = spec.partition(" | ")
    args = shlex.split(command)
    output = run_mfu(mfu, args)
    if renderer:
        if renderer not in RENDERERS:
            raise RegenError(f"unknown renderer '{renderer}'; known: {', '.join(sorted(RENDERERS))}")
        text = RENDERERS[renderer](mfu, args, json.loads(output))
    else:
        fence = "json" if "--json" in args else "text"
        lines = [line.rstrip() for line in output.rstrip("\n").split("\n")]
        text = f"```{fence}\n$ mfu {command}\n" + "\n".join(lines) + "\n```\n"
    if not text.isascii():
        raise RegenError(f"'mfu {command}': output is not ASCII")
    return text


def regenerate(mfu, path):
    old = path.read_text()
    errors = []

    def replace(match):
        try:
            body = render_block(mfu, match.group("spec"))
        except RegenError as e:
            errors.append(f"{path.relative_to(ROOT)}: {e}")
            return match.group(0)
        return match.group(1) + body + match.group(4)

    new = BLOCK.sub(replace, old)
    return old, new, errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the docs are stale; write nothing")
    parser.add_argument("mfu", nargs="?", default=str(ROOT / "build/release/mfu"), help="the mfu binary")
    options = parser.parse_args()
    if not pathlib.Path(options.mfu).is_file():
        print(f"regen_docs: {options.mfu}: no such binary (build it: cmake --build --preset release)")
        return 2
    stale, blocks, errors = [], 0, []
    for path in DOCS:
        old, new, file_errors = regenerate(options.mfu, path)
        errors += file_errors
        blocks += len(BLOCK.findall(old))
        if new != old:
            stale.append(str(path.relative_to(ROOT)))
            if not options.check:
                path.write_text(new)
    for e in errors:
        print(f"regen_docs: {e}")
    if errors:
        return 1
    if options.check:
        for name in stale:
            print(f"regen_docs: {name} is stale; run tools/regen_docs.py")
        print(f"regen_docs: {blocks} blocks, {len(stale)} stale file(s)")
        return 1 if stale else 0
    print(f"regen_docs: {blocks} blocks, {len(stale)} file(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
