"""The real-Batsim launcher (batreplay.realbatsim), without a real Batsim: fake ``batsim`` executables.

The fakes (tests/batsim_doubles.py) answer Batsim 4.2's command line; the ``protocol`` one plays Batsim with the
embedded engine over the ZeroMQ socket given by ``-s`` and writes ``PREFIX_jobs.csv`` / ``PREFIX_schedule.csv``,
so the whole path runs: version check, free port, subprocess, pybatsim decision process in this process,
outputs. Others crash, hang, stop answering, refuse their inputs or write nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from batreplay.engine.inprocess import run_scheduler
from batreplay.formats.out_jobs_writer import jobs_frame
from batreplay.realbatsim import channel as batsim_launcher  # (its _clock times every wait on Batsim)
from batreplay.realbatsim.errors import (
    BatsimCrashed,
    BatsimLaunchError,
    BatsimNoOutput,
    BatsimNotFound,
    BatsimTimeout,
    BatsimVersionError,
)
from batreplay.realbatsim.launcher import run_with_batsim
from batreplay.realbatsim.process import (
    batsim_command,
    check_batsim_version,
    find_batsim,
    free_tcp_port,
    parse_batsim_version,
)
from batreplay.schedulers.registry import load_scheduler
from batsim_doubles import (FAKE_HANGING, PROBES_DIR, TOLERANCE, batsim_options, engine_for, wait_until_gone,
                            write_fake_batsim)
from conftest import GOLDEN

DELAYS = GOLDEN / "delays"


def _fake(tmp_path: Path, mode: str = "protocol", version: str = "4.2.1", startup_delay: float = 0.0) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    return write_fake_batsim(bin_dir, mode=mode, version=version, startup_delay=startup_delay)


def _fake_pid(tmp_path: Path) -> int:
    return json.loads((tmp_path / "run" / "fake_batsim_pids.json").read_text())["batsim"]


def _run(tmp_path, batsim, case=DELAYS, scheduler="easy", **kwargs):
    return run_with_batsim(case / "platform.xml", case / "workload.json", load_scheduler(scheduler),
                           tmp_path / "run", batsim_path=batsim, **kwargs)


# --- finding batsim ---------------------------------------------------------------------------------------------

def test_missing_batsim_is_a_one_line_actionable_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without batsim
    with pytest.raises(BatsimNotFound) as caught:
        find_batsim()
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("batsim not found on PATH")
    assert "--batsim" in message and "install Batsim 4.2" in message and "--engine embedded" in message


def test_run_without_batsim_fails_before_starting_anything(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BatsimNotFound, match="^batsim not found on PATH"):
        _run(tmp_path, None)
    assert not (tmp_path / "run").exists()


def test_explicit_batsim_path_errors_name_the_path(tmp_path):
    missing = tmp_path / "nowhere" / "batsim"
    with pytest.raises(BatsimNotFound, match=f"--batsim {missing}: no such file"):
        find_batsim(missing)
    plain = tmp_path / "batsim.txt"
    plain.write_text("not a program")
    with pytest.raises(BatsimNotFound, match="not executable"):
        find_batsim(plain)
    with pytest.raises(BatsimNotFound, match="not a file"):
        find_batsim(tmp_path)
    with pytest.raises(BatsimNotFound, match="no such command on PATH"):
        find_batsim("batsim-that-does-not-exist")


def test_batsim_is_found_on_path_and_by_explicit_path(tmp_path, monkeypatch):
    fake = _fake(tmp_path)
    assert find_batsim(fake) == fake.resolve()
    monkeypatch.setenv("PATH", str(fake.parent))
    assert find_batsim() == fake.resolve()
    assert find_batsim("batsim") == fake.resolve()


def test_cli_reports_missing_batsim_in_one_line(tmp_path, monkeypatch, capsys):
    from batreplay import cli

    argv = ["run", "--workload", str(DELAYS / "workload.json"), "--platform", str(DELAYS / "platform.xml"),
            "--scheduler", "easy", "--out", str(tmp_path / "run"), "--engine", "batsim"]
    try:
        cli.build_parser().parse_args(argv)
    except SystemExit:
        pytest.skip("`batreplay run --engine batsim` is not wired into the command line yet")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SystemExit) as caught:
        cli.main(argv)
    assert caught.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("batreplay: error: batsim not found on PATH") and "\n" not in error
    assert not (tmp_path / "run").exists()


# --- version ----------------------------------------------------------------------------------------------------

def test_parse_batsim_version_examples():
    assert parse_batsim_version("4.2.1\n") == (4, 2, 1)
    assert parse_batsim_version("v4.2.1-3-g0a1b2c3-dirty") == (4, 2, 1)
    assert parse_batsim_version("Batsim version 4.2.0") == (4, 2, 0)
    assert parse_batsim_version("5.0.0-rc0") == (5, 0, 0)
    assert parse_batsim_version("no version here 4.2") is None


@given(st.integers(0, 999), st.integers(0, 999), st.integers(0, 999), st.sampled_from(["", "v"]),
       st.sampled_from(["", "-dirty", "-12-gdeadbee", "\n"]))
def test_parse_batsim_version_reads_any_release(major, minor, patch, prefix, suffix):
    assert parse_batsim_version(f"{prefix}{major}.{minor}.{patch}{suffix}") == (major, minor, patch)


@pytest.mark.slow
def test_version_check_accepts_4_2_and_refuses_others(tmp_path):
    assert check_batsim_version(_fake(tmp_path, version="4.2.1")) == "4.2.1"
    assert check_batsim_version(_fake(tmp_path, version="v4.2.0-5-gabcdef1")) == "v4.2.0-5-gabcdef1"
    for version in ("4.1.0", "5.0.0-rc0", "3.1.0"):
        with pytest.raises(BatsimVersionError, match=rf"is Batsim {version[:5]}, batreplay needs Batsim 4\.2\.x"):
            check_batsim_version(_fake(tmp_path, version=version))
    with pytest.raises(BatsimVersionError, match="printed no version number"):
        check_batsim_version(_fake(tmp_path, version="hello"))


def test_version_check_reports_failure_and_hang(tmp_path):
    failing = tmp_path / "batsim"
    failing.write_text("#!/bin/sh\necho 'error while loading shared libraries: libsimgrid.so' >&2\nexit 127\n")
    failing.chmod(0o755)
    with pytest.raises(BatsimVersionError, match="failed with status 127 .*libsimgrid"):
        check_batsim_version(failing)
    with pytest.raises(BatsimVersionError, match=r"did not answer within 0\.5 s"):
        check_batsim_version(_fake(tmp_path, version="hang"), timeout=0.5)


def test_run_refuses_a_wrong_version_before_starting(tmp_path):
    with pytest.raises(BatsimVersionError, match="is Batsim 4.1.0"):
        _run(tmp_path, _fake(tmp_path, version="4.1.0"))
    assert not (tmp_path / "run").exists()


# --- command line -----------------------------------------------------------------------------------------------

def test_batsim_command_flags(tmp_path):
    command = batsim_command(Path("/b/batsim"), Path("/in/p.xml"), Path("/in/w.json"), Path("/out/out"),
                             "tcp://127.0.0.1:4242")
    assert command == ["/b/batsim", "-p", "/in/p.xml", "-w", "/in/w.json", "-e", "/out/out",
                       "-s", "tcp://127.0.0.1:4242"]
    dynamic = batsim_command(Path("batsim"), Path("p"), Path("w"), Path("e"), "tcp://h:1", dynamic_jobs=True,
                             acknowledge_dynamic_jobs=True, profile_reuse=True, master_host="head",
                             extra_args=["-q"])
    assert dynamic[9:] == ["-m", "head", "--enable-dynamic-jobs", "--acknowledge-dynamic-jobs",
                           "--enable-profile-reuse", "-q"]
    with pytest.raises(ValueError, match="need --enable-dynamic-jobs"):
        batsim_command(Path("b"), Path("p"), Path("w"), Path("e"), "tcp://h:1", acknowledge_dynamic_jobs=True)
    with pytest.raises(ValueError, match="need --enable-dynamic-jobs"):
        _run(tmp_path, _fake(tmp_path), profile_reuse=True)
    assert not (tmp_path / "run").exists()


def test_free_tcp_port_is_bindable():
    import socket

    port = free_tcp_port()
    assert 0 < port < 65536
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))


# --- whole runs against fake batsims ----------------------------------------------------------------------------

def test_happy_path_runs_the_scheduler_and_collects_outputs(tmp_path):
    seen = []
    result = _run(tmp_path, _fake(tmp_path), scheduler="easy", on_request=seen.append)
    assert len(seen) == result.messages and seen[-1]["events"][0]["type"] == "SIMULATION_ENDS"
    run_dir = (tmp_path / "run").resolve()
    assert result.export_dir == run_dir
    assert set(result.outputs) == {"out_jobs.csv", "out_schedule.csv"}
    assert result.out_jobs == run_dir / "out_jobs.csv"
    assert result.batsim_version == "4.2.1"
    argv = json.loads((run_dir / "fake_batsim_argv.json").read_text())
    assert argv == result.command[1:]
    assert argv[:6] == ["-p", str((DELAYS / "platform.xml").resolve()), "-w", str((DELAYS / "workload.json").resolve()),
                        "-e", str(run_dir / "out")]
    assert argv[6] == "-s" and argv[7] == result.endpoint and result.endpoint.startswith("tcp://127.0.0.1:")
    assert len(argv) == 8  # no dynamic-job flag by default
    # the same scheduler in-process against the embedded engine gives the same jobs, in as many messages
    engine = engine_for(DELAYS / "platform.xml", DELAYS / "workload.json")
    connection = run_scheduler(engine, load_scheduler("easy"))
    assert result.messages == connection.messages == 23
    written = pd.read_csv(result.out_jobs)
    expected = jobs_frame(engine.records)
    assert list(written["job_id"]) == list(expected["job_id"].astype(int))
    assert (written["finish_time"] - expected["finish_time"]).abs().max() <= TOLERANCE
    assert list(written["allocated_resources"].astype(str)) == list(expected["allocated_resources"].astype(str))
    assert result.stderr_log.is_file() and result.stdout_log.is_file()


@pytest.mark.slow
def test_dynamic_job_flags_reach_batsim(tmp_path):
    """probeDynamic registers and kills jobs: the fake (the engine) accepts REGISTER_JOB only with
    --enable-dynamic-jobs, and acknowledges it only with --acknowledge-dynamic-jobs; the outputs equal real
    Batsim's for the golden case `dynamic`."""
    case = GOLDEN / "dynamic"
    assert batsim_options(case).acknowledge_dynamic_jobs
    result = _run(tmp_path, _fake(tmp_path), case=case, scheduler=str(PROBES_DIR / "probeDynamic.py"),
                  dynamic_jobs=True, acknowledge_dynamic_jobs=True)
    assert result.command[-2:] == ["--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"]
    ours = pd.read_csv(result.out_jobs, dtype={"job_id": str})
    theirs = pd.read_csv(case / "out_jobs.csv", dtype={"job_id": str})
    assert list(ours["job_id"]) == list(theirs["job_id"])
    assert list(ours["final_state"]) == list(theirs["final_state"])
    assert ((ours["finish_time"] - theirs["finish_time"]).abs().fillna(0) <= TOLERANCE).all()


@pytest.mark.slow
def test_dynamic_scheduler_without_the_flags_makes_batsim_fail(tmp_path):
    with pytest.raises(BatsimCrashed, match="exited with status 1") as caught:
        _run(tmp_path, _fake(tmp_path), case=GOLDEN / "dynamic", scheduler=str(PROBES_DIR / "probeDynamic.py"))
    assert caught.value.exit_status == 1
    assert "EngineError" in caught.value.stderr_tail  # the fake's traceback: REGISTER_JOB refused


@pytest.mark.slow
def test_crash_propagates_exit_status_and_stderr_tail(tmp_path):
    with pytest.raises(BatsimCrashed) as caught:
        _run(tmp_path, _fake(tmp_path, mode="crash"))
    error = caught.value
    assert error.exit_status == 3
    assert str(error).startswith("batsim exited with status 3 before the simulation ended (after 1 messages)")
    assert "fatal: fake failure for the tests" in str(error) and "line one of the log" in error.stderr_tail


@pytest.mark.slow
def test_batsim_killed_by_a_signal_is_reported(tmp_path):
    with pytest.raises(BatsimCrashed, match="^batsim was killed by signal SIGSEGV before the simulation") as caught:
        _run(tmp_path, _fake(tmp_path, mode="signal"))
    assert caught.value.exit_status == -11


#: Start-up delay of a fake Batsim longer than the 2 s timeouts below: what a busy machine does to a process.
SLOW_START = 3.0
SPEEDS = pytest.mark.parametrize("startup_delay", [0.0, SLOW_START], ids=["prompt", "slow-start"])


@pytest.fixture
def clock_from_hanging(tmp_path, monkeypatch):
    """The launcher's clock stands still until the fake Batsim has written FAKE_HANGING (it then provably stays
    silent or running), and runs from 0 afterwards: a timeout's window opens only once the fake hangs, however
    slowly the machine started it. (After 300 s without the file the clock runs anyway, to fail, not hang.)"""
    hanging = tmp_path / "run" / FAKE_HANGING
    first_call: list[float] = []
    since: list[float] = []

    def clock() -> float:
        now = time.monotonic()
        first_call[:] = first_call or [now]
        if not since and (hanging.exists() or now - first_call[0] > 300):
            since.append(now)
        return now - since[0] if since else 0.0

    monkeypatch.setattr(batsim_launcher, "_clock", clock)


@pytest.mark.slow
@SPEEDS
def test_hanging_batsim_times_out_and_leaves_no_process(tmp_path, startup_delay, clock_from_hanging):
    with pytest.raises(BatsimTimeout, match=r"did not connect to tcp://127\.0\.0\.1:\d+ within 2 s"):
        _run(tmp_path, _fake(tmp_path, mode="hang", startup_delay=startup_delay), timeout=2.0)
    pids = json.loads((tmp_path / "run" / "fake_batsim_pids.json").read_text())
    assert wait_until_gone(pids["batsim"]), "batsim survived"
    assert wait_until_gone(pids["child"]), "batsim's child process survived (process group not killed)"


@pytest.mark.slow
@SPEEDS
def test_batsim_that_stops_answering_times_out(tmp_path, startup_delay, clock_from_hanging):
    with pytest.raises(BatsimTimeout, match=r"sent nothing more on .* within 2 s \(after 1 messages; killed\)"):
        _run(tmp_path, _fake(tmp_path, mode="silent", startup_delay=startup_delay), timeout=2.0)
    assert wait_until_gone(_fake_pid(tmp_path))


@pytest.mark.slow
@SPEEDS
def test_batsim_that_does_not_exit_after_the_end_times_out(tmp_path, startup_delay, clock_from_hanging):
    with pytest.raises(BatsimTimeout, match="did not exit within 2 s after the simulation ended"):
        _run(tmp_path, _fake(tmp_path, mode="linger", startup_delay=startup_delay), timeout=2.0)
    assert wait_until_gone(_fake_pid(tmp_path))


@pytest.mark.slow
def test_batsim_refusing_its_inputs_with_status_0_is_an_error(tmp_path):
    with pytest.raises(BatsimNoOutput, match="^Batsim wrote no output: it exited with status 0 before") as caught:
        _run(tmp_path, _fake(tmp_path, mode="refuse"))
    assert "CRITICAL: invalid delay profile" in str(caught.value)


@pytest.mark.slow
def test_batsim_ending_without_outputs_is_an_error(tmp_path):
    with pytest.raises(BatsimNoOutput, match="^Batsim wrote no output: it exited with status 0 but out_jobs.csv"):
        _run(tmp_path, _fake(tmp_path, mode="no_output"))


@pytest.mark.slow
def test_scheduler_failure_kills_batsim_and_propagates(tmp_path):
    class Broken(Exception):
        pass

    scheduler = load_scheduler("easy")

    def fail(job):
        raise Broken("scheduler bug")

    scheduler.onJobSubmission = fail
    with pytest.raises(Broken):
        run_with_batsim(DELAYS / "platform.xml", DELAYS / "workload.json", scheduler, tmp_path / "run",
                        batsim_path=_fake(tmp_path))
    assert wait_until_gone(_fake_pid(tmp_path)), "batsim survived the scheduler's failure"


def test_bad_inputs_are_refused_before_starting(tmp_path):
    fake = _fake(tmp_path)
    with pytest.raises(FileNotFoundError, match="platform file .*missing.xml: no such file"):
        run_with_batsim(tmp_path / "missing.xml", DELAYS / "workload.json", load_scheduler("easy"),
                        tmp_path / "run", batsim_path=fake)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "out_jobs.csv").write_text("old")
    with pytest.raises(FileExistsError, match="already holds out_jobs.csv"):
        _run(tmp_path, fake)


def test_every_launcher_error_is_a_runtime_error():
    for error in (BatsimNotFound, BatsimVersionError, BatsimCrashed, BatsimTimeout, BatsimNoOutput):
        assert issubclass(error, BatsimLaunchError) and issubclass(error, RuntimeError)
