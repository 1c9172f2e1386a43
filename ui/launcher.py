"""Runs launched from the web GUI: each in a background process of its own, with progress and cancellation.

A run is one :class:`~batreplay.run.spec.RunSpec` run in a fresh process (:func:`batreplay.run.isolated.run_isolated`,
``python -m batreplay.run.isolated``), in the runs directory: the run directory ``<runs dir>/<run id>`` is written
atomically; a failure leaves ``<run id>.failed.json`` with its one-line error (and ``<run id>.failed.log``, the
process's output) and no run directory. The process writes its progress to ``<runs dir>/.<run id>.progress.json``,
which :meth:`Launcher.state` reads.

- A run already finished (its run directory is there) is not run again (:meth:`Launcher.submit` returns it as
  ``done``, ``reused``).
- A run already running or waiting is not started twice.
- :meth:`Launcher.cancel` stops it with SIGTERM: the process removes its staging directory on the way out, so
  nothing of the run is left (no run directory, no failure record).
- Runs wait in a queue and at most ``workers`` run at a time. If the app stops, its run processes stop too
  (they watch their parent); finished runs stay on disk and are listed at the next start.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batreplay.run.isolated import failure_log_path, failure_record_path, run_isolated
from batreplay.run.runner import is_run_directory
from batreplay.run.spec import RunSpec
from batreplay.ui.messages import one_line

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"


@dataclass
class RunState:
    """Where a launched run stands.

    Attributes:
        run_id: its directory's name under the runs directory.
        status: ``queued``, ``running``, ``done``, ``failed`` or ``cancelled``.
        error: the one-line reason of a failure, else ``""`` (a cancelled run has none: the user stopped it).
        reused: True when the run had finished before and was not run again.
        done, total: jobs ended so far and jobs to simulate (0 and 0 until the run's process reports).
        now: simulated time reached, in seconds.
        wall_seconds: wall-clock time of the run's process, once it ended (seconds).
    """

    run_id: str
    status: str
    error: str = ""
    reused: bool = False
    done: int = 0
    total: int = 0
    now: float = 0.0
    wall_seconds: float = 0.0
    _process: Any = field(default=None, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)


def progress_path(runs_dir: Path, run_id: str) -> Path:
    """Where the process of ``run_id`` writes its progress."""
    return Path(runs_dir) / f".{run_id}.progress.json"


def status_line(state: RunState) -> str:
    """The New-run page's line about a launched run: ``<run id>: finished`` (and whether it was reused),
    ``<run id>: cancelled``, ``<run id>: failed: <reason>``, or, while it waits or runs, its progress:
    ``<run id>: running, <done>/<total> jobs, t = <simulated time> s``."""
    if state.status == DONE:
        return f"{state.run_id}: finished" + (" (reused: the same run had finished before)" if state.reused else "")
    if state.status == CANCELLED:
        return f"{state.run_id}: cancelled"
    if state.status == FAILED:
        return f"{state.run_id}: failed: {state.error or 'no reason given'}"
    return f"{state.run_id}: {state.status}, {state.done:,}/{state.total:,} jobs, t = {state.now:,.0f} s"


class Launcher:
    """Starts, tracks and cancels runs under ``runs_dir``, at most ``workers`` at a time."""

    def __init__(self, runs_dir: str | Path, *, workers: int = 1) -> None:
        self.runs_dir = Path(runs_dir)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="batreplay-ui-run")
        self._states: dict[str, RunState] = {}
        self._lock = threading.Lock()

    def submit(self, run_id: str, spec: RunSpec) -> RunState:
        """Start ``spec`` as ``run_id`` unless it has finished already or is under way; returns its state. The run
        directory is ``<runs dir>/<run id>`` whatever ``spec.out_dir`` says.

        Raises:
            RunSpecError: ``spec`` with that run directory is refused (not for a spec of :mod:`batreplay.ui.run_form`,
                whose run directory it is already).
        """
        out_dir = self.runs_dir / run_id
        if Path(spec.out_dir) != out_dir:
            spec = spec.replace(out_dir=str(out_dir))
        with self._lock:
            current = self._states.get(run_id)
            if current is not None and current.status in (QUEUED, RUNNING):
                return current
            if is_run_directory(out_dir):
                state = self._states[run_id] = RunState(run_id, DONE, reused=True)
                return state
            for record in (failure_record_path(out_dir), failure_log_path(out_dir)):  # a new attempt
                record.unlink(missing_ok=True)
            state = self._states[run_id] = RunState(run_id, QUEUED)
        self._pool.submit(self._run, state, spec)
        return state

    def _run(self, state: RunState, spec: RunSpec) -> None:
        def started(process) -> None:
            with self._lock:  # a Cancel that came while the process started stops it now
                state._process = process
                state.status = RUNNING
                if state._stop.is_set():
                    process.terminate()

        try:
            # (the Runs page, batreplay.ui.run_index, shows a failed run's choices from its record's "spec")
            outcome = run_isolated(spec, launcher="subprocess", cwd=self.runs_dir,
                                   progress_file=progress_path(self.runs_dir, state.run_id),
                                   on_start=started, stop=state._stop)
        except Exception as err:  # noqa: BLE001 - shown in the page: the app itself goes on
            state.status, state.error = FAILED, one_line(err, kind=True)
            return
        finally:
            state._process = None
            progress_path(self.runs_dir, state.run_id).unlink(missing_ok=True)
        state.wall_seconds = outcome.wall_seconds
        if outcome.status == "done":
            state.status = DONE
        elif outcome.status == "interrupted":
            state.status = CANCELLED
        else:
            state.status, state.error = FAILED, one_line(outcome.error, default="failed")

    def cancel(self, run_id: str) -> bool:
        """Stop ``run_id`` if it waits or runs (nothing of it is kept); False when it does neither."""
        with self._lock:
            state = self._states.get(run_id)
            if state is None or state.status not in (QUEUED, RUNNING):
                return False
            state._stop.set()
            process = state._process
        if process is not None:
            process.terminate()
        return True

    def state(self, run_id: str) -> RunState | None:
        """The state of a run launched by this app (progress read from its process's file), or None."""
        state = self._states.get(run_id)
        if state is not None and state.status == RUNNING:
            try:
                report = json.loads(progress_path(self.runs_dir, run_id).read_text())
                state.done, state.total, state.now = int(report["done"]), int(report["total"]), float(report["now"])
            except (OSError, ValueError, KeyError):
                pass  # not written yet, or between two writes
        return state

    def states(self) -> list[RunState]:
        """Every run launched by this app since it started."""
        return [self.state(run_id) for run_id in list(self._states)]

    def shutdown(self) -> None:
        """Cancel every run that waits or runs, and wait for their processes to stop."""
        for run_id in list(self._states):
            self.cancel(run_id)
        self._pool.shutdown(wait=True)
