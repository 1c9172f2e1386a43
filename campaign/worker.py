"""One campaign instance: its task, the run it is, and its manifest ``instance.json``.

An instance is one run in a process of its own (:func:`batreplay.run.isolated.run_isolated`, called for each
instance by the executors of :mod:`batreplay.campaign.executors`; see :mod:`batreplay.run.isolated` for the
process, its signals, its log and its failure record). The campaign adds:

- the task (:func:`task_for`), a JSON object: what an executor (or a Dask worker) receives for an instance;
- its run (:func:`run_spec_of`): the instance's parameters that are run options, its workload and platform files,
  read from the campaign root, and the run directory ``<output_root>/<id>`` (replaced if a previous attempt left
  one);
- the seed of the process's global random generators (Python's and numpy's): the instance's ``seed`` parameter, so
  a stochastic scheduler replays the same way;
- in its failure record ``<output_root>/<id>.failed.json``, the campaign, id, parameters and labels
  (:func:`failure_fields`), before the run's own fields;
- ``instance.json`` (:func:`write_instance_manifest`), written into the run directory last, atomically, once the
  run's process has ended with its run directory: campaign, id, parameters, labels, engine, seed, the log replayed
  (with its SHA-256), wall time, host and pid of the process (``run.json`` beside it holds the run's own manifest:
  input checksums, package versions, engine, wall time). A directory with ``instance.json`` is a finished instance;
  one without it (killed in between) is redone.

:func:`execute` runs an instance in this process instead of a process of its own: the same run, then the manifest.
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from batreplay.atomic import write_json_atomically
from batreplay.run.isolated import FAILED_LOG_SUFFIX, FAILED_SUFFIX, run_here
from batreplay.run.isolated import write_failure_record as write_run_failure_record

__all__ = ["FAILED_LOG_SUFFIX", "FAILED_SUFFIX", "INSTANCE_MANIFEST", "execute", "failure_fields", "is_finished",
           "run_spec_of", "task_for", "write_failure_record", "write_instance_manifest"]

INSTANCE_MANIFEST = "instance.json"


def is_finished(output_root: Path, instance_id: str) -> bool:
    """True when the instance's run directory holds its ``instance.json``, written last (see the module)."""
    return (Path(output_root) / instance_id / INSTANCE_MANIFEST).is_file()


def failure_fields(task: dict[str, Any]) -> dict[str, Any]:
    """What an instance's failure record starts with: its campaign, id, parameters and labels."""
    return {"campaign": task["campaign"], "id": task["id"], "params": task["params"], "labels": task["labels"]}


def write_failure_record(task: dict[str, Any], error_type: str, error: str, **details: Any) -> Path:
    """Write ``<output_root>/<id>.failed.json`` atomically for a failure outside the run's process (no run could be
    built, the Dask worker died): :func:`failure_fields`, the error (``error_type``, ``error``), ``details`` and when
    it ended. Returns its path.

    Raises:
        OSError: the output root cannot be written.
    """
    return write_run_failure_record(Path(task["output_root"]) / task["id"], error_type, error,
                                    fields=failure_fields(task), **details)


def task_for(instance, campaign) -> dict[str, Any]:
    """The JSON task of one instance: what its run needs.

    The run's process works in the campaign root (``root``), so the workload path stays as the spec writes it
    (relative to the root): run directories and reports then name logs without the checkout's location.

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


def run_spec_of(task: dict[str, Any]):
    """The :class:`~batreplay.run.spec.RunSpec` of a task: the instance's parameters that are run options (the
    keys of :func:`~batreplay.run.spec.flat_fields`), its workload and platform files, its run directory
    (``<output_root>/<id>``, replaced if a previous attempt left one). A rigid instance has no sessions
    (``None``): the replay part's default stands.

    Raises:
        RunSpecError: a parameter the run refuses (named).
    """
    from batreplay.run.spec import RunSpec, flat_fields

    params = task["params"]
    options = {key: params[key] for key in flat_fields() if key in params and params[key] is not None}
    options.pop("scheduler")
    return RunSpec.build(workload=task["workload"], platform=task["platform"], scheduler=params["scheduler"],
                         out_dir=Path(task["output_root"]) / task["id"], force=True, **options)


def write_instance_manifest(task: dict[str, Any], *, wall_seconds: float, host: str, pid: int | None) -> Path:
    """Write ``instance.json`` into the instance's finished run directory, atomically (see the module); the log's
    SHA-256 and the simulation's wall time are read from the ``run.json`` beside it. Returns its path.

    Args:
        wall_seconds: wall-clock time of the instance's run process, seconds.
        host, pid: where the run's process ran.

    Raises:
        OSError, ValueError, KeyError: the run directory has no readable ``run.json``.
    """
    run_dir = Path(task["output_root"]) / task["id"]
    run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    return write_json_atomically(run_dir / INSTANCE_MANIFEST, {
        "campaign": task["campaign"], "id": task["id"], "status": "done", "params": task["params"],
        "labels": task["labels"], "engine": task["params"]["engine"], "seed": int(task["params"]["seed"]),
        "workload_file": task["workload"],
        "workload_sha256": run["inputs_sha256"]["workload"],
        "platform_file": task["platform"],
        "wall_seconds": wall_seconds, "simulation_wall_seconds": run["wall_seconds"],
        "host": host, "pid": pid,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
    })


def execute(task: dict[str, Any]) -> int:
    """Run one instance in this process (:func:`batreplay.run.isolated.run_here`, in the campaign root, seeded),
    then write its ``instance.json``. Returns 0 (finished) or 1 (failure record written).

    Raises:
        KeyboardInterrupt, SystemExit: passed on, nothing recorded.
    """
    started = time.time()
    try:
        spec = run_spec_of(task)
    except ValueError as err:  # a parameter the run refuses: a failed instance, like a failed run
        write_failure_record(task, type(err).__name__, str(err))
        return 1
    status = run_here(spec, cwd=task["root"], seed=int(task["params"]["seed"]), record_fields=failure_fields(task))
    if status == 0:
        write_instance_manifest(task, wall_seconds=time.time() - started, host=socket.gethostname(), pid=os.getpid())
    return status
