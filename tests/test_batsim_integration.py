"""Integration with a real Batsim 4.2 (``batsim`` on PATH); every test is skipped, with the reason, without one.

On the golden cases (zero-latency platforms, where Batsim's times are exact):
- our ``easy`` scheduler run by :func:`batreplay.batsim_launcher.run_with_batsim` against real Batsim and
  in-process against the embedded engine must give identical out_jobs.csv values;
- pybatsim's ``easyBackfill`` through the launcher must reproduce the recorded Batsim outputs
  (``../shared/batsim-golden/CASE/out_jobs.csv``), and the probe schedulers too with Batsim's dynamic-job flags;
- a ``delay`` profile of 0 s, which Batsim refuses while still exiting with status 0, must be reported as
  "Batsim wrote no output".
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from batreplay.batsim_launcher import BatsimLaunchError, BatsimNoOutput, check_batsim_version, run_with_batsim
from batreplay.engine.inprocess import run_scheduler
from batreplay.engine.outputs import jobs_frame
from batreplay.schedulers.registry import load_scheduler
from batsim_doubles import PRINTED_TOLERANCE, PROBES_DIR, batsim_options, engine_for
from conftest import GOLDEN, golden_cases

TIME_COLUMNS = ["submission_time", "requested_time", "starting_time", "execution_time", "finish_time",
                "waiting_time", "turnaround_time"]


@pytest.fixture(scope="module")
def batsim():
    """The ``batsim`` on PATH, checked to be a 4.2.x release; skips the module's tests otherwise."""
    path = shutil.which("batsim")
    if path is None:
        pytest.skip("batsim 4.2.x not on PATH: the real-Batsim integration tests need it "
                    "(see docs/real-batsim.md to install it); the ZeroMQ playback tests cover the protocol")
    try:
        check_batsim_version(path)
    except BatsimLaunchError as error:
        pytest.skip(f"the batsim on PATH is not usable for these tests: {error}")
    return path


def _static_cases(scheduler_name: str) -> list[str]:
    return [c for c in golden_cases() if (GOLDEN / c / "scheduler.txt").read_text().split()[:1] == [scheduler_name]]


def _same_jobs(ours: pd.DataFrame, theirs: pd.DataFrame, what: str) -> None:
    """Same jobs in the same order, same states and allocations, the same times (as printed)."""
    ours = ours.astype({"job_id": str}).reset_index(drop=True)
    theirs = theirs.astype({"job_id": str}).reset_index(drop=True)
    assert list(ours["job_id"]) == list(theirs["job_id"]), f"{what}: jobs or their order differ"
    assert list(ours["final_state"]) == list(theirs["final_state"]), what
    assert list(ours["allocated_resources"].fillna("").astype(str)) == \
        list(theirs["allocated_resources"].fillna("").astype(str)), what
    for column in TIME_COLUMNS:
        got, expected = ours[column].astype(float), theirs[column].astype(float)
        assert (got.isna() == expected.isna()).all(), f"{what}: {column}"
        gap = (got - expected).abs().fillna(0.0).max()
        assert gap <= PRINTED_TOLERANCE, f"{what}: {column} differs by {gap} s"


@pytest.mark.parametrize("case", _static_cases("easyBackfill"))
def test_easy_on_real_batsim_equals_embedded_engine(batsim, case, tmp_path):
    folder = GOLDEN / case
    result = run_with_batsim(folder / "platform.xml", folder / "workload.json", load_scheduler("easy"),
                             tmp_path / "real", batsim_path=batsim, timeout=120.0)
    engine = engine_for(folder / "platform.xml", folder / "workload.json", batsim_options(folder))
    run_scheduler(engine, load_scheduler("easy"))
    _same_jobs(pd.read_csv(result.out_jobs), jobs_frame(engine.records), f"{case}: real Batsim vs engine")


@pytest.mark.parametrize("case", _static_cases("easyBackfill"))
def test_easy_backfill_through_the_launcher_reproduces_the_recording(batsim, case, tmp_path):
    from batsim.tools.launcher import instanciate_scheduler

    folder = GOLDEN / case
    result = run_with_batsim(folder / "platform.xml", folder / "workload.json",
                             instanciate_scheduler("easyBackfill", {}), tmp_path / "real", batsim_path=batsim,
                             timeout=120.0)
    assert result.messages == len((folder / "transcript.jsonl").read_text().splitlines()) // 2
    _same_jobs(pd.read_csv(result.out_jobs), pd.read_csv(folder / "out_jobs.csv"), f"{case}: launcher vs recording")


@pytest.mark.parametrize("case", [c for c in golden_cases() if batsim_options(GOLDEN / c).dynamic_jobs])
def test_dynamic_probes_through_the_launcher_reproduce_the_recording(batsim, case, tmp_path):
    folder = GOLDEN / case
    probe = (folder / "scheduler.txt").read_text().split()[0]
    options = batsim_options(folder)
    result = run_with_batsim(folder / "platform.xml", folder / "workload.json",
                             load_scheduler(PROBES_DIR / f"{probe}.py"), tmp_path / "real", batsim_path=batsim,
                             dynamic_jobs=options.dynamic_jobs,
                             acknowledge_dynamic_jobs=options.acknowledge_dynamic_jobs,
                             profile_reuse=options.profile_reuse, timeout=120.0)
    _same_jobs(pd.read_csv(result.out_jobs), pd.read_csv(folder / "out_jobs.csv"), f"{case}: launcher vs recording")


def test_zero_delay_profile_is_reported_as_no_output(batsim, tmp_path):
    folder = GOLDEN / "delays"
    workload = {"nb_res": 4, "jobs": [{"id": "0", "subtime": 0, "walltime": 10, "res": 1, "profile": "d0"}],
                "profiles": {"d0": {"type": "delay", "delay": 0}}}
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(workload))
    with pytest.raises(BatsimNoOutput, match="^Batsim wrote no output"):
        run_with_batsim(folder / "platform.xml", path, load_scheduler("easy"), tmp_path / "real",
                        batsim_path=batsim, timeout=60.0)
