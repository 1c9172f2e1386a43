"""batreplay's embedded engine against a real Batsim 4.2.1, side by side on one log (run by hand, not in CI).

Three ways to simulate the same workload, each timed as a user would run it, in turn, ``--repeat`` times:

- ``batreplay``: the whole ``batreplay run`` command (SWF reading and conversion, embedded simulation with
  our EASY, output files, metrics);
- ``batsim + pybatsim easyBackfill``: a real ``batsim`` and pybatsim's own ``easyBackfill`` decision
  process (``pybatsim easyBackfill -t 0``), two processes over ZeroMQ, on the ``workload.json`` that
  ``batreplay run`` wrote (the conversion is not counted for them);
- ``batsim + batreplay easy.py``: the same real ``batsim`` with our ``schedulers/easy.py`` loaded by
  pybatsim's launcher, which must write the very ``out_jobs.csv`` of the embedded run (checked).

On this shared machine absolute times vary by 2x from one moment to the next: compare the ratios, which
are measured within one run of this script (medians over the repetitions, runs interleaved).

Usage::

    uv run python benchmarks/bench_vs_batsim.py                          # full KTH-SP2, 3 repetitions
    uv run python benchmarks/bench_vs_batsim.py --log SDSC-SP2-1998-4.2-cln --platform sdsc-sp2 --repeat 1

Needs ``batsim`` 4.2.x on PATH (``SKIP_PYBATSIM=1 bash ../shared/batsim/build.sh``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT.parent / "shared" / "workloads"
BIN = Path(sys.executable).parent


def _wait(process: subprocess.Popen) -> tuple[int, float]:
    """Reap ``process``; its exit status and peak resident memory (MB, from ``wait4``)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024


def time_batreplay(log: Path, platform: str, out: Path) -> tuple[float, float]:
    """Wall seconds and peak MB of ``batreplay run`` (EASY, embedded engine)."""
    started = time.perf_counter()
    process = subprocess.Popen([str(BIN / "batreplay"), "run", "--workload", str(log), "--platform", platform,
                                "--scheduler", "easy", "--out", str(out), "--force", "--quiet"],
                               stdout=subprocess.DEVNULL)
    status, peak = _wait(process)
    if status != 0:
        raise SystemExit(f"batreplay run failed with status {status}")
    return time.perf_counter() - started, peak


def time_real_batsim(batsim: str, platform: Path, workload: Path, scheduler: str, out: Path) -> tuple[float, float]:
    """Wall seconds (both processes started to both ended) and the larger peak MB of ``batsim`` next to
    pybatsim's launcher running ``scheduler`` (a pybatsim scheduler name or file)."""
    from batreplay.engine.batsim_launcher import BatsimLaunchError, run_pybatsim_next_to_batsim

    try:
        result = run_pybatsim_next_to_batsim(batsim, platform, workload, scheduler, out, cwd=ROOT)
    except BatsimLaunchError as error:
        raise SystemExit(str(error)) from None
    return result.wall_seconds, result.peak_mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default="KTH-SP2-1996-2.1-cln", help="log name in ../shared/workloads")
    parser.add_argument("--platform", default="kth-sp2", help="shipped platform name or file")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (medians are reported)")
    args = parser.parse_args()
    batsim = shutil.which("batsim")
    if batsim is None:
        raise SystemExit("no batsim on PATH: build one with SKIP_PYBATSIM=1 bash ../shared/batsim/build.sh")
    from batreplay.run.runner import resolve_platform

    platform = resolve_platform(args.platform)
    log = WORKLOADS / f"{args.log}.swf.gz"
    times: dict[str, list[float]] = {"batreplay": [], "pybatsim": [], "ours": []}
    peaks: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for i in range(args.repeat):
            wall, peak = time_batreplay(log, args.platform, tmp / "embedded")
            times["batreplay"].append(wall)
            peaks["batreplay"] = max(peak, peaks.get("batreplay", 0.0))
            workload = tmp / "embedded" / "workload.json"
            for key, scheduler in (("pybatsim", "easyBackfill"), ("ours", str(ROOT / "schedulers" / "easy.py"))):
                out = tmp / f"{key}-{i}"
                wall, peak = time_real_batsim(batsim, platform, workload, scheduler, out)
                times[key].append(wall)
                peaks[key] = max(peak, peaks.get(key, 0.0))
            same = (tmp / f"ours-{i}" / "out_jobs.csv").read_bytes() == \
                (tmp / "embedded" / "out_jobs.csv").read_bytes()
            print(f"repetition {i + 1}: batreplay {times['batreplay'][-1]:.1f} s, batsim + easyBackfill "
                  f"{times['pybatsim'][-1]:.1f} s, batsim + our easy.py {times['ours'][-1]:.1f} s; "
                  f"our easy.py on real Batsim writes the embedded out_jobs.csv: {same}", flush=True)
            if not same:
                print("  WARNING: our EASY on real Batsim and on the embedded engine wrote different "
                      "out_jobs.csv (see tests/engine/test_real_batsim_compat.py)", flush=True)
    median = {key: statistics.median(values) for key, values in times.items()}
    print(f"\n{args.log} (EASY), {args.repeat} repetition(s), medians:\n")
    print("| run | wall (s) | peak MB | ratio to batreplay |")
    print("|---|---|---|---|")
    for key, label in (("batreplay", "batreplay run (embedded engine)"),
                       ("pybatsim", "real Batsim 4.2.1 + pybatsim easyBackfill"),
                       ("ours", "real Batsim 4.2.1 + batreplay schedulers/easy.py")):
        print(f"| {label} | {median[key]:.1f} | {peaks[key]:.0f} | {median[key] / median['batreplay']:.2f} |")


if __name__ == "__main__":
    main()
