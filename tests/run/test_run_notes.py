"""A run says what it read before it simulates: the input notes come before the first progress report."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd

from batreplay import atomic
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


def test_input_notes_are_given_before_the_simulation_starts(tmp_path):
    events: list[tuple[str, object]] = []
    spec = RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=tmp_path / "run", max_jobs=3000)
    result = run(spec, on_progress=lambda now, done, total: events.append(("progress", done)),
                 on_notes=lambda notes: events.append(("notes", list(notes))))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "notes" and kinds.count("notes") == 1 and kinds.count("progress") >= 1
    done = [value for kind, value in events if kind == "progress"]
    assert done == sorted(done)  # throttled to a few calls per second, but the last one says all jobs completed
    assert done[-1] == len(pd.read_csv(result.out_dir / "out_jobs.csv")) > 2900
    notes = events[0][1]
    assert notes == result.input_notes
    assert notes[0].startswith("SWF anomalies in") and "run_time_zero" in notes[0]
    assert any("dropped run_time_zero" in note for note in notes)  # KTH-SP2's zero-run-time jobs, said at once


def test_cleaned_leftovers_are_noted_first(tmp_path):
    """The leftover of a run killed earlier in the same folder is removed first, and said first."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = tmp_path / f".old-run.{atomic._host_id()}-{int(dead.stdout)}-abcd1234.tmp"
    leftover.mkdir()
    spec = RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="fcfs", out_dir=tmp_path / "run", max_jobs=50)
    seen: list[list[str]] = []
    result = run(spec, on_notes=seen.append)
    assert len(seen) == 2 and not leftover.exists()
    assert leftover.name in seen[0][0]
    assert seen[0] + seen[1] == result.input_notes
