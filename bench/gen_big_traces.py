#!/usr/bin/env python3
"""Generates the large adversarial traces of bench/run_robustness_bench.sh.

  gen_big_traces.py whitespace OUT.json.gz GB   two events with GB gigabytes
      (10^9 bytes) of spaces between them inside traceEvents, as multi-member
      gzip (one compressed 64 MiB member of spaces repeated: seconds, not
      minutes, to write 10 GB).
  gen_big_traces.py events OUT.json MILLIONS    a plain Kineto-like trace of
      MILLIONS x 10^6 complete events (a CPU op, its cudaLaunchKernel and the
      kernel, in turn; about 90 bytes each, so 30 M events is about 2.7 GB).

The outputs are never committed: write them under /tmp (check `df -h /tmp`).
"""

import sys
import zlib

HEAD = b'{"schemaVersion":1,"traceEvents":[\n'
TAIL = b'\n],"baseTimeNanoseconds":0}\n'


def gzip_member(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def whitespace(path: str, gigabytes: float) -> None:
    block = 64 << 20
    total = int(gigabytes * 1e9)
    event = b'{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"stream":7}}'
    spaces = gzip_member(b" " * block)
    with open(path, "wb") as f:
        f.write(gzip_member(HEAD + event % 1 + b","))
        for _ in range(total // block):
            f.write(spaces)
        f.write(gzip_member(b" " * (total % block) + event % 100 + TAIL))


def events(path: str, millions: float) -> None:
    n = int(millions * 1e6)
    kinds = (
        '{"ph":"X","cat":"cpu_op","name":"mm","pid":1,"tid":1,"ts":%d,"dur":4}',
        '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":2,"args":{"correlation":%d}}',
        '{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":%d,"dur":3,"args":{"correlation":%d}}',
    )
    with open(path, "w") as f:
        f.write(HEAD.decode())
        batch = []
        for i in range(n):
            k = i % 3
            ts = i * 2
            batch.append(kinds[0] % ts if k == 0 else kinds[k] % (ts, i // 3))
            if len(batch) == 100000:
                f.write(",\n".join(batch) + ",\n")
                batch = []
        batch.append(kinds[0] % (n * 2))
        f.write(",\n".join(batch))
        f.write(TAIL.decode())


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in ("whitespace", "events"):
        print(__doc__, file=sys.stderr)
        return 2
    size = float(sys.argv[3])
    (whitespace if sys.argv[1] == "whitespace" else events)(sys.argv[2], size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
