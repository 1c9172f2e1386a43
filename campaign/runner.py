"""Running a campaign: what is missing is run, what is finished is kept.

Layout of a campaign's output root (``[campaign] output_root``)::

    campaign.json            the spec file's text and checksum, the instances (id, labels, parameters)
    platforms/               generated platform files (recorded clusters and variants)
    <id>/                    a run directory (batreplay.run.runner.run) + instance.json: a finished instance
    <id>.failed.json         a failed instance: error, traceback, parameters (run again = retried)
    <id>.failed.log          its process output
    .campaign.lock           held (flock) by the runner using this output root

An instance is finished when ``<id>/instance.json`` exists: the run directory appears by an atomic rename and
``instance.json`` is written into it last (see :mod:`batreplay.campaign.worker`). So after Ctrl-C,
``kill -9`` or a crash, nothing finished is lost, and ``campaign run`` again runs only the others. Before
starting, it removes what interrupted instances left: run staging directories ``.<id>.*.tmp``, process logs
``.<id>.log`` and run directories without ``instance.json``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from batreplay.atomic import write_json_atomically
from batreplay.campaign.executors import Executor, InstanceOutcome, LocalExecutor
from batreplay.campaign.platforms import prepare_platforms
from batreplay.campaign.spec import CampaignSpec, Instance
from batreplay.campaign.worker import FAILED_SUFFIX, is_finished, task_for
from batreplay.console import make_console

LOCK_NAME = ".campaign.lock"
CAMPAIGN_MANIFEST = "campaign.json"


class CampaignBusyError(RuntimeError):
    """Another campaign runner holds the output root."""


@dataclass
class CampaignState:
    """What the output root holds for a list of instances.

    Attributes:
        finished: ids with a run directory and ``instance.json``.
        failed: ids with a failure record (and no finished run directory).
        missing: the other ids (never run, interrupted, or failed).
        stale: leftovers of interrupted instances (paths), removed by :func:`clean_stale`.
    """

    finished: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    stale: list[Path] = field(default_factory=list)


def scan(output_root: Path, instances: list[Instance]) -> CampaignState:
    """Classify ``instances`` by what ``output_root`` holds (reads the folder listing once)."""
    state = CampaignState()
    entries = {p.name: p for p in output_root.iterdir()} if output_root.is_dir() else {}
    for instance in instances:
        prefix = f".{instance.id}."
        leftovers = [path for name, path in entries.items()
                     if name.startswith(prefix) and (name.endswith(".tmp") or name == f".{instance.id}.log")]
        state.stale.extend(leftovers)
        if is_finished(output_root, instance.id):
            state.finished.append(instance.id)
            continue
        if f"{instance.id}{FAILED_SUFFIX}" in entries:
            state.failed.append(instance.id)
        state.missing.append(instance.id)
        if instance.id in entries:
            state.stale.append(entries[instance.id])  # renamed into place but instance.json never written
    return state


def clean_stale(paths: list[Path]) -> None:
    """Remove leftovers of interrupted instances (folders and files)."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@contextmanager
def output_root_lock(output_root: Path):
    """Hold an exclusive ``flock`` on ``<output_root>/.campaign.lock`` (released on exit, also by ``kill -9``).

    Raises:
        CampaignBusyError: another process holds it.
    """
    output_root.mkdir(parents=True, exist_ok=True)
    path = output_root / LOCK_NAME
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "?"
            raise CampaignBusyError(f"{output_root} is in use by another campaign runner (pid {holder})") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_campaign_manifest(spec: CampaignSpec, instances: list[Instance]) -> Path:
    """Write ``campaign.json``: spec file, its text and SHA-256, and every instance's labels and parameters."""
    text = spec.path.read_text(encoding="utf-8")
    return write_json_atomically(spec.output_root / CAMPAIGN_MANIFEST, {
        "campaign": spec.name, "spec_file": str(spec.path), "spec_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "spec_text": text, "root": str(spec.root), "engine": spec.engine,
        "instances": [{"id": i.id, "labels": i.labels, "params": i.params} for i in instances],
    })


@dataclass
class CampaignRunSummary:
    """Result of :func:`run_campaign`.

    Attributes:
        total: instances selected.
        already_finished: of those, finished before this run (skipped).
        done, failed, interrupted: outcomes of this run (ids).
        wall_seconds: wall time of this run, seconds.
        outcomes: every :class:`InstanceOutcome` of this run, in arrival order.
    """

    total: int
    already_finished: int
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    outcomes: list[InstanceOutcome] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every selected instance is finished."""
        return self.already_finished + len(self.done) == self.total


def run_campaign(spec: CampaignSpec, *, executor: Executor | None = None, only: str | None = None,
                 console: Console | None = None, show_progress: bool = True,
                 on_outcome: Callable[[InstanceOutcome], None] | None = None) -> CampaignRunSummary:
    """Run the instances of ``spec`` that are not finished.

    Args:
        spec: the campaign.
        executor: any :class:`~batreplay.campaign.executors.Executor` (see
            :data:`~batreplay.campaign.executors.EXECUTORS`); default a
            :class:`~batreplay.campaign.executors.LocalExecutor` on every core.
        only: run only the instances whose id matches this pattern (:meth:`CampaignSpec.select`).
        console: where to print (default: a new rich console).
        show_progress: show a progress bar over instances.
        on_outcome: also called with each outcome.

    Returns:
        A :class:`CampaignRunSummary`. A failing instance does not stop the others: it is in ``failed``,
        with its record in ``<id>.failed.json``.

    Raises:
        CampaignBusyError: another runner uses the output root.
        KeyboardInterrupt: Ctrl-C; finished instances are kept, running ones stopped and cleaned.
        CampaignSpecError: ``only`` matches nothing.
    """
    console = console or make_console()
    executor = executor or LocalExecutor()
    instances = spec.select(only)
    started = time.time()
    with output_root_lock(spec.output_root):
        write_campaign_manifest(spec, spec.instances())
        state = scan(spec.output_root, instances)
        clean_stale(state.stale)
        missing = set(state.missing)
        todo = [i for i in instances if i.id in missing]
        summary = CampaignRunSummary(total=len(instances), already_finished=len(state.finished))
        console.print(f"campaign {spec.name}: {len(instances)} instances, {len(state.finished)} already finished, "
                      f"{len(todo)} to run ({len(state.failed)} failed before, retried) on {executor.describe()}; "
                      f"output root {spec.output_root}", highlight=False)
        if state.stale:
            console.print(f"removed {len(state.stale)} leftover(s) of interrupted instances", highlight=False)
        if not todo:
            summary.wall_seconds = time.time() - started
            return summary
        prepare_platforms(spec, todo)
        tasks = [task_for(instance, spec) for instance in todo]
        columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), TimeRemainingColumn()]
        with Progress(*columns, console=console, disable=not show_progress) as progress:
            bar = progress.add_task(spec.name, total=len(tasks), failed=0)

            def record(outcome: InstanceOutcome) -> None:
                summary.outcomes.append(outcome)
                if outcome.status == "done":
                    summary.done.append(outcome.id)
                    progress.console.print(f"done    {outcome.id} ({outcome.wall_seconds:.1f} s)", highlight=False)
                elif outcome.status == "failed":
                    summary.failed.append(outcome.id)
                    progress.console.print(f"FAILED  {outcome.id}: {outcome.error} "
                                           f"(see {spec.output_root / (outcome.id + FAILED_SUFFIX)})",
                                           highlight=False)
                else:
                    summary.interrupted.append(outcome.id)
                progress.update(bar, advance=1 if outcome.status != "interrupted" else 0,
                                failed=len(summary.failed))
                if on_outcome is not None:
                    on_outcome(outcome)

            try:
                executor.run(tasks, record)
            finally:
                summary.wall_seconds = time.time() - started
    return summary
