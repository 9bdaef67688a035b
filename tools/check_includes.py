#!/usr/bin/env python3
"""Fails when an include crosses the module layering (STYLE.md section 1):
include/ never includes src/; a module includes only modules below it; nothing
includes cli/. Mirrors perfetto's tools/check_include_violations.

The CLI is a thin front end (docs/design.md "Front ends"): a file under
src/cli may include only the public API (mfu/...), other cli/ files and the
two helpers named in CLI_FILES (report's table printer, base's string
helpers), and never nlohmann/json, because every analysis, resolution and
output schema lives in libmfu; any other module header in src/cli is a
violation, so analysis code cannot creep back in through an internal
header. Public headers never include
nlohmann/json either: it is a private dependency of libmfu."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# module -> modules it may include (besides itself)
ALLOWED = {
    "base": set(),
    "model": {"base"},
    "hwdb": {"base"},
    "flops": {"base", "model", "hwdb"},
    "trace": {"base", "model", "hwdb", "flops"},
    "perf": {"base", "model", "hwdb", "flops"},
    "plan": {"base", "model", "hwdb", "flops", "perf"},
    "infer": {"base", "model", "hwdb", "flops", "perf"},
    "calibrate": {"base", "model", "hwdb", "flops", "perf", "plan"},
    "log": {"base", "model", "hwdb", "flops"},
    "goodput": {"base", "model", "hwdb", "flops", "log"},
    "fleet": {"base", "model", "hwdb", "flops", "log", "goodput"},
    "catalog": {"base", "model", "hwdb", "flops", "trace", "perf", "plan", "infer", "calibrate"},
    "report": {"base", "model", "hwdb", "flops", "trace", "perf", "plan", "infer", "calibrate", "catalog", "log", "goodput", "fleet"},
    # The front end: the public API (mfu/..., always allowed) and CLI_FILES;
    # no module internals.
    "cli": set(),
    "testing": {"base", "model", "hwdb", "flops", "trace", "perf", "plan", "infer", "calibrate", "catalog", "log",
                "goodput"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
# Libraries only libmfu may use (schema code): never in include/ or src/cli.
PRIVATE_LIBS = ("nlohmann/",)
# The only module headers src/cli may include: the text-table printer its
# help and list output use, and string helpers (Join, ClosestMatch).
CLI_FILES = {"base/strings.h", "report/table.h"}


def main() -> int:
    errors = []
    for path in sorted((ROOT / "include").rglob("*.h")):
        for line in path.read_text().splitlines():
            m = INCLUDE.match(line)
            if m and not m.group(1).startswith("mfu/"):
                errors.append(f"{path.relative_to(ROOT)}: public header includes {m.group(1)}")
            m = SYSTEM_INCLUDE.match(line)
            if m and m.group(1).startswith(PRIVATE_LIBS):
                errors.append(f"{path.relative_to(ROOT)}: public header includes <{m.group(1)}> (private to libmfu)")
    for path in sorted((ROOT / "src").rglob("*")):
        if path.suffix not in (".h", ".cc"):
            continue
        module = path.relative_to(ROOT / "src").parts[0]
        for line in path.read_text().splitlines():
            m = SYSTEM_INCLUDE.match(line)
            if module == "cli" and m and m.group(1).startswith(PRIVATE_LIBS):
                errors.append(f"{path.relative_to(ROOT)}: the CLI may not include <{m.group(1)}> "
                              "(schemas are rendered by libmfu's report module)")
            m = INCLUDE.match(line)
            if not m or m.group(1).startswith("mfu/"):
                continue
            target = m.group(1).split("/")[0]
            if module == "cli" and m.group(1) in CLI_FILES:
                continue
            if module == "cli" and target != "cli":
                errors.append(f"{path.relative_to(ROOT)}: the CLI may include only mfu/..., cli/... and "
                              f"{', '.join(sorted(CLI_FILES))}, not {m.group(1)} (analysis, resolution and "
                              "schemas live in libmfu, behind include/mfu)")
                continue
            if target == module or m.group(1) == f"mfu_embedded/{module}_data.h":
                continue  # its own module, or its own embedded data (mfu_embed_files)
            if target == "testing" and path.name.endswith("_test.cc"):
                continue  # test fixtures (src/testing) serve every module's tests
            if target not in ALLOWED.get(module, set()):
                errors.append(f"{path.relative_to(ROOT)}: module '{module}' may not include {m.group(1)}")
    for e in errors:
        print(e)
    print(f"check_includes: {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
