"""One campaign instance, in its own process: ``python -m batreplay.campaign.worker`` with the task on stdin.

Every instance runs in a fresh process of its own, so that a crash, a leak or a real Batsim started by the run
stays inside one process: locally it is forked from a preloaded forkserver (:func:`process_main`, no import
cost); on a Dask worker it is a new interpreter, ``python -m batreplay.campaign.worker`` with the task
(:func:`task_for`, a JSON object) on stdin (:func:`main`). Python's hash seed is fixed (``PYTHONHASHSEED=0``)
for every instance process. The process then:

1. seeds Python's and numpy's global random generators with the instance's seed, so a stochastic scheduler
   replays the same way;
2. calls :func:`batreplay.run.runner.run` with ``out_dir = <output_root>/<id>``; ``run`` writes the directory
   atomically (temporary sibling, then rename);
3. writes ``instance.json`` into it, last, atomically (temporary file, then rename): campaign, id,
   parameters, labels, engine, seed, the log replayed (with its SHA-256), wall time, host (``run.json``
   beside it holds the run's own manifest: input checksums, package versions, engine, wall time).
   A directory with ``instance.json`` is a finished instance; one without it (killed between 2 and 3) is
   redone.

On an exception it writes ``<output_root>/<id>.failed.json`` (error, traceback, parameters) and exits 1. On
SIGTERM (and SIGINT, except in forked instances, which leave Ctrl-C to the campaign runner) it exits 143 /
130 without a failure record, wherever the signal finds it (in a scheduler's code too: :class:`Stopped` is not
taken for the scheduler exiting), and the run's staging folder is removed: an interrupted instance is simply
not finished. If the process that started it dies (``kill -9`` of the campaign runner), it notices within a
second and stops too. A task may name a ``progress_file``, where the run's progress is written as it goes
(the web GUI's progress bars).
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import socket
import sys
import threading
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from batreplay.atomic import process_alive, write_json_atomically

INSTANCE_MANIFEST = "instance.json"
FAILED_SUFFIX = ".failed.json"
#: The output of a failed instance's process, next to its failure record: ``<id>.failed.log``.
FAILED_LOG_SUFFIX = ".failed.log"
#: Exit statuses of an instance process stopped by SIGINT / SIGTERM (not a failure of the instance).
INTERRUPTED_STATUSES = frozenset({130, 143, -signal.SIGINT, -signal.SIGTERM})


def is_finished(output_root: Path, instance_id: str) -> bool:
    """True when the instance's run directory holds its ``instance.json``, written last (see the module)."""
    return (Path(output_root) / instance_id / INSTANCE_MANIFEST).is_file()


def write_failure_record(task: dict[str, Any], error_type: str, error: str, **details: Any) -> Path:
    """Write ``<output_root>/<id>.failed.json`` atomically: the task's campaign, id, parameters and labels, the
    error (``error_type``, ``error``), when it ended, and ``details`` (traceback, host, wall seconds, ...).
    Returns its path."""
    path = Path(task["output_root"]) / f"{task['id']}{FAILED_SUFFIX}"
    write_json_atomically(path, {
        "campaign": task["campaign"], "id": task["id"], "status": "failed", "error_type": error_type,
        "error": error, "traceback": "", "params": task["params"], "labels": task["labels"], **details,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
    })
    return path


def task_for(instance, campaign) -> dict[str, Any]:
    """The JSON task of one instance: what the worker process needs.

    The worker runs in the campaign root (``root``), so the workload path stays as the spec writes it (relative
    to the root): run directories and reports then name logs without the checkout's location.

    Args:
        instance: a :class:`batreplay.campaign.spec.Instance`.
        campaign: its :class:`batreplay.campaign.spec.CampaignSpec`; its platform files must have been
            prepared (:func:`batreplay.campaign.platforms.prepare_platforms`).
    """
    from batreplay.campaign.platforms import platform_for

    return {
        "campaign": campaign.name,
        "id": instance.id,
        "output_root": str(campaign.output_root),
        "params": instance.params,
        "labels": instance.labels,
        "root": str(campaign.root),
        "workload": instance.log.workload,
        "platform": (instance.log.platform if instance.experiment.variant.is_recorded and instance.log.platform
                     else str(platform_for(campaign, instance))),
    }


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGINT reached the instance process: it stops unfinished, with exit status ``128 + signal``.

    Not a ``SystemExit``: raised inside a scheduler's code, an exit would be taken for the scheduler's own (a
    failed run, see :mod:`batreplay.schedulers.failures`), where a stop request is no failure of the run."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _on_signal(signum, frame) -> None:
    raise Stopped(128 + signum)


def _watch_parent(parent: int, runner: int | None) -> None:
    """Stop this process (as SIGTERM would) once its parent or the campaign runner ``runner`` has died."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent or (runner is not None and not process_alive(runner)):
            os.kill(os.getpid(), signal.SIGTERM)
            return


def run_spec_of(task: dict[str, Any]):
    """The :class:`~batreplay.run.spec.RunSpec` of a task: the instance's parameters that are run options (the
    keys of :data:`~batreplay.run.spec.FLAT_FIELDS`), its workload and platform files, its run directory
    (``<output_root>/<id>``, replaced if a previous attempt left one). A rigid instance has no sessions
    (``None``): the replay part's default stands."""
    from batreplay.run.spec import FLAT_FIELDS, RunSpec

    params = task["params"]
    options = {key: params[key] for key in FLAT_FIELDS if key in params and params[key] is not None}
    options.pop("scheduler")
    return RunSpec.build(workload=task["workload"], platform=task["platform"], scheduler=params["scheduler"],
                         out_dir=Path(task["output_root"]) / task["id"], force=True, **options)


def _progress_writer(path: str | None):
    """The ``on_progress`` of a run whose task names a ``progress_file`` (the web GUI's runs): each report is
    written there atomically as ``{"now": simulated s, "done": jobs ended, "total": jobs}``; None without one."""
    if not path:
        return None

    def write(now: float, done: int, total: int) -> None:
        write_json_atomically(Path(path), {"now": now, "done": done, "total": total})

    return write


def execute(task: dict[str, Any]) -> int:
    """Run one instance in this process (see the module docstring); returns the exit status."""
    started = time.time()
    os.chdir(task["root"])
    output_root = Path(task["output_root"])
    failed_path = output_root / f"{task['id']}{FAILED_SUFFIX}"
    seed = int(task["params"]["seed"])
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % 2**32)
        from batreplay.run.runner import run

        result = run(run_spec_of(task), on_progress=_progress_writer(task.get("progress_file")))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as err:  # noqa: BLE001 - any failure of the instance is recorded, the campaign goes on
        write_failure_record(task, type(err).__name__, str(err), traceback=traceback.format_exc(),
                             host=socket.gethostname(), pid=os.getpid(), wall_seconds=time.time() - started)
        print(traceback.format_exc(), file=sys.stderr)
        return 1
    write_json_atomically(result.out_dir / INSTANCE_MANIFEST, {
        "campaign": task["campaign"], "id": task["id"], "status": "done", "params": task["params"],
        "labels": task["labels"], "engine": task["params"]["engine"], "seed": seed,
        "workload_file": task["workload"],
        "workload_sha256": result.inputs_sha256["workload"],
        "platform_file": task["platform"],
        "wall_seconds": time.time() - started, "simulation_wall_seconds": result.wall_seconds,
        "host": socket.gethostname(), "pid": os.getpid(),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
    })
    failed_path.unlink(missing_ok=True)
    return 0


def _prepare_process(runner: int | None = None, *, ignore_sigint: bool = False) -> None:
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_sigint else _on_signal)
    threading.Thread(target=_watch_parent, args=(os.getppid(), runner), daemon=True).start()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def process_main(task: dict[str, Any], log_path: str, runner: int) -> None:
    """Target of an instance process started by :mod:`multiprocessing` (forkserver): output to ``log_path``,
    then :func:`execute`; the exit status is the process's exit code. ``runner`` is the pid of the process
    that started it (its parent is the forkserver, which outlives it): the instance stops when it dies.

    Such a process ignores SIGINT: a Ctrl-C in the terminal reaches the whole process group, and the campaign
    runner, which receives it too, stops its instances with SIGTERM (exit status 143, not a failure)."""
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    try:  # (from the moment the handlers are set, a stop may come at any point)
        _prepare_process(runner, ignore_sigint=True)
        status = execute(task)
        sys.stdout.flush()
        sys.stderr.flush()
    except Stopped as stop:
        status = stop.status
    except SystemExit as stop:
        status = int(stop.code) if isinstance(stop.code, int) else 1
    sys.exit(status)


def main() -> int:
    """Entry point of ``python -m batreplay.campaign.worker``: read the task from stdin and run it."""
    try:
        _prepare_process()
        return execute(json.loads(sys.stdin.read()))
    except Stopped as stop:
        return stop.status
    except SystemExit as stop:
        return int(stop.code) if isinstance(stop.code, int) else 1


if __name__ == "__main__":
    sys.exit(main())
