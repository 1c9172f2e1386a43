"""What a run spends outside its simulation: importing the runner, and writing the run directory's files (run by
hand, not in CI; nothing asserts a time).

Two tables, in Markdown:

1. **Import**: ``python -X importtime -c "import batreplay.run.runner"`` in fresh interpreters, the runner's
   cumulative import time (median of ``--repeat``), and whether pandas was imported by it; for this tree's Python
   and each ``--compare NAME=PYTHON`` (another tree's ``.venv/bin/python``: before/after side by side), the
   interpreters taking turns. ``PYTHONDONTWRITEBYTECODE`` is removed from their environment (this machine sets
   it: each start would recompile an editable install's sources) and each runs once to warm up.
2. **Outputs**: in this process, on one log (default KTH-SP2, 28,476 jobs): ``workload.json`` (``json.dumps``),
   ``jobs.csv`` (:func:`batreplay.formats.table_csv.write_csv_table`), ``out_jobs.csv``
   (:func:`batreplay.formats.out_jobs_writer.write_out_jobs_text`), the checked jobs table the metrics read
   (``WrittenJobs.table()``, pandas) and ``out_schedule.csv`` (aggregates of the engine's columns and
   :func:`batreplay.formats.out_schedule.write_out_schedule`), median of ``--repeat`` each. The rows "pandas
   to_csv" time the pandas writers that ``jobs.csv`` and ``out_schedule.csv`` replaced (the reference for their
   bytes), for comparison only: no run uses them. The engine's record columns are taken from the ``out_jobs.csv``
   of a run of the log (``--run-dir``, or one EASY run made first in a temporary folder).

``--check`` also compares, for every log of ``../shared/workloads``, the bytes of ``jobs.csv`` written by
``write_csv_table`` with pandas' ``to_csv`` of the same job table (default conversion; takes minutes).

Usage::

    uv run python benchmarks/bench_run_outputs.py
    uv run python benchmarks/bench_run_outputs.py --compare before=/tmp/before/.venv/bin/python --repeat 9
    uv run python benchmarks/bench_run_outputs.py --log SDSC-SP2-1998-4.2-cln --platform sdsc-sp2 --check
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ROOT.parent / "shared" / "workloads"
ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
IMPORT_PROBE = "import sys, batreplay.run.runner; print('pandas' in sys.modules)"


def runner_import(python: str) -> tuple[float, bool]:
    """Seconds the runner took to import (``-X importtime``, cumulative) in a new interpreter, and whether pandas
    was imported."""
    done = subprocess.run([python, "-X", "importtime", "-c", IMPORT_PROBE], capture_output=True, text=True,
                          check=True, env=ENVIRONMENT, cwd=tempfile.gettempdir())
    for line in done.stderr.splitlines():
        fields = line.split("|")
        if len(fields) == 3 and fields[2].strip() == "batreplay.run.runner" and not fields[2].startswith("  "):
            return int(fields[1]) / 1e6, done.stdout.strip() == "True"
    raise RuntimeError(f"{python}: no import time for batreplay.run.runner")


def import_table(pythons: dict[str, str], repeat: int) -> list[str]:
    for python in pythons.values():  # warm-up: bytecode, file pages
        runner_import(python)
    times: dict[str, list[float]] = {name: [] for name in pythons}
    pandas: dict[str, bool] = {}
    for turn in range(repeat):
        names = list(pythons)
        for name in names[turn % len(names):] + names[:turn % len(names)]:  # each takes its turn being first
            seconds, pandas[name] = runner_import(pythons[name])
            times[name].append(seconds)
    first = statistics.median(times[next(iter(pythons))])
    rows = ["| Python | import batreplay.run.runner, median (s) | runs (s) | pandas imported | / first row |",
            "|---|---|---|---|---|"]
    for name, values in times.items():
        runs = " ".join(f"{value:.3f}" for value in values)
        rows.append(f"| {name} | {statistics.median(values):.3f} | {runs} | {pandas[name]} | "
                    f"{statistics.median(values) / first:.2f} |")
    return rows


def median_seconds(action, repeat: int) -> float:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def record_columns(out_jobs: Path) -> dict:
    """The engine's record columns (:data:`RECORD_FIELDS`) of a run, from its ``out_jobs.csv``."""
    import numpy as np

    from batreplay.formats.out_jobs import read_out_jobs
    from batreplay.formats.out_jobs_writer import RECORD_FIELDS

    table = read_out_jobs(out_jobs)
    columns = {}
    for name in RECORD_FIELDS:
        values = table[name]
        if values.dtype.kind == "f":
            array = values.to_numpy(dtype=np.float64).copy()
            if name == "requested_time":
                array[np.isnan(array)] = -1.0  # (read back as NaN: no walltime)
            columns[name] = array
        else:
            columns[name] = values.astype(str).tolist() if values.dtype.kind == "O" else values.tolist()
    return columns


def outputs_table(log: Path, platform: str, run_dir: Path | None, repeat: int, work: Path) -> list[str]:
    import pandas as pd

    from batreplay.atomic import write_text_atomically
    from batreplay.formats.out_jobs_writer import write_out_jobs_text
    from batreplay.formats.out_schedule import OUT_SCHEDULE_COLUMNS, SUMMARY_COLUMNS, schedule_summary
    from batreplay.formats.out_schedule import write_out_schedule
    from batreplay.formats.table_csv import write_csv_table
    from batreplay.run.runner import RunSpec, load_workload, run

    if run_dir is None:
        run_dir = work / "run"
        print(f"running {log.name} with EASY into {run_dir} ...", file=sys.stderr, flush=True)
        run(RunSpec.build(workload=log, platform=platform, scheduler="easy", out_dir=run_dir))
    spec = RunSpec.build(workload=log, platform=platform, scheduler="easy", out_dir=work / "unused")
    document, job_table, _ = load_workload(spec)
    table = job_table.rename(columns={"submission_time": "recorded_submission_time"})
    columns = record_columns(run_dir / "out_jobs.csv")
    written = write_out_jobs_text(columns, work / "out_jobs.csv")
    summary = schedule_summary({name: columns[name] for name in SUMMARY_COLUMNS}, 100, 1.0, 2.0, check=False)

    def jobs_csv() -> None:
        with open(work / "jobs.csv", "w", encoding="utf-8", newline="") as stream:
            write_csv_table(stream, {name: table[name] for name in table.columns})

    def pandas_out_schedule() -> None:  # the writer write_out_schedule replaced
        write_text_atomically(work / "out_schedule-pandas.csv", pd.DataFrame([summary], columns=OUT_SCHEDULE_COLUMNS)
                              .to_csv(index=False, float_format="%.6f"))

    measured = [
        ("workload.json (json.dumps)", lambda: (work / "workload.json").write_text(json.dumps(document))),
        ("jobs.csv (write_csv_table)", jobs_csv),
        ("jobs.csv, pandas to_csv (replaced; reference)", lambda: table.to_csv(work / "jobs-pandas.csv", index=False)),
        ("out_jobs.csv (write_out_jobs_text)", lambda: write_out_jobs_text(columns, work / "out_jobs.csv")),
        ("out_jobs table for the metrics (WrittenJobs.table, pandas)", written.table),
        ("out_schedule aggregates of the engine's columns (schedule_summary)",
         lambda: schedule_summary({name: columns[name] for name in SUMMARY_COLUMNS}, 100, 1.0, 2.0, check=False)),
        ("out_schedule.csv (write_out_schedule)", lambda: write_out_schedule(summary, work / "out_schedule.csv")),
        ("out_schedule.csv, pandas to_csv (replaced; reference)", pandas_out_schedule),
    ]
    rows = [f"| {log.name}: {len(document['jobs'])} jobs | median (s) of {repeat} |", "|---|---|"]
    for label, action in measured:
        action()  # warm-up (lazy imports of the writers)
        rows.append(f"| {label} | {median_seconds(action, repeat):.4f} |")
    for name in ("jobs", "out_schedule"):
        same = (work / f"{name}.csv").read_bytes() == (work / f"{name}-pandas.csv").read_bytes()
        rows.append(f"| {name}.csv bytes equal pandas' | {same} |")
    return rows


def check_all_logs() -> list[str]:
    from batreplay.formats.table_csv import write_csv_table
    from batreplay.workloads.batsim_workload import swf_to_workload

    rows = ["| log | jobs | jobs.csv bytes equal pandas' to_csv |", "|---|---|---|"]
    for path in sorted(WORKLOADS.glob("*.swf*")):
        table = swf_to_workload(path).job_table.rename(columns={"submission_time": "recorded_submission_time"})
        stream = io.StringIO()
        write_csv_table(stream, {name: table[name] for name in table.columns})
        rows.append(f"| {path.name} | {len(table)} | {stream.getvalue() == table.to_csv(index=False)} |")
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default="KTH-SP2-1996-2.1-cln", help="a log of ../shared/workloads, or a path")
    parser.add_argument("--platform", default="kth-sp2")
    parser.add_argument("--run-dir", type=Path, help="a run directory of --log (default: one EASY run first)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--compare", action="append", default=[], metavar="NAME=PYTHON",
                        help="another tree's Python, for the import table (repeatable)")
    parser.add_argument("--check", action="store_true", help="compare jobs.csv with pandas' on every shared log")
    args = parser.parse_args()
    log = Path(args.log) if Path(args.log).exists() else WORKLOADS / f"{args.log}.swf.gz"
    pythons = {"this tree": sys.executable, **dict(entry.split("=", 1) for entry in args.compare)}
    uptime = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"`uptime`: {uptime}\n")
    print("\n".join(import_table(pythons, args.repeat)) + "\n")
    with tempfile.TemporaryDirectory(prefix="bench-run-outputs-") as work:
        print("\n".join(outputs_table(log, args.platform, args.run_dir, args.repeat, Path(work))) + "\n")
    if args.check:
        print("\n".join(check_all_logs()))


if __name__ == "__main__":
    main()
