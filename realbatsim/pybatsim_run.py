"""pybatsim's own launcher and ``batsim`` as two processes, as a user would run them in two terminals.

:func:`run_pybatsim_next_to_batsim` is the reference run that the tests and benchmarks compare batreplay with:
nothing of batreplay decides, pybatsim's ``pybatsim`` command loads the scheduler, Batsim connects to it on a free
loopback port, and both are measured (wall time, peak memory). This module imports :mod:`.errors`,
:mod:`.process` and :mod:`.channel` (for the clock of its waits); it never imports pybatsim itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from batreplay.engine.choices import DEFAULT_TIMEOUT
from batreplay.realbatsim import channel
from batreplay.realbatsim.errors import BatsimCrashed, BatsimNotFound, BatsimTimeout
from batreplay.realbatsim.process import (EXPORT_PREFIX, batsim_command, find_batsim, free_tcp_port,
                                          terminate_process_group)


@dataclass
class PybatsimRun:
    """What :func:`run_pybatsim_next_to_batsim` measured.

    Attributes:
        out_jobs: Batsim's ``out_jobs.csv``.
        wall_seconds: from the start of both processes to the end of both.
        peak_mb: the larger peak resident memory of the two processes (MB, from ``wait4``).
        batsim_log, scheduler_log: Batsim's and pybatsim's standard output and error.
    """

    out_jobs: Path
    wall_seconds: float
    peak_mb: float
    batsim_log: Path
    scheduler_log: Path


def run_pybatsim_next_to_batsim(batsim: str | os.PathLike[str], platform: str | os.PathLike[str],
                                workload: str | os.PathLike[str], scheduler: str, out: str | os.PathLike[str], *,
                                timeout: float = DEFAULT_TIMEOUT,
                                cwd: str | os.PathLike[str] | None = None) -> PybatsimRun:
    """Run ``batsim`` and pybatsim's own launcher (``pybatsim SCHEDULER -s ENDPOINT -t 0``) as two processes
    connected over ZeroMQ on a free loopback port, as a user would in two terminals: the reference run that tests
    and benchmarks compare batreplay with.

    Args:
        batsim: the ``batsim`` executable (see :func:`~batreplay.realbatsim.process.find_batsim`).
        platform, workload: Batsim's ``-p`` and ``-w`` files.
        scheduler: a pybatsim scheduler name (``easyBackfill``) or file.
        out: directory for Batsim's outputs (``-e out/out``) and both logs (``batsim.log``, ``scheduler.log``);
            Batsim's working directory.
        timeout: seconds both processes together may take; then both are killed.
        cwd: the working directory of pybatsim's launcher.

    Raises:
        BatsimNotFound: no ``pybatsim`` launcher next to this Python, or no such ``batsim``.
        BatsimTimeout: the run took longer than ``timeout`` (both process groups killed).
        BatsimCrashed: either process exited with a non-zero status (the message names both logs; pybatsim is
            killed as soon as Batsim failed).
    """
    launcher = Path(sys.executable).with_name("pybatsim")
    if not launcher.is_file():
        raise BatsimNotFound(f"pybatsim's launcher not found next to {sys.executable}")
    batsim_path = find_batsim(batsim)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    batsim_log, scheduler_log = out / "batsim.log", out / "scheduler.log"
    started = time.perf_counter()
    processes: list[subprocess.Popen] = []
    try:
        with open(scheduler_log, "wb") as log_s, open(batsim_log, "wb") as log_b:
            processes.append(subprocess.Popen([os.fspath(launcher), scheduler, "-s", endpoint, "-t", "0"], cwd=cwd,
                                              stdout=log_s, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                              start_new_session=True))
            command = batsim_command(Path(batsim_path), Path(os.path.abspath(platform)), Path(os.path.abspath(workload)),
                                     Path(os.path.abspath(out / EXPORT_PREFIX)), endpoint)
            processes.append(subprocess.Popen(command, cwd=out, stdout=log_b, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, start_new_session=True))
        scheduler_process, batsim_process = processes
        limit = channel._clock() + timeout  # (the clock of every wait on Batsim, which the tests may replace)
        logs = f"see {batsim_log} and {scheduler_log}"
        status_b, peak_b = _reap(batsim_process, limit)
        if status_b is not None and status_b != 0:  # pybatsim is killed: it may wait for Batsim forever
            raise BatsimCrashed(f"batsim exited with status {status_b} next to pybatsim; {logs}", status_b)
        status_s, peak_s = _reap(scheduler_process, limit) if status_b is not None else (None, 0.0)
        if status_s is None:
            raise BatsimTimeout(f"batsim and pybatsim did not finish within {timeout:g} s (killed); {logs}")
        if status_s != 0:
            raise BatsimCrashed(f"pybatsim exited with status {status_s} next to batsim; {logs}", status_s)
    finally:
        for process in processes:
            terminate_process_group(process, grace=1.0)
    wall = time.perf_counter() - started
    return PybatsimRun(out / f"{EXPORT_PREFIX}_jobs.csv", wall, max(peak_b, peak_s), batsim_log, scheduler_log)


def _reap(process: subprocess.Popen, limit: float) -> tuple[int | None, float]:
    """Wait for ``process`` until the clock reads ``limit``; its exit status (None if still running) and peak
    resident memory in MB (``wait4``)."""
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return process.returncode, usage.ru_maxrss / 1024
        if channel._clock() > limit:
            return None, 0.0
        time.sleep(0.01)
