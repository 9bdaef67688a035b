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
import json
import pathlib
import re
import shlex
import subprocess
import sys

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


RENDERERS = {
    "conventions-table": render_conventions,
    "presets-table": render_presets,
    "components-table": render_components,
    "korthikanti-table": render_korthikanti,
    "memory-table": render_memory,
    "activation-forms": render_activation_forms,
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
