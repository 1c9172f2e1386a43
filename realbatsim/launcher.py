"""Run a decision process against a real Batsim 4.2 over ZeroMQ: :func:`run_with_batsim`.

Batsim holds a ZeroMQ REQ socket and connects it to the decision process, which binds a REP socket
(``../shared/docs/batsim-protocol-notes.md``, "Transport and envelope"). :func:`run_with_batsim` therefore:

1. finds the ``batsim`` executable (:func:`~.process.find_batsim`) and checks that ``batsim --version`` says 4.2.x
   (:func:`~.process.check_batsim_version`);
2. binds the decision process's REP socket on a free loopback port (``tcp://127.0.0.1:PORT``; the port is
   chosen by ZeroMQ at bind time, so no other process can take it in between: :class:`~.channel.BatsimChannel`);
3. starts ``batsim -p PLATFORM -w WORKLOAD -e EXPORT_DIR/out -s tcp://127.0.0.1:PORT [dynamic-job flags]``
   in its own process group (:func:`~.process.batsim_command`, :func:`~.process.start_batsim`), its standard
   output and error going to log files in the export directory;
4. runs the pybatsim decision process (any ``BatsimScheduler``) in the calling thread until Batsim's
   SIMULATION_ENDS has been answered (:func:`~.channel.decide_until_end`), then waits for Batsim to exit and
   checks that it wrote its output files (:func:`~.process.check_outputs`).

Every wait is bounded (see :mod:`.channel`), and Batsim's whole process group is killed on any failure (including
an exception in the scheduler or a ``KeyboardInterrupt``): no process is left behind. A Batsim that exits with
status 0 without writing its outputs (it does so, for instance, when it refuses a ``delay`` profile of 0 s) is an
error too (:class:`~.errors.BatsimNoOutput`). Batsim's standard error goes to ``batsim.stderr.log`` in the export
directory, or, when the caller names another file (``stderr_log``), there while Batsim runs and into the export
directory only once the run succeeded: the error messages (:mod:`.errors`) name the file where the log stays.

This module imports :mod:`.process`, :mod:`.channel` (pyzmq) and :mod:`.errors`, and
:mod:`batreplay.engine.decision_process` (pybatsim) when a run starts; it never imports the embedded engine.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from batreplay.engine.choices import DEFAULT_TIMEOUT  # the default of ``timeout`` (--batsim-timeout)
from batreplay.realbatsim.channel import BatsimChannel, decide_until_end
from batreplay.realbatsim.errors import BatsimTimeout, crashed
from batreplay.realbatsim.process import (EXPORT_PREFIX, STDERR_LOG, STDOUT_LOG, batsim_command,
                                          check_batsim_version, check_dynamic_flags, check_outputs, find_batsim,
                                          required_names, start_batsim, terminate_process_group)

if TYPE_CHECKING:
    from batsim.batsim import BatsimScheduler


@dataclass
class BatsimRunResult:
    """What a finished real-Batsim run produced.

    Attributes:
        export_dir: the directory holding Batsim's outputs and logs.
        outputs: Batsim's output files by name (``out_jobs.csv``, ``out_schedule.csv``, ...).
        batsim_path: the executable that ran.
        batsim_version: what ``batsim --version`` printed (None when the check was skipped).
        command: Batsim's full command line.
        endpoint: the decision process's ZeroMQ endpoint (``tcp://127.0.0.1:PORT``).
        messages: number of Batsim messages answered.
        scheduler_seconds: wall-clock seconds spent in the decision process (from a message's arrival to its
            reply).
        wall_seconds: wall-clock seconds of the whole run.
        stdout_log, stderr_log: Batsim's standard output and error.
    """

    export_dir: Path
    outputs: dict[str, Path]
    batsim_path: Path
    batsim_version: str | None
    command: list[str]
    endpoint: str
    messages: int
    scheduler_seconds: float
    wall_seconds: float
    stdout_log: Path
    stderr_log: Path

    @property
    def out_jobs(self) -> Path:
        """Batsim's ``out_jobs.csv``."""
        return self.outputs["out_jobs.csv"]


def run_with_batsim(
    platform_path: str | os.PathLike[str],
    workload_path: str | os.PathLike[str],
    scheduler: BatsimScheduler,
    export_dir: str | os.PathLike[str],
    *,
    batsim_path: str | os.PathLike[str] | None = None,
    dynamic_jobs: bool = False,
    acknowledge_dynamic_jobs: bool = False,
    profile_reuse: bool = False,
    compute_sharing: bool = False,
    master_host: str | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    check_version: bool = True,
    on_request: Callable[[dict], None] | None = None,
    on_reply: Callable[[dict], None] | None = None,
    deadline=None,
    stderr_log: str | os.PathLike[str] | None = None,
) -> BatsimRunResult:
    """Simulate with a real Batsim: ``scheduler`` decides in this process, Batsim runs as a subprocess.

    Args:
        platform_path: SimGrid platform file (``-p``).
        workload_path: Batsim workload JSON file (``-w``; Batsim names it ``w0``).
        scheduler: a pybatsim ``BatsimScheduler`` instance (e.g. from
            :func:`batreplay.schedulers.registry.load_scheduler`).
        export_dir: directory for Batsim's outputs (created if needed; it must not already hold
            ``out_jobs.csv`` or ``out_schedule.csv``) and its logs (``batsim.stdout.log``,
            ``batsim.stderr.log``).
        batsim_path: the ``batsim`` executable (``--batsim``); None: ``batsim`` on PATH.
        dynamic_jobs, acknowledge_dynamic_jobs, profile_reuse: Batsim's ``--enable-dynamic-jobs``,
            ``--acknowledge-dynamic-jobs`` and ``--enable-profile-reuse`` (needed by schedulers that register
            jobs, such as the feedback user model's broker).
        compute_sharing: Batsim's ``--enable-compute-sharing`` (several jobs may run on one host at once).
        master_host: Batsim's ``-m`` (default: Batsim's own, ``master_host``, or a host with role ``master``).
        extra_args: further Batsim options, passed as given.
        timeout: seconds; the longest Batsim may stay silent while the decision process waits for its next
            message (this includes its start-up before the first message), and the longest it may take to
            exit after SIMULATION_ENDS was answered. Time spent deciding in ``scheduler`` is not counted.
            Default :data:`DEFAULT_TIMEOUT` (600 s).
        check_version: run :func:`~.process.check_batsim_version` first.
        on_request: called with each Batsim message before the scheduler sees it (progress reporting).
        on_reply: called with each reply of the decision process before it is sent (with ``on_request``: the
            run's transcript, as the golden recordings keep it).
        deadline: a wall-clock limit of the whole run (a :class:`batreplay.deadline.Deadline`), checked while
            waiting for Batsim; :class:`~batreplay.deadline.WallClockTimeout` when it expires (Batsim killed).
        stderr_log: where Batsim's standard error is written while it runs, and stays if the run fails (error
            messages name it); once the run succeeded it is moved to ``export_dir/batsim.stderr.log``. None:
            ``export_dir/batsim.stderr.log`` from the start.

    Returns:
        A :class:`BatsimRunResult`.

    Raises:
        BatsimNotFound, BatsimVersionError: see :func:`~.process.find_batsim`, :func:`~.process.check_batsim_version`.
        FileNotFoundError: missing platform or workload file.
        FileExistsError: ``export_dir`` already holds Batsim outputs.
        BatsimCrashed: Batsim exited with a non-zero status (``exit_status``), was killed by a signal, or
            exited before the simulation ended; the message ends with the tail of its standard error.
        BatsimTimeout: Batsim did not connect, stopped answering, or did not exit within ``timeout``.
        BatsimNoOutput: Batsim exited with status 0 without writing ``out_jobs.csv`` / ``out_schedule.csv``.
        BatsimProtocolError: Batsim sent a message that is not a protocol message.
        Any exception raised by the scheduler, unchanged (Batsim is killed first); an exit of the scheduler
            (``sys.exit``) becomes a :class:`~batreplay.schedulers.failures.DecisionProcessError`.
    """
    started = time.perf_counter()
    check_dynamic_flags(dynamic_jobs, acknowledge_dynamic_jobs, profile_reuse)
    batsim, version = _checked_batsim(batsim_path, check_version)
    platform, workload = _existing_file(platform_path, "platform"), _existing_file(workload_path, "workload")
    export = _empty_export_dir(export_dir)
    stdout_log, final_stderr_log = export / STDOUT_LOG, export / STDERR_LOG
    stderr_log = final_stderr_log if stderr_log is None else Path(os.path.abspath(stderr_log))

    channel = BatsimChannel(timeout=timeout, on_request=on_request, deadline=deadline, on_reply=on_reply)
    process: subprocess.Popen | None = None
    try:
        endpoint = channel.bind()
        command = batsim_command(batsim, platform, workload, export / EXPORT_PREFIX, endpoint,
                                 dynamic_jobs=dynamic_jobs, acknowledge_dynamic_jobs=acknowledge_dynamic_jobs,
                                 profile_reuse=profile_reuse, compute_sharing=compute_sharing,
                                 master_host=master_host, extra_args=extra_args)
        process = start_batsim(command, export, stdout_log, stderr_log)
        channel.watch(process, stderr_log, export)
        decide_until_end(channel, scheduler)
        outputs = _wait_for_outputs(channel, process, export, stderr_log)
        if stderr_log != final_stderr_log:
            os.replace(stderr_log, final_stderr_log)
            stderr_log = final_stderr_log
    except BaseException:
        if process is not None:
            terminate_process_group(process)
        raise
    finally:
        channel.close()
    return BatsimRunResult(
        export_dir=export, outputs=outputs, batsim_path=batsim, batsim_version=version, command=command,
        endpoint=endpoint, messages=channel.messages, scheduler_seconds=channel.scheduler_seconds,
        wall_seconds=time.perf_counter() - started, stdout_log=stdout_log, stderr_log=stderr_log,
    )


def _checked_batsim(batsim_path: str | os.PathLike[str] | None, check_version: bool) -> tuple[Path, str | None]:
    """The ``batsim`` executable and, when ``check_version``, the version it printed (None otherwise)."""
    batsim = find_batsim(batsim_path)
    return batsim, (check_batsim_version(batsim) if check_version else None)


def _existing_file(path: str | os.PathLike[str], what: str) -> Path:
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_file():
        raise FileNotFoundError(f"{what} file {path}: no such file")
    return resolved


def _empty_export_dir(export_dir: str | os.PathLike[str]) -> Path:
    """``export_dir`` as an absolute path, created if needed.

    Raises:
        FileExistsError: it already holds the outputs of a Batsim run.
    """
    export = Path(export_dir).resolve()
    export.mkdir(parents=True, exist_ok=True)
    stale = [name for name in required_names() if (export / name).exists()]
    if stale:
        raise FileExistsError(f"{export} already holds {', '.join(stale)}: give an empty export directory")
    return export


def _wait_for_outputs(channel: BatsimChannel, process: subprocess.Popen, export: Path,
                      stderr_log: Path) -> dict[str, Path]:
    """Once SIMULATION_ENDS was answered: wait for Batsim to exit (at most the channel's timeout), then check
    its status and its output files; returns them by name (see :func:`~.process.check_outputs`).

    Raises:
        BatsimTimeout: Batsim is still running after the timeout.
        BatsimCrashed: it exited with a non-zero status or was killed by a signal.
        BatsimNoOutput: its output files are missing or empty.
    """
    status = channel.wait_exit(process)
    if status is None:
        raise BatsimTimeout(f"batsim did not exit within {channel.timeout:g} s after the simulation ended (killed); "
                            f"see {stderr_log}")
    if status != 0:
        raise crashed(status, "after the simulation ended", stderr_log)
    return check_outputs(export, stderr_log, status)
