#!/usr/bin/env python3
"""Text hygiene of tracked sources: no trailing whitespace, no CRLF, a final
newline, ASCII only in C++ and CMake files (ninja misc/ci.py)."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
files = subprocess.run(["git", "ls-files", "*.cc", "*.h", "*.cmake", "CMakeLists.txt", "*.py", "*/CMakeLists.txt"],
                       cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
errors = []
for name in files:
    data = (ROOT / name).read_bytes()
    if b"\r\n" in data:
        errors.append(f"{name}: CRLF line endings")
    if data and not data.endswith(b"\n"):
        errors.append(f"{name}: no final newline")
    for i, line in enumerate(data.split(b"\n"), 1):
        if line.rstrip() != line:
            errors.append(f"{name}:{i}: trailing whitespace")
        if any(b > 127 for b in line):
            errors.append(f"{name}:{i}: non-ASCII byte")
for e in errors[:50]:
    print(e)
print(f"lint_text: {len(files)} files, {len(errors)} problem(s)")
sys.exit(1 if errors else 0)
