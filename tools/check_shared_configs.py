#!/usr/bin/env python3
"""CI step that uses ../shared directly (not part of the self-contained test
suite): runs `mfu flops --json` on every config.json in shared/model-configs
and compares params.total with the exact count its README publishes."""
import json
import pathlib
import re
import subprocess
import sys

mfu, configs = sys.argv[1], pathlib.Path(sys.argv[2])
readme = (configs / "README.md").read_text()
expected = {}
for line in readme.splitlines():
    cells = [c.strip() for c in line.split("|")]
    if len(cells) > 4 and cells[1].endswith(".json"):
        counts = re.findall(r"\d{1,3}(?:,\d{3}){2,}", line)
        if counts:
            expected[cells[1]] = int(counts[0].replace(",", ""))
failures = 0
for name, total in sorted(expected.items()):
    out = subprocess.run([mfu, "flops", "--model", str(configs / name), "--json", "--seq-len", "1024"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(f"FAIL {name}: {out.stderr.strip()}")
        failures += 1
        continue
    got = int(json.loads(out.stdout)["params"]["total"])
    status = "ok  " if got == total else "FAIL"
    failures += got != total
    print(f"{status} {name}: {got:,} (published {total:,})")
print(f"check_shared_configs: {len(expected)} configs, {failures} failed")
sys.exit(1 if failures or len(expected) < 24 else 0)
