#!/usr/bin/env python3
"""Fails when a string literal in the library names a CLI flag or command.

Library messages (Status messages, notes, findings, diagnostics) name request
parameters as base::Param does ("parameter 'max_events'") and other reports
as base::CommandRef does ("command 'hw list'"); the CLI rewrites both into
its spelling ("--max-events", "'mfu hw list'", cli/help.cc InFlagSpelling)
on everything it prints. A literal "--flag" or "'mfu verb'" in src/ outside
src/cli would reach a Python or HTTP front end in the CLI's spelling, so it
is a violation unless ALLOWED names the file and the literal, with the
reason it must stay. Tests (*_test.cc) are not checked: they may assert the
CLI's text."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# A flag ("--max-events", not "--" alone or "--->") or a command in the CLI's
# spelling ("'mfu hw list'", "run 'mfu goodput'").
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
COMMAND = re.compile(r"'mfu [a-z][a-z ]*")
# (file, the flag or command as matched) -> why it keeps the CLI's spelling.
ALLOWED = {
    # Prometheus HELP text: the exporter serves it over HTTP itself (no CLI
    # rewrite), and it tells a dashboard reader which `mfu fleet serve` flag
    # feeds the series; the metric table is also docs/metrics.md's source.
    ("src/fleet/fleet_metrics_table.cc", "--jobs"): "HELP text served over HTTP names the serve flag",
    ("src/fleet/fleet_metrics_table.cc", "--goodput-events"): "HELP text served over HTTP names the serve flag",
    # Provenance stored in data/efficiency/vector_kernels.csv's source column
    # and written back by `mfu calibrate --operators --write`: it records the
    # command line that produced a row, so it is data, not a message, and
    # must match the rows already in the table.
    ("src/perf/operator_profiles.cc", "--operators"): "a data row's provenance: the command that fitted it",
    # Another program's flags, not mfu's: sacct's output mode and Megatron-LM's
    # overlap options, which the user passes to those programs.
    ("src/goodput/sacct_reader.cc", "--parsable2"): "sacct's own flag",
    ("src/trace/verdict.cc", "--overlap-grad-reduce"): "Megatron-LM's own flag",
    ("src/trace/verdict.cc", "--overlap-param-gather"): "Megatron-LM's own flag",
    ("src/trace/verdict.cc", "--tp-comm-overlap"): "Megatron-LM's own flag",
}
STRING = re.compile(r'R"([^(\s]*)\((.*?)\)\1"|"((?:[^"\\\n]|\\.)*)"', re.S)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
CHAR = re.compile(r"'(?:[^'\\\n]|\\.)'")


def literals(text: str):
    """(line, literal) for each string literal outside comments."""
    pos = 0
    while True:
        s = STRING.search(text, pos)
        c = COMMENT.search(text, pos)
        ch = CHAR.search(text, pos)
        first = min((m for m in (s, c, ch) if m), key=lambda m: m.start(), default=None)
        if first is None:
            return
        if first is s:
            yield text.count("\n", 0, s.start()) + 1, s.group(2) if s.group(2) is not None else s.group(3)
        pos = first.end()


def main() -> int:
    errors = []
    used = set()
    for path in sorted((ROOT / "src").rglob("*")):
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix not in (".cc", ".h") or rel.startswith("src/cli/") or path.stem.endswith("_test"):
            continue
        for line, literal in literals(path.read_text()):
            for m in list(FLAG.finditer(literal)) + list(COMMAND.finditer(literal)):
                if (rel, m.group(0)) in ALLOWED:
                    used.add((rel, m.group(0)))
                    continue
                errors.append(f"{rel}:{line}: '{m.group(0)}' in a library message: name the parameter "
                              f"(base::Param) or the report (base::CommandRef); the CLI spells it")
    for key in sorted(set(ALLOWED) - used):
        errors.append(f"check_messages.py: ALLOWED entry {key} matches nothing: remove it")
    for e in errors:
        print(e)
    print(f"check_messages: {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
