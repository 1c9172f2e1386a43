"""Where instances run: the :class:`Executor` protocol and the registry of executors by name.

Every executor runs each instance the same way, with :func:`run_instance`: one run in a fresh process of its own
(:func:`batreplay.run.isolated.run_isolated`: its output in a log file, its outcome read back from the files it
leaves, a failure record when it crashed), plus what a campaign adds (:mod:`batreplay.campaign.worker`: the run of
the instance's parameters, its seed, the campaign's fields of the failure record and ``instance.json``). A crash of
that process (segfault, ``kill -9``, out of memory) is therefore an ordinary failed instance, and a real Batsim can
run inside it.

- :class:`LocalExecutor` (``local``): up to ``workers`` instance processes at a time on this machine (default:
  every core), driven by a thread pool (the threads only wait for their process). Processes are forked from a
  multiprocessing forkserver that has imported batreplay once (starting a new interpreter costs 2-3 s of
  imports, about as long as a small simulation).
- :class:`DaskExecutor` (``dask``): one Dask task per instance, submitted to a running ``distributed``
  scheduler (``tcp://host:8786``); each task calls :func:`run_instance` on its Dask worker, which starts a new
  interpreter (``python -m batreplay.run.isolated``) for the instance. The workers need the same Python
  environment and a view of the same file system (output root, logs) as this machine.

An executor's :meth:`~Executor.run` takes the tasks and a callback called with each :class:`InstanceOutcome`
as it arrives; on ``KeyboardInterrupt`` it cancels what has not started, stops the running instance processes
(locally) and re-raises.

:data:`EXECUTORS` maps each name of ``campaign run --executor`` to its class (``"module:Class"``, imported
only when chosen, so that a missing optional dependency such as ``distributed`` only matters to its user).
Adding an executor takes one file and one line. For instance ``campaign/serial_executor.py``, one instance
at a time (a cluster executor would hand each task to its batch system instead)::

    from batreplay.campaign.executors import ExecutorOptions, run_instance

    class SerialExecutor:
        name = "serial"

        @classmethod
        def from_options(cls, options: ExecutorOptions) -> "SerialExecutor":
            return cls()

        def describe(self) -> str:
            return "one instance process at a time"

        def run(self, tasks, on_outcome) -> None:
            for task in tasks:
                on_outcome(run_instance(task, launcher="subprocess"))

and in :data:`EXECUTORS`: ``"serial": "batreplay.campaign.serial_executor:SerialExecutor",``; ``campaign run
--executor serial`` then works (the choices of ``--executor`` are the keys of :data:`EXECUTORS`).
"""


from __future__ import annotations

import importlib
import os
import socket
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from batreplay.campaign.worker import (
    failure_fields,
    run_spec_of,
    write_failure_record,
    write_instance_manifest,
)
from batreplay.run.isolated import forkserver_context, run_isolated


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
        (:func:`run_instance`), and call ``on_outcome`` in the calling thread as each ends.

        Raises:
            KeyboardInterrupt: after cancelling the tasks not started (and, where it can, stopping the
                running ones).
        """
        ...


def run_instance(task: dict[str, Any], *, launcher: str = "subprocess", on_start: Callable | None = None,
                 on_end: Callable | None = None, stop: threading.Event | None = None) -> InstanceOutcome:
    """Run one instance task in a process of its own (:func:`batreplay.run.isolated.run_isolated`, in the campaign
    root, seeded with the instance's seed) and write its ``instance.json`` once its run directory is there.

    The process's output goes to ``<output_root>/.<id>.log``, then into the run directory as ``worker.log`` (done;
    removed when empty) or next to the failure record as ``<id>.failed.log`` (failed). A process that ends without
    leaving a run directory or a failure record (crash, ``kill -9``) gets a failure record all the same, with its
    exit status and the end of its log.

    Args:
        task: from :func:`batreplay.campaign.worker.task_for`.
        launcher: ``forkserver`` (forked from a preloaded server; only from a process allowed to have
            children) or ``subprocess`` (a new interpreter, ``python -m batreplay.run.isolated``).
        on_start, on_end: called with the process handle (``terminate()`` stops it) once started / ended.
        stop: if set before the process starts, nothing is started and the outcome is ``interrupted``.

    Returns:
        The :class:`InstanceOutcome`.

    Raises:
        ValueError: an unknown launcher.
        OSError: the output root cannot be written, or the process cannot be started.
    """
    host = socket.gethostname()
    try:
        spec = run_spec_of(task)
    except ValueError as err:  # a parameter the run refuses: a failed instance, the campaign goes on
        write_failure_record(task, type(err).__name__, str(err), host=host)
        return InstanceOutcome(task["id"], "failed", 0.0, str(err), host)
    outcome = run_isolated(spec, launcher=launcher, cwd=task["root"], seed=int(task["params"]["seed"]),
                           record_fields=failure_fields(task), on_start=on_start, on_end=on_end, stop=stop)
    if outcome.status == "done":
        write_instance_manifest(task, wall_seconds=outcome.wall_seconds, host=outcome.host, pid=outcome.pid)
    error = "not started (campaign interrupted)" if outcome.returncode is None else outcome.error
    return InstanceOutcome(task["id"], outcome.status, outcome.wall_seconds, error, outcome.host)


def run_instance_dict(task: dict[str, Any]) -> dict[str, Any]:
    """:func:`run_instance` in a new interpreter, returning a plain dict (what a Dask task runs and sends back;
    a Dask worker process may not fork children of its own through multiprocessing)."""
    return asdict(run_instance(task, launcher="subprocess"))


class LocalExecutor:
    """Instance processes on this machine, at most ``workers`` at a time (default: every core).

    ``launcher``: how each instance process starts (see :func:`run_instance`): ``forkserver`` (default, no
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
            forkserver_context()  # started here, before the pool's threads exist (see there why)
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="instance")
        try:
            pending = {pool.submit(run_instance, task, launcher=self.launcher, on_start=self._started,
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

    Each task runs :func:`run_instance` on a Dask worker: the instance is still one process of its own,
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
            futures = {client.submit(run_instance_dict, task, key=f"batreplay-{task['id']}", pure=False,
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
