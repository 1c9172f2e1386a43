"""One run in a process of its own (batreplay.run.isolated): the same bytes as a run in this process, by either start
method (each asserted from inside the run); a failure record and no run directory for bad input; a timeout, a stop
in the middle of the simulation, a Ctrl-C of the caller and the death of the caller each stop the process, leaving
no run directory; only a timeout is a failure, and says so."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from batreplay.atomic import process_alive
from batreplay.run.isolated import (
    FAILED_LOG_SUFFIX,
    FAILED_SUFFIX,
    LAUNCHERS,
    failure_record_path,
    run_isolated,
)
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
pytestmark = pytest.mark.skipif(not KTH.is_file(), reason="shared workloads not available")
#: Only a failure waits this long (s).
PATIENCE_S = 300

#: EASY, writing into its working folder which process it runs in: its pid, its parent's, and the process that
#: asked multiprocessing for it (None when it was not started by multiprocessing).
PROBE = ("probeEasy.py", '''
import json, multiprocessing, os
from batreplay.schedulers.easy import Easy


class ProbeEasy(Easy):
    def onSimulationBegins(self):
        asked_by = multiprocessing.parent_process()
        with open("process.json", "w") as out:
            json.dump({"pid": os.getpid(), "ppid": os.getppid(), "asked_by": asked_by and asked_by.pid}, out)
        super().onSimulationBegins()
''')
#: FCFS that thinks 20 ms over each job that ends: 3000 jobs last a minute.
SLOW = ("slowFcfs.py", '''
import time
from batreplay.schedulers.fcfs import Fcfs


class SlowFcfs(Fcfs):
    def onJobCompletion(self, job):
        time.sleep(0.02)
        super().onJobCompletion(job)
''')


def kth_run(out_dir: Path, scheduler: str = "easy", max_jobs: int = 50) -> RunSpec:
    return RunSpec.build(workload=KTH, platform="kth-sp2", scheduler=scheduler, out_dir=out_dir, max_jobs=max_jobs)


def scheduler_file(folder: Path, source: tuple[str, str]) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / source[0]).write_text(source[1])
    return str(folder / source[0])


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def nothing_left(folder: Path) -> list[str]:
    """What a stopped or failed run left in ``folder`` besides its failure record and log."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith((FAILED_SUFFIX, FAILED_LOG_SUFFIX)))


@pytest.fixture(scope="module")
def in_process(tmp_path_factory) -> bytes:
    """out_jobs.csv of the run in this process."""
    return (run(kth_run(tmp_path_factory.mktemp("in-process") / "run")).out_dir / "out_jobs.csv").read_bytes()


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_run_in_its_own_process_gives_the_bytes_of_a_run_in_this_one(launcher, in_process, tmp_path):
    spec = kth_run(tmp_path / "runs" / "kth")
    outcome = run_isolated(spec, launcher=launcher)
    assert (outcome.status, outcome.error, outcome.returncode, outcome.launcher) == ("done", "", 0, launcher)
    assert outcome.out_dir == tmp_path / "runs" / "kth" and outcome.pid != os.getpid()
    assert (outcome.out_dir / "out_jobs.csv").read_bytes() == in_process
    assert json.loads((outcome.out_dir / "run.json").read_text())["spec"] == spec.to_dict()
    assert sorted(os.listdir(tmp_path / "runs")) == ["kth"]  # no log, failure record or staging folder beside it


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_which_start_method_ran_is_seen_from_inside_the_run(launcher, tmp_path):
    """Forked by the forkserver: the run's parent is the server, and multiprocessing names this process as the one
    that asked for it. A new interpreter: this process is its parent, and multiprocessing did not start it. The run
    works in ``cwd``, where the scheduler writes."""
    spec = kth_run(Path("out"), scheduler=scheduler_file(tmp_path, PROBE), max_jobs=5)
    outcome = run_isolated(spec, launcher=launcher, cwd=tmp_path)
    assert outcome.status == "done", outcome.error
    assert outcome.out_dir == tmp_path / "out" and (tmp_path / "out" / "out_jobs.csv").is_file()
    seen = json.loads((tmp_path / "process.json").read_text())
    assert seen["pid"] == outcome.pid
    if launcher == "forkserver":
        assert seen["asked_by"] == os.getpid() and seen["ppid"] != os.getpid()
    else:
        assert seen["asked_by"] is None and seen["ppid"] == os.getpid()


def test_a_failing_run_leaves_its_failure_record_and_no_run_directory(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\nnot a job line\n")
    spec = RunSpec.build(workload=bad, platform="kth-sp2", scheduler="easy", out_dir=tmp_path / "runs" / "bad")
    outcome = run_isolated(spec, launcher="forkserver", record_fields={"id": "bad", "labels": {"log": "bad"}})
    assert outcome.status == "failed" and "bad.swf" in outcome.error and outcome.returncode == 1
    assert not (tmp_path / "runs" / "bad").exists()
    record = json.loads(failure_record_path(tmp_path / "runs" / "bad").read_text())
    assert (record["id"], record["labels"], record["status"]) == ("bad", {"log": "bad"}, "failed")
    assert record["error_type"].endswith("Error") and record["error"] == outcome.error  # the reader's own
    assert record["spec"] == spec.to_dict() and "Traceback" in record["traceback"] and record["pid"] == outcome.pid
    assert "bad.swf" in (tmp_path / "runs" / f"bad{FAILED_LOG_SUFFIX}").read_text()  # the process's output
    assert nothing_left(tmp_path / "runs") == []


def test_a_timeout_stops_the_run_with_an_error_that_says_so(tmp_path):
    spec = kth_run(tmp_path / "runs" / "slow", scheduler=scheduler_file(tmp_path, SLOW), max_jobs=3000)
    outcome = run_isolated(spec, launcher="forkserver", timeout=1)
    assert outcome.status == "failed" and outcome.error.startswith("timed out:"), outcome.error
    assert "after 1 s of wall-clock time" in outcome.error and outcome.returncode in (143, -signal.SIGKILL)
    record = json.loads(failure_record_path(outcome.out_dir).read_text())
    assert (record["error_type"], record["error"], record["returncode"]) == ("Timeout", outcome.error,
                                                                             outcome.returncode)
    assert nothing_left(tmp_path / "runs") == []  # the process removed its staging folder on SIGTERM


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_run_stopped_in_the_middle_of_its_simulation_is_interrupted_not_failed(tmp_path, launcher):
    """SIGTERM reaches the process while the scheduler's code runs (the whole KTH-SP2 log, stopped once its progress
    file says jobs have ended): the stop must not pass for the scheduler exiting (a failed run with a record) but
    leave the run interrupted, with no run directory, staging folder, failure record or progress file."""
    progress = tmp_path / "progress.json"
    spec = RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="fcfs", out_dir=tmp_path / "out" / "whole-kth")

    def stop_once_jobs_ended(process):
        def ended() -> bool:
            with contextlib.suppress(OSError, ValueError):
                return json.loads(progress.read_text())["done"] > 0
            return False

        wait_until(ended, "jobs to end")
        process.terminate()

    # (on_start returns before a subprocess has read its job: the watcher runs beside it)
    outcome = run_isolated(spec, launcher=launcher, progress_file=progress, on_start=lambda process: threading.Thread(
        target=stop_once_jobs_ended, args=(process,), daemon=True).start())
    assert outcome.status == "interrupted", outcome.error
    assert outcome.returncode in (143, -signal.SIGTERM)
    assert sorted(os.listdir(tmp_path / "out")) == [] and not progress.exists()


def test_ctrl_c_of_the_caller_stops_a_forked_run(tmp_path):
    """The forked process ignores SIGINT (the caller owns Ctrl-C): the caller's KeyboardInterrupt, while it waits,
    stops the process with SIGTERM before it goes on; nothing of the run is left."""
    spec = kth_run(tmp_path / "runs" / "slow", scheduler=scheduler_file(tmp_path, SLOW), max_jobs=3000)
    started = []

    def interrupt_the_caller(process):
        started.append(process.pid)
        os.kill(process.pid, signal.SIGINT)  # what a Ctrl-C in the terminal sends it too: ignored
        os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        run_isolated(spec, launcher="forkserver", on_start=interrupt_the_caller)
    assert not process_alive(started[0])
    assert sorted(os.listdir(tmp_path / "runs")) == []


_CALLER = """
import sys
from pathlib import Path
from batreplay.run.isolated import run_isolated
from batreplay.run.spec import RunSpec

spec = RunSpec.build(workload=sys.argv[1], platform="kth-sp2", scheduler=sys.argv[2], out_dir=sys.argv[3],
                     max_jobs=3000)
run_isolated(spec, launcher="forkserver", progress_file=sys.argv[4],
             on_start=lambda process: print(process.pid, flush=True))
"""


def test_a_run_stops_when_its_caller_is_killed(tmp_path):
    """``kill -9`` of the process that started the run: the run's process notices and stops (SIGTERM to itself), so
    its staging folder goes too; only the caller's log of it is left."""
    progress = tmp_path / "progress.json"
    caller = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_CALLER), str(KTH),
                               scheduler_file(tmp_path, SLOW), str(tmp_path / "runs" / "slow"), str(progress)],
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        child = int(caller.stdout.readline())
        wait_until(progress.exists, "the run to report progress")
    finally:
        caller.kill()
        caller.wait()
    wait_until(lambda: not process_alive(child), "the run's process to stop")
    assert sorted(os.listdir(tmp_path / "runs")) == [".slow.log"]


def test_a_bad_launcher_or_timeout_is_refused_before_anything_starts(tmp_path):
    spec = kth_run(tmp_path / "runs" / "kth")
    with pytest.raises(ValueError, match="unknown launcher 'fork' \\(forkserver or subprocess\\)"):
        run_isolated(spec, launcher="fork")
    for timeout in (0, -1.0, float("nan"), True):
        with pytest.raises(ValueError, match="timeout must be a number of seconds > 0"):
            run_isolated(spec, timeout=timeout)
    assert not (tmp_path / "runs").exists()
