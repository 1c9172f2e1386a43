"""The embedded engine against the project's own recordings of real Batsim 4.2.1 runs (``tests/golden/``, made by
``tests/golden_recording.py``; the README there lists the cases): composed profiles with ``repeat``, nested, with
return codes, walltimes that end a job in the middle of a round, kills in the middle of a step (the progress tree),
and composed jobs on shared hosts.

Two checks per case, as for the shared recordings (``test_engine_golden.py``):
1. Transcript replay: fed the recorded replies, the engine sends exactly the recorded Batsim messages.
2. Outputs: the case's scheduler, run on the engine, writes the recorded out_jobs.csv byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from batreplay.engine.inprocess import run_scheduler
from batreplay.formats.out_jobs_writer import write_out_jobs_columns
from batreplay.formats.out_schedule import schedule_summary
from batsim_doubles import batsim_options, engine_for, replay_transcript
from golden_recording import RECORDED, case_scheduler, recorded_cases


def embedded_out_jobs(case_dir: Path, out: Path) -> Path:
    """The case's scheduler run on the embedded engine; its out_jobs.csv written to ``out``."""
    engine = engine_for(case_dir / "platform.xml", case_dir / "workload.json", batsim_options(case_dir))
    run_scheduler(engine, case_scheduler(case_dir))
    write_out_jobs_columns(engine.record_columns(), out)
    return out


@pytest.mark.parametrize("case", recorded_cases())
def test_engine_replays_the_recorded_transcript(case):
    assert replay_transcript(RECORDED / case) > 2


@pytest.mark.parametrize("case", recorded_cases())
def test_the_cases_scheduler_on_the_engine_writes_the_recorded_out_jobs(case, tmp_path):
    ours = embedded_out_jobs(RECORDED / case, tmp_path / "out_jobs.csv").read_bytes()
    assert ours == (RECORDED / case / "out_jobs.csv").read_bytes()


@pytest.mark.parametrize("case", recorded_cases())
def test_the_schedule_summary_of_the_recorded_jobs_is_batsims(case):
    """out_schedule.csv's figures from the recorded out_jobs.csv are Batsim's: failed jobs count as killed."""
    jobs = pd.read_csv(RECORDED / case / "out_jobs.csv")
    batsim = pd.read_csv(RECORDED / case / "out_schedule.csv").iloc[0]
    summary = schedule_summary(jobs, 4, 0.0, 0.0, check=False)
    for column in ["makespan", "max_waiting_time", "mean_waiting_time", "mean_turnaround_time", "nb_jobs",
                   "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_success", "success_rate"]:
        assert summary[column] == pytest.approx(float(batsim[column]), rel=1e-9, abs=1e-5), column
