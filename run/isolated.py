"""One run in a process of its own: a crash, a leak or a real Batsim started by the run stays inside that process.

:func:`run_isolated` runs a :class:`~batreplay.run.spec.RunSpec` in a new process and reports its
:class:`RunOutcome`. The spec crosses the process boundary in its serialised form (:meth:`RunSpec.to_dict`). The
campaign executors (a process per instance) and the web GUI's launcher (a process per launched run) run their runs
this way.

How the process starts (``launcher``):

- ``forkserver``: forked from a :mod:`multiprocessing` forkserver that has imported batreplay once
  (:data:`FORKSERVER_PRELOAD`; a new interpreter costs 2-3 s of imports, about as long as a small simulation). Only
  from a process allowed to have children of its own (not a Dask worker). The server ignores SIGINT, and every process
  it forks is born ignoring it and keeps ignoring it: a Ctrl-C in the terminal reaches the whole process group, and the
  caller, which receives it too, decides. A Ctrl-C during :func:`run_isolated` in the main thread stops the process
  with SIGTERM; an executor that waits in other threads stops its processes likewise.
- ``subprocess``: a new interpreter, ``python -m batreplay.run.isolated``, the job (a JSON object) on its standard
  input. A Ctrl-C in the terminal reaches it and stops it.

Either way Python's hash seed is fixed (``PYTHONHASHSEED=0``), and the process:

1. changes to the working folder ``cwd`` (relative paths of the spec are read from there) and seeds Python's and
   numpy's global random generators with ``seed``, so that a stochastic scheduler replays the same way;
2. calls :func:`batreplay.run.runner.run`, which writes the run directory ``spec.out_dir`` atomically (temporary
   sibling, then rename); with a ``progress_file``, the run's progress is written there as it goes,
   ``{"now": simulated s, "done": jobs ended, "total": jobs}``, atomically (the web GUI's progress bars);
3. on an exception, writes the failure record ``<out_dir>.failed.json`` (the caller's ``record_fields``, then
   ``status``, ``error_type``, ``error``, ``traceback``, ``spec`` (serialised), ``host``, ``pid``, ``wall_seconds``,
   ``finished_at``) and exits 1; on success it removes the failure record of an earlier attempt and exits 0.

On SIGTERM (and SIGINT, except in forked processes) it exits 143 / 130 without a failure record, wherever the signal
finds it (in a scheduler's code too: :class:`Stopped` is not taken for the scheduler exiting), and the run's staging
folder is removed: a stopped run is simply not there. If the process that started it dies (``kill -9``), it notices
within a second and stops the same way.

Files next to the run directory ``<name>`` (``spec.out_dir``)::

    .<name>.log          the process's output while it runs; then moved to
    <name>/worker.log    ... in the run directory, when the run succeeded (removed instead when empty), or
    <name>.failed.log    ... next to the failure record, when it failed
    <name>.failed.json   the failure record; written by :func:`run_isolated` when the process ended without one:
                         crashed (``ProcessDied``: exit status, end of its log) or timed out (``Timeout``)

A ``timeout`` bounds the process in wall-clock time, from outside: SIGTERM once it is reached, SIGKILL
:data:`KILL_GRACE_SECONDS` later if it has not ended. ``RunSpec.timeout`` bounds the run from inside, with a clean
error (:mod:`batreplay.deadline`); this one also stops a process stuck where that one cannot reach it (C code that
never returns).
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from batreplay.atomic import process_alive, write_json_atomically
from batreplay.deadline import check_seconds

if TYPE_CHECKING:
    from batreplay.run.spec import RunSpec

#: ``<out_dir>.failed.json``: the failure record of a run (see the module docstring).
FAILED_SUFFIX = ".failed.json"
#: ``<out_dir>.failed.log``: the output of a failed run's process, next to its failure record.
FAILED_LOG_SUFFIX = ".failed.log"
#: The output of a run's process, in its run directory when the run succeeded and printed something.
WORKER_LOG = "worker.log"
#: How many last lines of the process's log a failure record and a :class:`RunOutcome` keep.
LOG_TAIL_LINES = 40
#: Seconds between the SIGTERM of a timed-out or stopped process and its SIGKILL.
KILL_GRACE_SECONDS = 10.0
#: Exit statuses of a process stopped by SIGINT / SIGTERM: the run is interrupted, not failed.
INTERRUPTED_STATUSES = frozenset({130, 143, -signal.SIGINT, -signal.SIGTERM})
#: How the process can start (see the module docstring).
LAUNCHERS = ("forkserver", "subprocess")
#: Modules the forkserver imports once, so that each run's process starts without import cost. This module
#: comes first: imported by the server, it makes the server ignore SIGINT (see :data:`_FORKSERVER_MARK`).
FORKSERVER_PRELOAD: tuple[str, ...] = (
    "batreplay.run.isolated", "batreplay.run.runner", "batreplay.replay.broker", "batreplay.replay.feedback",
    "batreplay.replay.session_graph", "batreplay.replay.sessions",
)
#: Set in the environment of the forkserver's start only. The server, importing this module first, removes it and
#: ignores SIGINT from then on; Python's forkserver gives each process it forks the SIGINT disposition the server had
#: before it started serving, so a Ctrl-C that reaches the process group while a run's process is starting cannot
#: kill it half-way with a ``KeyboardInterrupt`` (which would look like a crash). Done by the server itself, this
#: holds whichever thread starts the server (a signal disposition can only be set from the main thread).
_FORKSERVER_MARK = "BATREPLAY_FORKSERVER_IGNORES_SIGINT"
_FORKSERVER_LOCK = threading.Lock()
#: Held while a forkserver child is started or joined. A forkserver child's exit status is one message on a pipe;
#: ``Process.start()`` polls every live child of the calling process (multiprocessing's ``_cleanup``), so a thread
#: starting a run while another joins its own could both read that message, and the loser reads end-of-file, which
#: multiprocessing reports as exit status 255 (CPython gh-130895): a finished run then looked failed.
_PROCESS_LOCK = threading.Lock()

if os.environ.pop(_FORKSERVER_MARK, None) == "1" and threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclass
class RunOutcome:
    """What became of a run in its own process.

    Attributes:
        status: ``done`` (the run directory is there), ``failed`` (``<out_dir>.failed.json`` written) or
            ``interrupted`` (stopped by a signal, or not started; nothing recorded).
        out_dir: the run directory (absolute).
        wall_seconds: wall-clock time of the process, from its start to its end, seconds.
        error: one line saying why, for ``failed`` and ``interrupted``; ``""`` when done.
        returncode: the process's exit status (negative: killed by that signal); None when not started.
        log_tail: the last lines of the process's output, for ``failed``.
        launcher: how the process started, ``forkserver`` or ``subprocess``.
        host: the machine it ran on.
        pid: the process's id; None when not started.
    """

    status: str
    out_dir: Path
    wall_seconds: float
    error: str = ""
    returncode: int | None = None
    log_tail: list[str] = field(default_factory=list)
    launcher: str = ""
    host: str = ""
    pid: int | None = None


def failure_record_path(out_dir: str | os.PathLike[str]) -> Path:
    """Where the failure record of the run directory ``out_dir`` goes: ``<out_dir>.failed.json`` beside it."""
    out_dir = Path(os.path.abspath(out_dir))
    return out_dir.with_name(out_dir.name + FAILED_SUFFIX)


def failure_log_path(out_dir: str | os.PathLike[str]) -> Path:
    """Where the output of a failed run of ``out_dir`` is kept: ``<out_dir>.failed.log`` beside it."""
    out_dir = Path(os.path.abspath(out_dir))
    return out_dir.with_name(out_dir.name + FAILED_LOG_SUFFIX)


def _log_path(out_dir: Path) -> Path:
    return out_dir.with_name(f".{out_dir.name}.log")


def write_failure_record(out_dir: str | os.PathLike[str], error_type: str, error: str, *,
                         spec: dict[str, Any] | None = None, fields: dict[str, Any] | None = None,
                         **details: Any) -> Path:
    """Write the failure record of ``out_dir`` (:func:`failure_record_path`) atomically and return its path.

    Args:
        error_type: the kind of failure (an exception's class name, ``ProcessDied``, ``Timeout``).
        error: why, in one line.
        spec: the run's serialised :class:`~batreplay.run.spec.RunSpec`, recorded as ``spec``.
        fields: written first (what the caller adds: a campaign's id, parameters and labels).
        details: written after the error (``traceback``, ``host``, ``wall_seconds`` in seconds, ``returncode``...).

    Raises:
        OSError: the folder of ``out_dir`` cannot be written.
    """
    document = {**(fields or {}), "status": "failed", "error_type": error_type, "error": error, "traceback": ""}
    if spec is not None:
        document["spec"] = spec
    document.update(details, finished_at=datetime.now(UTC).isoformat(timespec="seconds"))
    return write_json_atomically(failure_record_path(out_dir), document)


# --- the run's process ------------------------------------------------------------------------------------------

class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGINT reached the run's process: it stops unfinished, with exit status ``128 + signal``.

    Not a ``SystemExit``: raised inside a scheduler's code, an exit would be taken for the scheduler's own (a
    failed run, see :mod:`batreplay.schedulers.failures`), where a stop request is no failure of the run."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _on_signal(signum, frame) -> None:
    raise Stopped(128 + signum)


def _watch_parent(parent: int, caller: int | None) -> None:
    """Stop this process (as SIGTERM would) once its parent, or the process ``caller`` that asked for it, has died."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent or (caller is not None and not process_alive(caller)):
            os.kill(os.getpid(), signal.SIGTERM)
            return


def _progress_writer(path: str | None) -> Callable[[float, int, int], None] | None:
    """The ``on_progress`` of a run with a progress file: each report written there atomically; None without one."""
    if not path:
        return None

    def write(now: float, done: int, total: int) -> None:
        write_json_atomically(Path(path), {"now": now, "done": done, "total": total})

    return write


def _run_job(job: dict[str, Any]) -> int:
    """The work of the run's process (see the module docstring): returns 0 (done) or 1 (failure record written).

    Raises:
        KeyboardInterrupt, SystemExit: a stop (:class:`Stopped`), passed on; nothing is recorded.
    """
    started = time.time()
    previous = os.getcwd()
    os.chdir(job["cwd"])
    try:
        out_dir = Path(os.path.abspath(job["spec"]["out_dir"]))
        try:
            random.seed(job["seed"])
            import numpy as np

            np.random.seed(job["seed"] % 2**32)
            from batreplay.run.runner import run
            from batreplay.run.spec import RunSpec

            run(RunSpec.from_dict(job["spec"]), on_progress=_progress_writer(job.get("progress_file")))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as err:  # noqa: BLE001 - any failure of the run is recorded; the caller goes on
            write_failure_record(out_dir, type(err).__name__, str(err), spec=job["spec"], fields=job["record_fields"],
                                 traceback=traceback.format_exc(), host=socket.gethostname(), pid=os.getpid(),
                                 wall_seconds=time.time() - started)
            print(traceback.format_exc(), file=sys.stderr)
            return 1
        failure_record_path(out_dir).unlink(missing_ok=True)
        return 0
    finally:
        os.chdir(previous)


def _job(spec: RunSpec, cwd: str | os.PathLike[str] | None, seed: int, progress_file: str | os.PathLike[str] | None,
         record_fields: dict[str, Any] | None) -> dict[str, Any]:
    """What crosses the process boundary: the serialised spec and the process's settings, absolute paths."""
    folder = os.path.abspath(os.getcwd() if cwd is None else cwd)
    return {"spec": spec.to_dict(), "cwd": folder, "seed": int(seed),
            "progress_file": None if progress_file is None else os.path.join(folder, progress_file),
            "record_fields": dict(record_fields or {})}


def run_here(spec: RunSpec, *, cwd: str | os.PathLike[str] | None = None, seed: int = 0,
             progress_file: str | os.PathLike[str] | None = None, record_fields: dict[str, Any] | None = None) -> int:
    """Run ``spec`` in this process as its own process would (steps 1-3 of the module docstring); the working
    folder is given back afterwards. Returns 0 (the run directory is written) or 1 (the failure record is).

    Args: as :func:`run_isolated`.

    Raises:
        KeyboardInterrupt, SystemExit: passed on, nothing recorded.
    """
    return _run_job(_job(spec, cwd, seed, progress_file, record_fields))


def _prepare_process(caller: int | None = None, *, ignore_sigint: bool = False) -> None:
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_sigint else _on_signal)
    threading.Thread(target=_watch_parent, args=(os.getppid(), caller), daemon=True).start()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def process_main(job: dict[str, Any], log_path: str, caller: int) -> None:
    """Target of a run's process forked by the forkserver: output to ``log_path``, then the run; the exit status is
    the process's exit code. ``caller`` is the pid of the process that asked for it (its parent is the forkserver,
    which outlives it): the run stops when it dies. SIGINT stays ignored (see the module docstring)."""
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    try:  # (from the moment the handlers are set, a stop may come at any point)
        _prepare_process(caller, ignore_sigint=True)
        status = _run_job(job)
        sys.stdout.flush()
        sys.stderr.flush()
    except Stopped as stop:
        status = stop.status
    except SystemExit as stop:
        status = int(stop.code) if isinstance(stop.code, int) else 1
    sys.exit(status)


def main() -> int:
    """Entry point of ``python -m batreplay.run.isolated``: read the job from standard input and run it."""
    try:
        _prepare_process()
        return _run_job(json.loads(sys.stdin.read()))
    except Stopped as stop:
        return stop.status
    except SystemExit as stop:
        return int(stop.code) if isinstance(stop.code, int) else 1


# --- the caller's side ------------------------------------------------------------------------------------------

def forkserver_context():
    """The ``forkserver`` multiprocessing context, its server started (once per process) with
    :data:`FORKSERVER_PRELOAD` imported, ``PYTHONHASHSEED=0`` and SIGINT ignored (both set for the server's start
    only). Start it before starting threads of one's own: its environment is this process's for that moment."""
    import multiprocessing
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    with _FORKSERVER_LOCK:
        context.set_forkserver_preload(list(FORKSERVER_PRELOAD))
        saved = {name: os.environ.get(name) for name in ("PYTHONHASHSEED", _FORKSERVER_MARK)}
        os.environ.update({"PYTHONHASHSEED": "0", _FORKSERVER_MARK: "1"})
        try:
            forkserver.ensure_running()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return context


def _start_process(job: dict[str, Any], log_path: Path, launcher: str):
    """Start the run's process; returns ``(handle, wait)``: ``handle.terminate()`` sends SIGTERM, ``handle.kill()``
    SIGKILL, ``wait(seconds)`` waits at most that long (None: until the end) and returns the exit status (negative:
    killed by that signal), or None when the process still runs."""
    if launcher == "forkserver":
        process = forkserver_context().Process(target=process_main, args=(job, str(log_path), os.getpid()),
                                               name=f"run {Path(job['spec']['out_dir']).name}")
        with _PROCESS_LOCK:  # start() polls every live child of this process: not while another thread joins one
            process.start()

        def wait_forked(seconds: float | None) -> int | None:
            from multiprocessing.connection import wait

            if not wait([process.sentinel], seconds):  # (outside the lock: other runs start and end meanwhile)
                return None
            with _PROCESS_LOCK:  # one reader of the child's exit status at a time (see _PROCESS_LOCK)
                process.join()
                return process.exitcode

        return process, wait_forked
    with open(log_path, "ab") as log:  # the child has its own copy of the descriptor
        process = subprocess.Popen([sys.executable, "-m", "batreplay.run.isolated"], stdin=subprocess.PIPE,
                                   stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONHASHSEED="0"))
    payload = [json.dumps(job).encode("utf-8")]  # sent once; a later call goes on sending what is left

    def wait_subprocess(seconds: float | None) -> int | None:
        try:
            process.communicate(payload.pop() if payload else None, timeout=seconds)
        except subprocess.TimeoutExpired:
            return None
        return process.returncode

    return process, wait_subprocess


def _stop_process(handle, wait: Callable[[float | None], int | None]) -> int:
    """SIGTERM, then SIGKILL after :data:`KILL_GRACE_SECONDS` if the process has not ended; its exit status."""
    handle.terminate()
    returncode = wait(KILL_GRACE_SECONDS)
    if returncode is None:
        handle.kill()
        returncode = wait(None)
    return returncode


def _signal_text(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    if not path.is_file():
        return []
    with open(path, "rb") as stream:
        stream.seek(0, os.SEEK_END)
        stream.seek(max(0, stream.tell() - 64_000))
        return stream.read().decode("utf-8", errors="replace").splitlines()[-lines:]


def _own_record_error(out_dir: Path, pid: int) -> str | None:
    """The error of the failure record written by process ``pid`` (not one of an earlier attempt), or None."""
    try:
        document = json.loads(failure_record_path(out_dir).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("pid") != pid:
        return None
    return str(document.get("error", ""))


def run_isolated(spec: RunSpec, *, launcher: str = "subprocess", timeout: float | None = None,
                 cwd: str | os.PathLike[str] | None = None, seed: int = 0,
                 progress_file: str | os.PathLike[str] | None = None, record_fields: dict[str, Any] | None = None,
                 on_start: Callable | None = None, on_end: Callable | None = None,
                 stop: threading.Event | None = None) -> RunOutcome:
    """Run ``spec`` in a process of its own and report what happened (see the module docstring).

    Args:
        spec: the run; its ``out_dir`` (relative: to ``cwd``) is the run directory.
        launcher: ``forkserver`` or ``subprocess`` (see the module docstring).
        timeout: wall-clock limit of the process in seconds (None: no limit); once reached the process is stopped
            and the run fails with an error that says it timed out.
        cwd: the process's working folder (default: this process's).
        seed: seed of the process's global random generators (Python's and numpy's).
        progress_file: where the process writes the run's progress (relative: to ``cwd``); removed at the end.
        record_fields: fields the failure record starts with (JSON values).
        on_start, on_end: called with the process's handle (``terminate()`` stops it, ``pid``) once started / ended.
        stop: if set before the process starts, nothing is started; if set while it runs (the caller stopping it),
            its end without a failure record is ``interrupted``.

    Returns:
        The :class:`RunOutcome`; a failed run has its failure record and no run directory.

    Raises:
        ValueError: an unknown launcher, or a timeout that is not a number of seconds > 0.
        KeyboardInterrupt: Ctrl-C while waiting in the main thread, after stopping the process (SIGTERM).
        OSError: the process or its log cannot be started / written.
    """
    if launcher not in LAUNCHERS:
        raise ValueError(f"unknown launcher {launcher!r} ({' or '.join(LAUNCHERS)})")
    if timeout is not None:
        check_seconds(timeout, "timeout")
    job = _job(spec, cwd, seed, progress_file, record_fields)
    out_dir = Path(os.path.normpath(os.path.join(job["cwd"], job["spec"]["out_dir"])))
    host = socket.gethostname()
    if stop is not None and stop.is_set():
        return RunOutcome("interrupted", out_dir, 0.0, "not started (stopped)", launcher=launcher, host=host)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    log_path = _log_path(out_dir)
    log_path.write_bytes(b"")
    started = time.time()
    try:
        handle, wait = _start_process(job, log_path, launcher)
        try:
            if on_start is not None:
                on_start(handle)
            returncode = wait(timeout)
            timed_out = returncode is None
            if timed_out:
                returncode = _stop_process(handle, wait)
        except BaseException:  # Ctrl-C in this thread: the process stops with it
            _stop_process(handle, wait)
            raise
        finally:
            if on_end is not None:
                on_end(handle)
    except BaseException:
        log_path.unlink(missing_ok=True)
        raise
    finally:
        if job["progress_file"] is not None:
            Path(job["progress_file"]).unlink(missing_ok=True)
    outcome = RunOutcome("done", out_dir, time.time() - started, returncode=returncode, launcher=launcher,
                         host=host, pid=handle.pid)
    return _conclude(outcome, job, log_path, timeout if timed_out else None, stop)


def _conclude(outcome: RunOutcome, job: dict[str, Any], log_path: Path, timed_out_after: float | None,
              stop: threading.Event | None) -> RunOutcome:
    """Classify the ended process (``outcome`` holds its facts, status ``done``) by what it left, move its log, and
    write the failure record it could not write itself."""
    from batreplay.run.runner import is_run_directory

    out_dir, returncode = outcome.out_dir, outcome.returncode
    if returncode == 0 and timed_out_after is None and is_run_directory(out_dir):
        if log_path.stat().st_size > 0:
            shutil.move(log_path, out_dir / WORKER_LOG)
        else:
            log_path.unlink()
        failure_log_path(out_dir).unlink(missing_ok=True)  # of an earlier attempt
        return outcome
    own_error = _own_record_error(out_dir, outcome.pid) if returncode == 1 else None
    stopping = stop is not None and stop.is_set()
    if timed_out_after is None and (returncode in INTERRUPTED_STATUSES or (stopping and own_error is None)):
        # Stopped by a signal, or ended while the caller was stopping it: not finished, not failed.
        log_path.unlink(missing_ok=True)
        outcome.status, outcome.error = "interrupted", _signal_text(returncode)
        return outcome
    outcome.status, outcome.log_tail = "failed", _log_tail(log_path)
    if own_error is not None:
        outcome.error = own_error
    else:
        if timed_out_after is not None:
            error_type, outcome.error = "Timeout", (
                f"timed out: the run's process was stopped after {timed_out_after:g} s of wall-clock time (its limit; "
                f"{_signal_text(returncode)})")
        else:
            error_type, outcome.error = "ProcessDied", f"run process {_signal_text(returncode)} without a result"
        write_failure_record(out_dir, error_type, outcome.error, spec=job["spec"], fields=job["record_fields"],
                             log_tail=outcome.log_tail, host=outcome.host, pid=outcome.pid,
                             wall_seconds=outcome.wall_seconds, returncode=returncode)
    shutil.move(log_path, failure_log_path(out_dir))
    return outcome


if __name__ == "__main__":
    sys.exit(main())
