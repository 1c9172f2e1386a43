"""Runs launched by the web GUI: a worker process each (the campaign's), progress, reuse, cancellation that leaves
nothing behind, failures with their one-line error, and the Runs list read back from the files."""

from __future__ import annotations

import json
import os
import time

import pytest

from batreplay.ui.launcher import CANCELLED, DONE, FAILED, Launcher, progress_path
from batreplay.ui.run_form import RunForm, build_run
from batreplay.ui.run_index import list_runs, run_directory
from batreplay.ui.sandbox import Sandbox
from conftest import WORKLOADS
from ui_server import SLOW_SCHEDULER

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")
#: Only a failure waits this long (s).
PATIENCE_S = 300


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.1)


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "cache"))
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / SLOW_SCHEDULER[0]).write_text(SLOW_SCHEDULER[1])
    return Sandbox(tmp_path / "runs", [WORKLOADS, inputs])


def test_a_run_is_done_once_and_then_reused_and_listed(sandbox):
    launcher = Launcher(sandbox.runs_dir)
    planned = build_run(RunForm(workload=str(KTH), max_jobs=400), sandbox)
    state = launcher.submit(planned.run_id, planned.spec)
    assert launcher.submit(planned.run_id, planned.spec) is state  # under way: not started twice
    wait_until(lambda: state.status not in ("queued", "running"), "the run to end")
    assert (state.status, state.reused) == (DONE, False), state.error
    folder = run_directory(sandbox.runs_dir, planned.run_id)
    instance = json.loads((folder / "instance.json").read_text())
    assert instance["campaign"] == "ui" and instance["params"]["max_jobs"] == 400
    assert not progress_path(sandbox.runs_dir, planned.run_id).exists()
    again = launcher.submit(planned.run_id, planned.spec)
    assert (again.status, again.reused) == (DONE, True)
    row, = list_runs(sandbox.runs_dir, launcher.states())
    metrics = json.loads((folder / "metrics.json").read_text())
    assert row["run_id"] == planned.run_id and row["status"] == DONE and row["nb_jobs"] == 400
    assert row["makespan"] == metrics["makespan"] and row["scheduler"] == "easy"
    launcher.shutdown()


def test_a_cancelled_run_is_stopped_mid_simulation_and_leaves_nothing(sandbox):
    """SIGTERM reaches the worker while the scheduler's code runs (a scheduler file that thinks 20 ms per job): the
    run is cancelled, not failed (the stop is not taken for the scheduler exiting), and neither a run directory,
    a staging folder nor a failure record is left."""
    launcher = Launcher(sandbox.runs_dir)
    planned = build_run(RunForm(workload=str(KTH), scheduler=SLOW_SCHEDULER[0], max_jobs=3000), sandbox)
    state = launcher.submit(planned.run_id, planned.spec)
    wait_until(lambda: launcher.state(planned.run_id).done > 0 or state.status not in ("queued", "running"),
               "jobs to end")
    assert state.status == "running", state.error
    assert launcher.cancel(planned.run_id)
    wait_until(lambda: state.status not in ("queued", "running"), "the run to stop")
    assert state.status == CANCELLED, state.error
    assert os.listdir(sandbox.runs_dir) == []
    assert list_runs(sandbox.runs_dir) == []  # nothing on disk: a restarted app lists nothing
    row, = list_runs(sandbox.runs_dir, launcher.states())  # this app remembers it was cancelled
    assert (row["run_id"], row["status"]) == (planned.run_id, CANCELLED)
    assert not launcher.cancel(planned.run_id)  # nothing left to cancel
    launcher.shutdown()


def test_a_failed_run_says_why_in_one_line_and_is_listed_so(sandbox, tmp_path):
    launcher = Launcher(sandbox.runs_dir)
    planned = build_run(RunForm(workload=str(KTH), max_jobs=50), sandbox)
    broken = planned.spec.replace(platform=str(tmp_path / "vanished.xml"))  # the file went away meanwhile
    state = launcher.submit(planned.run_id, broken)
    wait_until(lambda: state.status not in ("queued", "running"), "the run to end")
    assert state.status == FAILED and "vanished.xml" in state.error and "\n" not in state.error
    assert not (sandbox.runs_dir / planned.run_id).exists()
    row, = list_runs(sandbox.runs_dir)
    assert row["status"] == FAILED and "vanished.xml" in row["error"]
    launcher.shutdown()
