"""Check the results digest on this machine, or write it anew (`cloudsim.run.digest`).

    python benchmarks/digest.py            # compare with tests/digest.json: the machine, its stack, every difference
    python benchmarks/digest.py --write    # recompute and write tests/digest.json, listing what changed

It needs no GPU: it exists so that another processor and library stack can be checked against the
committed digest whenever one is at hand (copy the checkout and the data folder there, install the
project, run this). It prints the processor, its SIMD extensions and the versions of every library a
result could depend on, then each difference: the run, the table, the first differing row and both
values. Exit status 0 when the digest is identical, 1 when it differs, 2 when it cannot be checked (no
digest file, a damaged one, a run whose data is absent). About 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import sys
import time
from pathlib import Path

from benchmark_common import ROOT, code_version

DIGEST = ROOT / "tests" / "digest.json"
STACK = ("numpy", "pandas", "pyarrow", "numba", "llvmlite", "torch", "simpy", "gymnasium", "stable-baselines3")


def machine() -> list[str]:
    """What a result could depend on: the processor, its vector extensions, Python and the libraries."""
    model, flags = platform.processor() or "unknown", []
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model in ("unknown", "", platform.machine()):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                break
    except OSError:
        pass
    simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512vl", "avx512_fp16") if f in flags]
    versions = []
    for name in STACK:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} (absent)")
    code = code_version()
    return [f"machine: {model}, {platform.machine()}, SIMD {' '.join(simd) or 'unknown'}",
            f"python {platform.python_version()}; " + ", ".join(versions),
            f"code: {code if len(code) < 300 else code[:300] + ' ...'}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="recompute and write the digest (tests/digest.json)")
    parser.add_argument("--file", type=Path, default=DIGEST, help="the digest file (default tests/digest.json)")
    parser.add_argument("--data", type=Path, default=None, help="the real samples (default $CLOUDSIM_DATA or "
                                                                  "../shared/data)")
    args = parser.parse_args(argv)
    from cloudsim.run import digest

    committed = None
    if args.file.exists():
        try:
            committed = digest.read(args.file)
            committed["runs"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            if not args.write:
                print(f"{args.file}: not a digest ({type(err).__name__}: {err}); write one with --write",
                      file=sys.stderr)
                return 2
            committed = None
    elif not args.write:
        print(f"{args.file}: no such file; write the digest with --write (or give --file)", file=sys.stderr)
        return 2
    if args.write and not args.file.parent.is_dir():
        print(f"{args.file.parent}: no such folder for --file", file=sys.stderr)
        return 2
    for line in machine():
        print(line, flush=True)
    started = time.perf_counter()
    computed = digest.compute(args.data, on_run=lambda name, why: print(f"  {name}" + (f": left out, {why}" if why
                                                                                      else ""), flush=True))
    print(f"{len(computed['runs'])} run(s) in {time.perf_counter() - started:.1f} s")
    if computed["missing"]:
        print(f"{len(computed['missing'])} run(s) left out: their data is absent (first: "
              f"{next(iter(computed['missing'].values()))}); give the samples' folder with --data or $CLOUDSIM_DATA",
              file=sys.stderr)
        return 2
    changes = digest.differences(committed or {"runs": {}}, computed, limit=200)
    if args.write:
        digest.write(computed, args.file)
        print(f"wrote {args.file}; " + ("no digest before" if committed is None else
                                         f"{len(changes)} difference(s) from the one before:" if changes
                                         else "identical to the one before"))
        for line in changes if committed is not None else ():
            print(f"  {line}")
        return 0
    if changes:
        print(f"DIFFERENT from {args.file}:")
        for line in changes:
            print(f"  {line}")
        return 1
    print(f"identical to {args.file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
