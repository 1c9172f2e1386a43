"""Speed and memory of full-log simulations with the embedded engine (run by hand, not in CI).

Each (log, scheduler) pair runs in a fresh subprocess through ``batreplay.run.runner.run`` (SWF reading,
conversion, simulation, output files), so that the peak resident memory (``ru_maxrss``) is the pair's own.

Usage::

    uv run python benchmarks/bench_schedulers.py                       # KTH-SP2, SDSC-SP2, HPC2N x FCFS, EASY
    uv run python benchmarks/bench_schedulers.py --logs KTH-SP2-1996-2.1-cln --schedulers easy
    uv run python benchmarks/bench_schedulers.py --logs KTH-SP2-1996-2.1-cln --schedulers all   # every registered name

Prints one Markdown table row per pair: jobs simulated, Batsim messages, wall seconds (whole run and
simulation only), jobs per second and peak memory (MB).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT.parent / "shared" / "workloads"
PLATFORMS = {"KTH-SP2-1996-2.1-cln": 100, "SDSC-SP2-1998-4.2-cln": 128, "HPC2N-2002-2.2-cln": 240}

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from batreplay.run.runner import RunSpec, run
from batreplay.platforms.generate import write_platform
log, nodes, scheduler, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
platform = out.parent / f"platform-{nodes}.xml"
write_platform(platform, nodes, 1e9)
sim = {}
def progress(now, done, total):
    sim.setdefault("first", time.perf_counter())
t0 = time.perf_counter()
result = run(RunSpec.build(workload=Path(log), platform=platform, scheduler=scheduler, out_dir=out, force=True),
             on_progress=progress)
wall = time.perf_counter() - t0
print(json.dumps({"jobs": result.metrics["nb_jobs"], "messages": result.messages, "wall": wall,
                  "simulation": wall - (sim["first"] - t0),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="*", default=list(PLATFORMS))
    parser.add_argument("--schedulers", nargs="*", default=["fcfs", "easy"],
                        help="names of batreplay.schedulers.registry.SCHEDULERS, or 'all' for every one")
    args = parser.parse_args()
    if args.schedulers == ["all"]:
        from batreplay.schedulers.registry import SCHEDULERS

        args.schedulers = list(SCHEDULERS)
    print("| log | scheduler | jobs | messages | wall (s) | simulation (s) | jobs/s (simulation) | peak MB |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for log in args.logs:
            for scheduler in args.schedulers:
                out = Path(tmp) / f"{log}-{scheduler}"
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, str(WORKLOADS / f"{log}.swf.gz"), str(PLATFORMS[log]),
                     scheduler, str(out)], capture_output=True, text=True, check=True)
                r = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"| {log} | {scheduler} | {r['jobs']} | {r['messages']} | {r['wall']:.1f} | "
                      f"{r['simulation']:.1f} | {r['jobs'] / r['simulation']:.0f} | {r['peak_mb']:.0f} |",
                      flush=True)


if __name__ == "__main__":
    main()
