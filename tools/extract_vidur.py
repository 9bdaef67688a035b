#!/usr/bin/env python3
"""Extracts the test fixtures in tests/data/vidur/ from Vidur's profiling data
(microsoft/vidur @ 7d47513363ec447a741ac5e47241580b47724fbf, MIT licence, as
copied into ../shared/telemetry/inference-validation/vidur-profiling/).

Keeps the median time (ms) of each operator for token counts that are powers
of two (1 ... 4096) and every tensor-parallel degree, and the all-reduce
medians on a DGX H100 for message sizes near powers of two. Usage:

    tools/extract_vidur.py ../shared/telemetry/inference-validation/vidur-profiling tests/data/vidur
"""
import csv
import pathlib
import sys

OPS = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj", "input_layernorm", "mlp_act", "add"]
COMPUTE = {
    "compute_a100_meta-llama_Meta-Llama-3-8B_mlp.csv": ("a100-sxm4-80gb", "Meta-Llama-3-8B"),
    "compute_a100_meta-llama_Meta-Llama-3-70B_mlp.csv": ("a100-sxm4-80gb", "Meta-Llama-3-70B"),
    "compute_h100_meta-llama_Llama-2-7b-hf_mlp.csv": ("h100-sxm5-80gb", "Llama-2-7b-hf"),
    "compute_h100_meta-llama_Llama-2-70b-hf_mlp.csv": ("h100-sxm5-80gb", "Llama-2-70b-hf"),
}


def main() -> int:
    src, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    dst.mkdir(parents=True, exist_ok=True)
    powers = {2**i for i in range(13)}
    with open(dst / "compute.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "model", "hidden", "ffn", "heads", "kv_heads", "gated", "tokens", "tp"]
                   + [op + "_ms" for op in OPS])
        for name, (gpu, model) in COMPUTE.items():
            seen = set()
            for r in csv.DictReader(open(src / name)):
                key = (r["num_tokens"], r["num_tensor_parallel_workers"])
                if int(r["num_tokens"]) not in powers or key in seen:
                    continue  # Vidur repeats some shapes: the first profile is kept
                seen.add(key)
                w.writerow([gpu, model, r["n_embd"], r["n_expanded_embd"], r["n_head"], r["n_kv_head"],
                            r["use_gated_mlp"], r["num_tokens"], r["num_tensor_parallel_workers"]]
                           + [r[f"time_stats.{op}.median"] for op in OPS])
    with open(dst / "collectives.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["cluster", "collective", "gpus", "bytes", "median_ms"])
        rows = list(csv.DictReader(open(src / "network_h100_dgx_all_reduce.csv")))
        sizes = sorted({int(r["size"]) for r in rows})
        keep = set()
        for p in range(11, 27):  # 2 KiB ... 64 MiB: the profiled size nearest each power of two
            keep.add(min(sizes, key=lambda s: abs(s - 2**p)))
        seen = set()
        for r in rows:
            key = (r["num_workers"], r["size"])
            if int(r["size"]) in keep and key not in seen:
                seen.add(key)
                w.writerow(["dgx-h100", "all_reduce", r["num_workers"], r["size"], r["time_stats.all_reduce.median"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
