"""Where instances run: the :class:`Executor` protocol and the registry of executors by name.

Every executor runs each instance the same way, with :func:`run_isolated`: a fresh process per instance,
its output in a log file, its outcome read back from the files it leaves (see
:mod:`batreplay.campaign.worker`). A crash of that process (segfault, ``kill -9``, out of memory) is therefore
an ordinary failed instance, and a real Batsim can run inside it.

- :class:`LocalExecutor` (``local``): up to ``workers`` instance processes at a time on this machine (default:
  every core), driven by a thread pool (the threads only wait for their process). Processes are forked from a
  multiprocessing forkserver that has imported batreplay once (starting a new interpreter costs 2-3 s of
  imports, about as long as a small simulation).
- :class:`DaskExecutor` (``dask``): one Dask task per instance, submitted to a running ``distributed``
  scheduler (``tcp://host:8786``); each task calls :func:`run_isolated` on its Dask worker, which starts a new
  interpreter (``python -m batreplay.campaign.worker``) for the instance. The workers need the same Python
  environment and a view of the same file system (output root, logs) as this machine.

An executor's :meth:`~Executor.run` takes the tasks and a callback called with each :class:`InstanceOutcome`
as it arrives; on ``KeyboardInterrupt`` it cancels what has not started, stops the running instance processes
(locally) and re-raises.

:data:`EXECUTORS` maps each name of ``campaign run --executor`` to its class (``"module:Class"``, imported
only when chosen, so that a missing optional dependency such as ``distributed`` only matters to its user).
Adding an executor takes one file and one line. For instance ``campaign/serial_executor.py``, one instance
at a time (a cluster executor would hand each task to its batch system instead)::

    from batreplay.campaign.executors import ExecutorOptions, run_isolated

    class SerialExecutor:
        name = "serial"

        @classmethod
        def from_options(cls, options: ExecutorOptions) -> "SerialExecutor":
            return cls()

        def describe(self) -> str:
            return "one instance process at a time"

        def run(self, tasks, on_outcome) -> None:
            for task in tasks:
                on_outcome(run_isolated(task, launcher="subprocess"))

and in :data:`EXECUTORS`: ``"serial": "batreplay.campaign.serial_executor:SerialExecutor",``; ``campaign run
--executor serial`` then works (the choices of ``--executor`` are the keys of :data:`EXECUTORS`).
"""


from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from batreplay.campaign.worker import (
    FAILED_LOG_SUFFIX,
    FAILED_SUFFIX,
    INTERRUPTED_STATUSES,
    is_finished,
    process_main,
    write_failure_record,
)

#: How many last lines of an instance's log a failure record keeps.
LOG_TAIL_LINES = 40
WORKER_LOG = "worker.log"


@dataclass
class InstanceOutcome:
    """What became of one instance.

    Attributes:
        id: the instance id.
        status: ``done`` (run directory with ``instance.json``), ``failed`` (``<id>.failed.json`` written) or
            ``interrupted`` (stopped by a signal; nothing recorded, it will run again).
        wall_seconds: wall time of the instance process, seconds.
        error: one line saying why, for ``failed`` / ``interrupted``.
        host: machine the instance ran on.
    """

    id: str
    status: str
    wall_seconds: float
    error: str = ""
    host: str = ""


@dataclass(frozen=True)
class ExecutorOptions:
    """What ``campaign run`` knows about where to run; each executor takes what it needs and refuses the rest.

    Attributes:
        workers: ``--workers``, local instance processes at a time (None: the executor's default).
        scheduler_address: ``--scheduler-address``, a cluster's scheduler (``tcp://host:8786``).
    """

    workers: int | None = None
    scheduler_address: str | None = None


@runtime_checkable
class Executor(Protocol):
    """Runs campaign instance tasks somewhere and reports each :class:`InstanceOutcome`.

    Attributes:
        name: the executor's name in :data:`EXECUTORS` (``--executor NAME``).
    """

    name: str

    @classmethod
    def from_options(cls, options: ExecutorOptions) -> Executor:
        """The executor for the command line's options.

        Raises:
            ValueError: an option this executor does not take, or a missing one it needs (named).
        """
        ...

    def describe(self) -> str:
        """One line for the console (where the instances run)."""
        ...

    def run(self, tasks: Sequence[dict[str, Any]], on_outcome: Callable[[InstanceOutcome], None]) -> None:
        """Run every task (from :func:`batreplay.campaign.worker.task_for`), each in a process of its own
        (:func:`run_isolated`), and call ``on_outcome`` in the calling thread as each ends.

        Raises:
            KeyboardInterrupt: after cancelling the tasks not started (and, where it can, stopping the
                running ones).
        """
        ...


def _signal_text(returncode: int) -> str:
    if returncode < 0:
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
        size = stream.tell()
        stream.seek(max(0, size - 64_000))
        return stream.read().decode("utf-8", errors="replace").splitlines()[-lines:]


#: Modules the local forkserver imports once, so that each instance process starts without import cost.
#: The first one makes the server ignore SIGINT (:mod:`batreplay.campaign.forkserver_signals`).
FORKSERVER_PRELOAD: tuple[str, ...] = (
    "batreplay.campaign.forkserver_signals", "batreplay.campaign.worker", "batreplay.run.runner",
    "batreplay.replay.broker", "batreplay.replay.feedback", "batreplay.replay.session_graph",
    "batreplay.replay.sessions",
)
_FORKSERVER_LOCK = threading.Lock()


def _forkserver_context():
    """The ``forkserver`` multiprocessing context, its server started with :data:`FORKSERVER_PRELOAD` imported
    and ``PYTHONHASHSEED=0`` (set for the server's start only).

    Every instance process forked from it is born ignoring SIGINT (:mod:`batreplay.campaign.forkserver_signals`,
    imported first by the server).
    """
    import multiprocessing
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    with _FORKSERVER_LOCK:
        context.set_forkserver_preload(list(FORKSERVER_PRELOAD))
        previous = os.environ.get("PYTHONHASHSEED")
        os.environ["PYTHONHASHSEED"] = "0"
        try:
            forkserver.ensure_running()
        finally:
            if previous is None:
                del os.environ["PYTHONHASHSEED"]
            else:
                os.environ["PYTHONHASHSEED"] = previous
    return context


def _start_process(task: dict[str, Any], log_path: Path, launcher: str):
    """Start the instance process; returns ``(handle, wait)``: ``handle.terminate()`` sends SIGTERM, ``wait()``
    blocks until it ends and returns its exit status (negative: killed by that signal)."""
    if launcher == "forkserver":
        process = _forkserver_context().Process(target=process_main, args=(task, str(log_path), os.getpid()),
                                                name=f"instance {task['id']}")
        process.start()

        def wait_forked() -> int:
            process.join()
            return process.exitcode

        return process, wait_forked
    if launcher != "subprocess":
        raise ValueError(f"unknown launcher {launcher!r} (forkserver or subprocess)")
    with open(log_path, "ab") as log:  # the child has its own copy of the descriptor
        process = subprocess.Popen([sys.executable, "-m", "batreplay.campaign.worker"], stdin=subprocess.PIPE,
                                   stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONHASHSEED="0"))

    def wait_subprocess() -> int:
        process.communicate(json.dumps(task).encode("utf-8"))
        return process.returncode

    return process, wait_subprocess


def run_isolated(task: dict[str, Any], *, launcher: str = "subprocess", on_start: Callable | None = None,
                 on_end: Callable | None = None, stop: threading.Event | None = None) -> InstanceOutcome:
    """Run one instance task in a process of its own and report what happened.

    The process's output goes to ``<output_root>/.<id>.log``; the log then moves into the run directory as
    ``worker.log`` (done; removed when empty) or next to the failure record as ``<id>.failed.log`` (failed).
    A process that ends without leaving a finished run directory or a failure record (crash, ``kill -9``)
    gets a failure record written here, with its exit status and the end of its log.

    Args:
        task: from :func:`batreplay.campaign.worker.task_for`.
        launcher: ``forkserver`` (forked from a preloaded server; only from a process allowed to have
            children) or ``subprocess`` (a new interpreter, ``python -m batreplay.campaign.worker``).
        on_start, on_end: called with the process handle (``terminate()`` stops it) once started / ended.
        stop: if set before the process starts, nothing is started and the outcome is ``interrupted``.

    Returns:
        The :class:`InstanceOutcome`.
    """
    started = time.time()
    host = socket.gethostname()
    if stop is not None and stop.is_set():
        return InstanceOutcome(task["id"], "interrupted", 0.0, "not started (campaign interrupted)", host)
    root = Path(task["output_root"])
    root.mkdir(parents=True, exist_ok=True)
    run_dir = root / task["id"]
    failed = root / f"{task['id']}{FAILED_SUFFIX}"
    log_path = root / f".{task['id']}.log"
    log_path.write_bytes(b"")
    handle, wait_for_end = _start_process(task, log_path, launcher)
    if on_start is not None:
        on_start(handle)
    try:
        returncode = wait_for_end()
    finally:
        if on_end is not None:
            on_end(handle)
    wall = time.time() - started
    if is_finished(root, task["id"]):
        if log_path.stat().st_size > 0:
            shutil.move(log_path, run_dir / WORKER_LOG)
        else:
            log_path.unlink()
        return InstanceOutcome(task["id"], "done", wall, "", host)
    if returncode in INTERRUPTED_STATUSES or (stop is not None and stop.is_set() and not failed.is_file()):
        # Stopped by a signal, or ended while the campaign was being stopped: not finished, not failed.
        log_path.unlink(missing_ok=True)
        return InstanceOutcome(task["id"], "interrupted", wall, _signal_text(returncode), host)
    tail = _log_tail(log_path)
    if failed.is_file() and returncode == 1:
        try:
            error = json.loads(failed.read_text()).get("error", "")
        except (OSError, json.JSONDecodeError):
            error = "see the failure record"
        shutil.move(log_path, root / f"{task['id']}{FAILED_LOG_SUFFIX}")
        return InstanceOutcome(task["id"], "failed", wall, error, host)
    reason = f"instance process {_signal_text(returncode)} without a result"
    write_failure_record(task, "ProcessDied", reason, log_tail=tail, host=host, wall_seconds=wall,
                         returncode=returncode)
    shutil.move(log_path, root / f"{task['id']}{FAILED_LOG_SUFFIX}")
    return InstanceOutcome(task["id"], "failed", wall, reason, host)


def run_isolated_dict(task: dict[str, Any]) -> dict[str, Any]:
    """:func:`run_isolated` in a new interpreter, returning a plain dict (what a Dask task runs and sends back;
    a Dask worker process may not fork children of its own through multiprocessing)."""
    return asdict(run_isolated(task, launcher="subprocess"))


class LocalExecutor:
    """Instance processes on this machine, at most ``workers`` at a time (default: every core).

    ``launcher``: how each instance process starts (see :func:`run_isolated`): ``forkserver`` (default, no
    import cost) or ``subprocess``.
    """

    name = "local"

    def __init__(self, workers: int | None = None, *, launcher: str = "forkserver") -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers or os.cpu_count() or 1
        self.launcher = launcher
        self._live: set = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()

    @classmethod
    def from_options(cls, options: ExecutorOptions) -> LocalExecutor:
        """``LocalExecutor(options.workers)``.

        Raises:
            ValueError: a scheduler address (that is for ``dask``), or workers < 1.
        """
        if options.scheduler_address:
            raise ValueError("--scheduler-address is for --executor dask")
        return cls(options.workers)

    def describe(self) -> str:
        """One line for the console."""
        return f"{self.workers} local worker process(es)"

    def _started(self, process) -> None:
        with self._lock:
            self._live.add(process)
            if self._stop.is_set():  # started while the campaign was being stopped
                process.terminate()

    def _ended(self, process) -> None:
        with self._lock:
            self._live.discard(process)

    def run(self, tasks: Sequence[dict[str, Any]], on_outcome: Callable[[InstanceOutcome], None]) -> None:
        """Run every task; ``on_outcome`` is called in this thread as each finishes.

        Raises:
            KeyboardInterrupt: after stopping the running instance processes (SIGTERM; they clean their
                temporary directories) and cancelling the others.
        """
        if self.launcher == "forkserver":
            _forkserver_context()  # started here, in the main thread (see there why)
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="instance")
        try:
            pending = {pool.submit(run_isolated, task, launcher=self.launcher, on_start=self._started,
                                   on_end=self._ended, stop=self._stop) for task in tasks}
            while pending:
                finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in finished:
                    on_outcome(future.result())
        except BaseException:
            self._stop.set()
            with self._lock:
                for process in self._live:
                    process.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)


class DaskExecutor:
    """Instances as tasks of an existing Dask distributed cluster (``distributed.Client(address)``).

    Each task runs :func:`run_isolated` on a Dask worker: the instance is still one process of its own,
    started by the worker. The Dask workers must share the file system paths of the campaign (logs, output
    root) and have batreplay installed in the same Python.
    """

    name = "dask"

    def __init__(self, scheduler_address: str, *, client=None) -> None:
        if not scheduler_address and client is None:
            raise ValueError("the dask executor needs --scheduler-address (e.g. tcp://127.0.0.1:8786)")
        self.scheduler_address = scheduler_address
        self._client = client

    @classmethod
    def from_options(cls, options: ExecutorOptions) -> DaskExecutor:
        """``DaskExecutor(options.scheduler_address)``.

        Raises:
            ValueError: a worker count (a Dask cluster has its own workers), or no scheduler address.
        """
        if options.workers is not None:
            raise ValueError("--workers is for --executor local (a Dask cluster has its own workers)")
        return cls(options.scheduler_address or "")

    def describe(self) -> str:
        """One line for the console."""
        return f"Dask cluster at {self.scheduler_address}"

    def run(self, tasks: Sequence[dict[str, Any]], on_outcome: Callable[[InstanceOutcome], None]) -> None:
        """Submit every task to the cluster; ``on_outcome`` is called as each finishes.

        A task whose Dask worker died is recorded as failed (the Dask error is kept). On ``KeyboardInterrupt``
        the tasks not started are cancelled; instances already running on workers go on and are written
        atomically (they count as done at the next ``campaign run``).

        Raises:
            OSError: the scheduler cannot be reached (``distributed`` raises it after its connect timeout).
        """
        from distributed import Client, as_completed

        client = self._client or Client(self.scheduler_address)
        try:
            futures = {client.submit(run_isolated_dict, task, key=f"batreplay-{task['id']}", pure=False,
                                     retries=0): task for task in tasks}
            try:
                for future in as_completed(futures):
                    task = futures[future]
                    try:
                        outcome = InstanceOutcome(**future.result())
                    except Exception as err:  # noqa: BLE001 - the Dask worker itself failed: recorded like a crash
                        outcome = _record_dask_failure(task, err)
                    on_outcome(outcome)
            except BaseException:
                client.cancel(list(futures))
                raise
        finally:
            if self._client is None:
                client.close()


def _record_dask_failure(task: dict[str, Any], err: BaseException) -> InstanceOutcome:
    reason = f"Dask task failed: {type(err).__name__}: {err}"
    write_failure_record(task, type(err).__name__, reason)
    return InstanceOutcome(task["id"], "failed", 0.0, reason, "")


#: ``--executor`` name -> ``"module:Class"`` of a class following :class:`Executor` (imported when chosen).
EXECUTORS: dict[str, str] = {
    "local": "batreplay.campaign.executors:LocalExecutor",
    "dask": "batreplay.campaign.executors:DaskExecutor",
}


def executor_class(name: str) -> type:
    """The class registered as ``name`` in :data:`EXECUTORS`.

    Raises:
        ValueError: no such executor (the known ones named).
        ImportError: its module cannot be imported.
    """
    if name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r} ({' or '.join(EXECUTORS)})")
    module, _, attribute = EXECUTORS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def make_executor(kind: str, *, workers: int | None = None, scheduler_address: str | None = None) -> Executor:
    """The executor registered as ``kind`` in :data:`EXECUTORS`, built from the command line's options.

    Raises:
        ValueError: unknown kind, or options the executor refuses (``--workers`` for ``dask``,
            ``--scheduler-address`` for ``local``, no address for ``dask``, workers < 1).
    """
    return executor_class(kind).from_options(ExecutorOptions(workers=workers, scheduler_address=scheduler_address))
