"""Run directories: ``--force`` replaces only a previous run, and atomically (errors and kills at every step of
the swap); leftovers of killed runs are cleaned by the next run, never those of a live one; Batsim's log survives
a failed run; directories follow the umask; bad ``max_jobs`` and timeouts are refused; ``--timeout`` stops a
scheduler that never answers.

Runs use the golden case ``delays`` (10 jobs, 4 nodes): each takes a fraction of a second.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import batreplay.atomic as atomic
from batreplay.atomic import make_staging_directory, recover_interrupted
from batreplay.cli import main
from batreplay.deadline import Deadline, WallClockTimeout, wall_clock_limit
from batreplay.engine.inprocess import run_scheduler
from batreplay.run.runner import RunError, run
from batreplay.run.spec import RunSpec, RunSpecError
from batreplay.schedulers.registry import load_scheduler
from batsim_doubles import engine_for, write_fake_batsim
from conftest import GOLDEN, REPO_ROOT

CASE = GOLDEN / "delays"
#: A scheduler whose first decision never comes: it waits on an Event nobody sets.
BLOCKED_SCHEDULER = '''
import threading
from batsim.batsim import BatsimScheduler


class Blocked(BatsimScheduler):
    def onJobSubmission(self, job):
        threading.Event().wait()
'''


def spec(out: Path, **kwargs) -> RunSpec:
    kwargs.setdefault("scheduler", "easy")
    return RunSpec.build(workload=CASE / "workload.json", platform=CASE / "platform.xml", out_dir=out, **kwargs)


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def listing(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for folders)."""
    return {str(p.relative_to(folder)): (None if p.is_dir() else p.read_bytes()) for p in sorted(folder.rglob("*"))}


def scheduler_of(run_dir: Path) -> str:
    return json.loads((run_dir / "run.json").read_text())["spec"]["scheduler"]


def blocked_scheduler(folder: Path) -> Path:
    path = folder / "blocked.py"
    path.write_text(BLOCKED_SCHEDULER)
    return path


# --- item 1: --force replaces only a run, atomically -------------------------------------------------------------

def test_force_refuses_a_directory_that_is_not_a_run(tmp_path):
    out = tmp_path / "thesis"
    (out / "chapters").mkdir(parents=True)
    (out / "thesis.tex").write_text("years of work")
    (out / "chapters" / "one.tex").write_text("chapter one")
    before = listing(out)
    with pytest.raises(RunError, match=r"thesis exists and is not a batreplay run \(no run\.json"):
        run(spec(out, force=True))
    assert listing(out) == before
    (out / "run.json").write_text("not JSON at all")  # a file of that name is not enough
    with pytest.raises(RunError, match="is not a batreplay run"):
        run(spec(out, force=True))
    assert (out / "thesis.tex").read_text() == "years of work"
    assert hidden(tmp_path) == []
    afile = tmp_path / "notes.txt"
    afile.write_text("notes")
    with pytest.raises(RunError, match="not a directory"):
        run(spec(afile, force=True))
    assert afile.read_text() == "notes"


def test_force_with_out_dot_refuses_and_deletes_nothing(tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "data" / "log.swf").write_text("; a log\n")
    (work / "paper.md").write_text("draft")
    before = listing(work)
    monkeypatch.chdir(work)
    with pytest.raises(SystemExit) as stop:
        main(["run", "--workload", str(CASE / "workload.json"), "--platform", str(CASE / "platform.xml"),
              "--scheduler", "easy", "--out", ".", "--force", "--quiet"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("batreplay: error:") and "not a batreplay run" in err and "\n" not in err
    assert listing(work) == before
    assert hidden(tmp_path) == []


def test_force_replaces_a_previous_run_and_leaves_nothing_behind(tmp_path):
    out = tmp_path / "run"
    run(spec(out, scheduler="fcfs"))
    with pytest.raises(RunError, match="already exists"):
        run(spec(out))
    assert scheduler_of(out) == "fcfs"
    run(spec(out, scheduler="easy", force=True))
    assert scheduler_of(out) == "easy"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    link = tmp_path / "link"
    link.symlink_to(out)
    with pytest.raises(RunError, match="symbolic link"):
        run(spec(link, force=True))
    assert scheduler_of(out) == "easy"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two complete run directories that differ (fcfs, easy), as templates."""
    folder = tmp_path_factory.mktemp("templates")
    run(spec(folder / "old", scheduler="fcfs"))
    run(spec(folder / "new", scheduler="easy"))
    return folder / "old", folder / "new"


def _state(target: Path, old: Path, new: Path) -> str:
    """'old' or 'new' when ``target`` holds a complete copy of that run."""
    if not target.is_dir():
        return "missing"
    found = listing(target)
    for name, template in (("old", old), ("new", new)):
        if found == listing(template):
            return name
    return "damaged"


SWAPPER = textwrap.dedent('''
    """Replace TARGET by a copy of TEMPLATE with commit_directory, failing at file-system step K: os._exit (as
    kill -9, no clean-up) or an OSError (then the staging directory is removed, as run() does)."""
    import os, shutil, sys
    from pathlib import Path
    import batreplay.atomic as atomic

    template, target, mode, action, fail_at = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
    staging = atomic.make_staging_directory(target)
    shutil.copytree(template, staging, dirs_exist_ok=True)
    real_rmtree, steps = shutil.rmtree, []

    def failing(function):
        def wrapper(*args, **kwargs):
            if len(steps) == fail_at:
                if action == "kill":
                    os._exit(70)
                steps.append(function)
                raise OSError(5, "injected failure")
            steps.append(function)
            return function(*args, **kwargs)
        return wrapper

    os.rename = failing(os.rename)
    shutil.rmtree = failing(shutil.rmtree)
    atomic._exchange_directories = (failing(atomic._exchange_directories) if mode == "exchange"
                                    else failing(lambda first, second: False))
    try:
        atomic.commit_directory(staging, target, replace=True)
    except OSError:
        real_rmtree(staging, ignore_errors=True)
        sys.exit(71)
    print(len(steps))
''')


@pytest.mark.parametrize("action", ["kill", "error"])
@pytest.mark.parametrize("mode", ["exchange", "two-renames"])
def test_a_failure_at_any_step_of_the_swap_leaves_the_old_or_the_new_run(tmp_path, two_runs, mode, action):
    """The process replacing a run is killed (os._exit), or gets an OSError, at its k-th file-system step
    (os.rename, shutil.rmtree, the atomic exchange), for every k until the swap completes. With the atomic
    exchange the target holds the old or the new run at every moment; with two renames it may be missing only
    after a kill between them, and the next run puts the old one back. An error leaves the old run. After the
    next run's recovery no hidden leftover remains."""
    old, new = two_runs
    script = tmp_path / "swapper.py"
    script.write_text(SWAPPER)
    seen = set()
    for step in range(12):
        folder = tmp_path / f"step{step}"
        folder.mkdir()
        target = folder / "run"
        shutil.copytree(old, target)
        child = subprocess.run([sys.executable, str(script), str(new), str(target), mode, action, str(step)],
                               cwd=REPO_ROOT, capture_output=True, text=True)
        assert child.returncode in (0, 70, 71), child.stderr
        state = _state(target, old, new)
        seen.add(state)
        if child.returncode == 0:
            assert state == "new"
        elif child.returncode == 71:
            assert state == "old", step
        elif mode == "exchange":
            assert state in ("old", "new"), (step, state, hidden(folder))
        else:
            assert state in ("old", "new", "missing"), (step, state)
        notes = recover_interrupted(folder)  # what the next run in that folder does first
        assert _state(target, old, new) == (state if state != "missing" else "old"), (step, notes)
        assert hidden(folder) == [], (step, hidden(folder))
        if child.returncode == 0 and int(child.stdout) <= step:
            break  # the swap completed before this step: every step has been tried
    else:
        pytest.fail("the swap did not complete within 12 steps")
    assert {"old", "new"} <= seen
    if mode == "two-renames" and action == "kill":
        assert "missing" in seen  # the window between the two renames exists, and recovery closes it


def test_a_failed_swap_in_run_keeps_the_previous_run(tmp_path, two_runs, monkeypatch):
    old, _ = two_runs
    out = tmp_path / "run"
    shutil.copytree(old, out)

    def broken(first, second):
        raise OSError(5, "injected failure")

    monkeypatch.setattr(atomic, "_exchange_directories", broken)
    with pytest.raises(OSError, match="injected failure"):
        run(spec(out, force=True))
    assert listing(out) == listing(old)
    assert hidden(tmp_path) == []


def test_an_interrupted_replacement_is_put_back_by_the_next_run(tmp_path, two_runs):
    """A run killed between the two renames left the previous run as a hidden .old: the next run (any run
    writing in that folder) puts it back, then refuses to overwrite it without --force."""
    old, _ = two_runs
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    leftover = tmp_path / f".run.{atomic._host_id()}-{pid}-abcd1234.old"
    shutil.copytree(old, leftover)
    with pytest.raises(RunError, match="already exists"):
        run(spec(tmp_path / "run"))
    assert listing(tmp_path / "run") == listing(old)
    assert hidden(tmp_path) == []


# --- item 2: leftovers of killed runs; Batsim's log after a failure ----------------------------------------------

def test_leftovers_of_a_killed_run_are_cleaned_by_the_next_run(tmp_path):
    """`batreplay run` killed with SIGKILL while its scheduler is blocked leaves its staging directory; the next
    run in the same folder removes it, and only it."""
    scheduler = blocked_scheduler(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / ".mine.tmp").mkdir()  # a user's hidden folder that merely looks alike: kept
    process = subprocess.Popen([sys.executable, "-m", "batreplay.cli", "run", "--workload", str(CASE / "workload.json"),
                                "--platform", str(CASE / "platform.xml"), "--scheduler", str(scheduler),
                                "--out", str(runs / "killed"), "--quiet"], cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not [p for p in runs.iterdir() if p.name.startswith(".killed.")]:
            assert process.poll() is None and time.monotonic() < deadline, "the run never started"
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    staged = [p.name for p in runs.iterdir() if p.name.startswith(".killed.")]
    assert len(staged) == 1 and staged[0].endswith(".tmp")
    result = run(spec(runs / "next"))
    assert any("removed 1 leftover(s)" in note and staged[0] in note for note in result.input_notes)
    assert sorted(p.name for p in runs.iterdir()) == [".mine.tmp", "next"]


def test_staging_directories_of_live_processes_and_other_hosts_are_kept(tmp_path):
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        mine = tmp_path / f".a.{atomic._host_id()}-{alive.pid}-abcd1234.tmp"
        other_host = tmp_path / f".b.{'0' * 8 if atomic._host_id() != '0' * 8 else '1' * 8}-1-abcd1234.tmp"
        mine.mkdir()
        other_host.mkdir()
        own = make_staging_directory(tmp_path / "c")  # this process's own, in use
        assert recover_interrupted(tmp_path) == []
        assert mine.is_dir() and other_host.is_dir() and own.is_dir()
    finally:
        alive.kill()
        alive.wait()
    assert "removed 1 leftover(s)" in recover_interrupted(tmp_path)[0]
    assert not mine.exists() and other_host.is_dir() and own.is_dir()


@pytest.mark.slow
def test_a_failed_batsim_run_keeps_batsims_log(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = write_fake_batsim(bin_dir, mode="crash")
    out = tmp_path / "runs" / "crashed"
    with pytest.raises(RuntimeError, match="batsim exited with status 3") as caught:
        run(spec(out, engine="batsim", batsim=str(fake)))
    log = tmp_path / "runs" / "crashed.failed-batsim.log"
    assert f"see {log}" in str(caught.value)
    assert "fatal: fake failure for the tests" in log.read_text()
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["crashed.failed-batsim.log"]
    # a later successful run of the same directory removes the stale log
    run(spec(out))
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["crashed"]


# --- item 3: permissions follow the umask ------------------------------------------------------------------------

@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o755), (0o027, 0o750), (0o002, 0o775)])
def test_run_directories_follow_the_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        result = run(spec(tmp_path / "run"))
        run(spec(tmp_path / "run", force=True))  # a replaced run too
    finally:
        os.umask(previous)
    assert result.out_dir.stat().st_mode & 0o777 == mode
    assert (result.out_dir / "out_jobs.csv").stat().st_mode & 0o777 == 0o666 & ~umask


def test_campaign_instance_directories_follow_the_umask(tmp_path):
    from batreplay.campaign.worker import execute

    task = {"campaign": "c", "id": "one", "output_root": str(tmp_path / "root"), "root": str(REPO_ROOT),
            "workload": str(CASE / "workload.json"), "platform": str(CASE / "platform.xml"), "labels": {},
            "params": {"scheduler": "easy", "profile": "delay", "recorded_speed": 1e9, "max_jobs": None,
                       "scheduler_options": {}, "replay": "rigid", "sessions": None, "walltime_factor": None,
                       "engine": "embedded", "seed": 0}}
    previous = os.umask(0o022)
    cwd = os.getcwd()
    try:
        assert execute(task) == 0
    finally:
        os.umask(previous)
        os.chdir(cwd)
    assert (tmp_path / "root" / "one").stat().st_mode & 0o777 == 0o755


# --- item 8: max_jobs --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [-1, 0, 2.5, True])
def test_runspec_refuses_max_jobs_below_one(tmp_path, value):
    with pytest.raises(RunSpecError, match=r"max_jobs \(--max-jobs\) must be an integer >= 1"):
        run(spec(tmp_path / "run", max_jobs=value))
    assert not (tmp_path / "run").exists()


def test_max_jobs_keeps_the_first_jobs_of_a_json_workload(tmp_path):
    run(spec(tmp_path / "run", max_jobs=3))
    assert len(json.loads((tmp_path / "run" / "workload.json").read_text())["jobs"]) == 3


# --- item 17: wall-clock timeout ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0, -5, float("nan"), float("inf")])
def test_runspec_refuses_bad_timeouts(tmp_path, value):
    with pytest.raises(RunSpecError, match=r"^timeout \(--timeout\) must be a number > 0 and <= 1e\+09 s"):
        run(spec(tmp_path / "run", timeout=value))
    with pytest.raises(RunSpecError, match=r"^batsim_timeout \(--batsim-timeout\) must be a number > 0 and <= 1e\+09 s"):
        run(spec(tmp_path / "run", batsim_timeout=value))


def test_expired_deadline_stops_the_engine_at_the_next_message():
    """The check in EngineConnection.recv, in a thread other than the main one (no watchdog there): a
    scheduler that waits until the deadline has passed is stopped at its next request for a message."""
    deadline = Deadline(0.2)
    scheduler = load_scheduler("easy")
    waiting = scheduler.onJobSubmission

    def slow(job):
        while not deadline.expired():
            time.sleep(0.01)
        waiting(job)

    scheduler.onJobSubmission = slow
    caught = []

    def target():
        try:
            run_scheduler(engine_for(CASE / "platform.xml", CASE / "workload.json"), scheduler, deadline=deadline)
        except WallClockTimeout as error:
            caught.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(120)
    assert not thread.is_alive() and len(caught) == 1
    assert "--timeout 0.2" in str(caught[0])


def test_watchdog_restores_the_signal_state_and_leaves_other_timers_alone():
    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        with wall_clock_limit(Deadline(600)) as armed:
            assert armed and signal.getitimer(signal.ITIMER_REAL)[0] > 0
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and signal.getsignal(signal.SIGALRM) is mine
        signal.setitimer(signal.ITIMER_REAL, 500)  # someone else's timer: not replaced
        with wall_clock_limit(Deadline(1)) as armed:
            assert not armed
        assert 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 500 and signal.getsignal(signal.SIGALRM) is mine
        with wall_clock_limit(None) as armed:
            assert not armed
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.slow
def test_timeout_stops_a_scheduler_that_never_answers(tmp_path):
    """The watchdog: the scheduler blocks on an Event inside its own code; `batreplay run --timeout 2` ends
    with a one-line error and exit status 2, and leaves no run directory and no staging directory."""
    scheduler = blocked_scheduler(tmp_path)
    out = tmp_path / "runs" / "blocked"
    finished = subprocess.run([sys.executable, "-m", "batreplay.cli", "run", "--workload", str(CASE / "workload.json"),
                               "--platform", str(CASE / "platform.xml"), "--scheduler", str(scheduler),
                               "--out", str(out), "--quiet", "--timeout", "2"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 2, finished.stderr
    err = finished.stderr.strip()
    assert err.startswith("batreplay: error: stopped after 2 s of wall-clock time (--timeout 2)"), err
    assert "\n" not in err
    assert not out.exists() and hidden(out.parent) == []


@pytest.mark.slow
def test_timeout_bounds_a_run_with_a_real_batsim_and_kills_it(tmp_path):
    """--engine batsim: the scheduler blocks on its first message; --timeout stops the run (Batsim's silence
    timeout is far longer) and Batsim's process is gone afterwards."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = write_fake_batsim(bin_dir)
    out = tmp_path / "runs" / "blocked"
    with pytest.raises(RunError, match=r"stopped after 3 s of wall-clock time \(--timeout 3\)"):
        run(spec(out, scheduler=str(blocked_scheduler(tmp_path)), engine="batsim", batsim=str(fake), timeout=3,
                 batsim_timeout=3600))
    deadline = time.monotonic() + 60
    while _processes_running(str(fake)):
        assert time.monotonic() < deadline, "the fake batsim survived the timeout"
        time.sleep(0.05)
    assert not out.exists()


def _processes_running(fragment: str) -> list[int]:
    """Pids of live (non-zombie) processes whose command line contains ``fragment``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if fragment in command and state != "Z":
            found.append(int(proc.name))
    return found
