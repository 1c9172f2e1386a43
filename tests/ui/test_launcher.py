"""Runs launched by the web GUI: a process of its own each (batreplay.run.isolated, not the campaign machinery),
progress, reuse, cancellation that leaves nothing behind, failures with their one-line error, and the Runs list read
back from the files."""

from __future__ import annotations

import ast
import json
import os
import time

import pytest

from batreplay.ui.launcher import CANCELLED, DONE, FAILED, Launcher, RunState, progress_path, status_line
from batreplay.ui.run_form import RunForm, build_run
from batreplay.ui.run_index import list_runs, run_directory
from batreplay.ui.sandbox import Sandbox
from conftest import REPO_ROOT, WORKLOADS
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
    assert json.loads((folder / "run.json").read_text())["spec"] == planned.spec.to_dict()
    assert not (folder / "instance.json").exists()  # a run of the GUI is no campaign instance
    assert not progress_path(sandbox.runs_dir, planned.run_id).exists()
    assert status_line(state) == f"{planned.run_id}: finished"
    again = launcher.submit(planned.run_id, planned.spec)
    assert (again.status, again.reused) == (DONE, True)
    assert status_line(again) == f"{planned.run_id}: finished (reused: the same run had finished before)"
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
    assert status_line(state) == f"{planned.run_id}: cancelled" and state.error == ""
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
    assert status_line(state) == f"{planned.run_id}: failed: {state.error}"
    assert not (sandbox.runs_dir / planned.run_id).exists()
    row, = list_runs(sandbox.runs_dir)
    assert row["status"] == FAILED and "vanished.xml" in row["error"]
    assert (row["scheduler"], row["platform"]) == ("easy", "vanished.xml")  # the run's choices, from its record
    record = json.loads((sandbox.runs_dir / f"{planned.run_id}.failed.json").read_text())
    assert record["spec"] == broken.to_dict() and "campaign" not in record
    launcher.shutdown()


def test_the_launcher_imports_nothing_of_the_campaigns():
    """Issue 26, item 2: a run launched from the GUI is one run in its own process (batreplay.run.isolated), not a
    campaign instance: ui/launcher.py imports nothing of batreplay.campaign, at the top or inside a function."""
    tree = ast.parse((REPO_ROOT / "ui" / "launcher.py").read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    relative = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert "batreplay.run.isolated" in imported and relative == []
    assert [name for name in imported if name.startswith("batreplay.campaign")] == []


def test_the_status_line_of_a_run_under_way_gives_its_progress():
    assert status_line(RunState("r", "queued")) == "r: queued, 0/0 jobs, t = 0 s"
    assert status_line(RunState("r", "running", done=1500, total=3000, now=86400.4)) == (
        "r: running, 1,500/3,000 jobs, t = 86,400 s")
