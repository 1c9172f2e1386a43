"""The Campaigns page's data: the campaign files of a folder, how far each is, and campaigns run in the background.

A campaign (``expe/*.toml``, see :mod:`batreplay.campaign.spec`) launched from the GUI writes its run
directories under ``<runs dir>/campaigns/<name>/`` (not where its file says: the app writes only under its runs
folder), and its report under ``<runs dir>/campaigns/<name>/report/``. Launching it again resumes it: finished
instances are kept, the others run (:func:`batreplay.campaign.runner.run_campaign`), on this machine or on a Dask
cluster (:func:`batreplay.campaign.executors.make_executor`). Its report is built when the run ends.

A campaign file that cannot be loaded, or whose logs or platform files lie outside the folders the app may
read, is listed with its one-line reason and cannot be launched.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from batreplay.campaign.runner import CampaignBusyError, run_campaign, scan
from batreplay.campaign.spec import CampaignSpec, CampaignSpecError, load_campaign
from batreplay.ui.sandbox import Sandbox, SandboxError

CAMPAIGNS = "campaigns"
REPORT = "report"
IDLE, RUNNING, DONE, FAILED = "idle", "running", "done", "failed"


@dataclass
class CampaignEntry:
    """One campaign file, as the Campaigns page lists it.

    Attributes:
        key: the file's name without ``.toml`` (the page's identifier for it).
        path: the campaign file.
        name, description: from its ``[campaign]`` table ("" when it cannot be loaded).
        total, finished, failed: instance counts, from the files under its output root.
        report: its report page when built, else None.
        error: why it cannot be launched (one line), else "".
    """

    key: str
    path: Path
    name: str = ""
    description: str = ""
    total: int = 0
    finished: int = 0
    failed: int = 0
    report: Path | None = None
    error: str = ""


@dataclass
class CampaignJob:
    """A campaign launched from the app: ``status`` (``running``, ``done``, ``failed``) and a one-line message."""

    status: str = IDLE
    message: str = ""
    thread: threading.Thread | None = field(default=None, repr=False)


class Campaigns:
    """The campaign files of ``folder`` (``*.toml``, not recursive) and the campaigns run from the app.

    Args:
        folder: where the campaign files are (None: no campaign).
        sandbox: the folders the app may read and its runs folder.
    """

    def __init__(self, folder: Path | None, sandbox: Sandbox) -> None:
        self.folder = folder
        self.sandbox = sandbox
        self.jobs: dict[str, CampaignJob] = {}
        self._lock = threading.Lock()

    def output_root(self, key: str) -> Path:
        """Where the GUI runs the campaign ``key``: ``<runs dir>/campaigns/<key>``."""
        return self.sandbox.runs_dir / CAMPAIGNS / key

    def load(self, key: str) -> CampaignSpec:
        """The campaign ``key``, its run directories under :meth:`output_root`.

        Raises:
            SandboxError: no such campaign file, or one whose inputs lie outside the allowed folders.
            CampaignSpecError: the file does not load (its one-line message).
        """
        if self.folder is None:
            raise SandboxError("no campaign folder was given at start (batreplay ui --campaigns DIR)")
        path = self.sandbox.resolve(str(self.folder / f"{key}.toml"), "campaign")
        spec = load_campaign(path, output_root=self.output_root(key))
        for log in spec.logs:
            for what, value in (("workload", log.workload), ("platform", log.platform), ("node_types", log.node_types)):
                if value and (spec.resolve(value).exists() or "/" in str(value)):
                    if not self.sandbox.contains(spec.resolve(value)):
                        raise SandboxError(f"{path.name}: [[logs]] {log.name}, {what} {value} is outside the "
                                           f"folders this app may read ({self.sandbox.describe_roots()})")
        return spec

    def entries(self) -> list[CampaignEntry]:
        """Every campaign file of the folder, sorted by name, with its progress (or why it cannot run)."""
        if self.folder is None or not self.folder.is_dir():
            return []
        entries = []
        for path in sorted(self.folder.glob("*.toml")):
            entry = CampaignEntry(path.stem, path)
            try:
                spec = self.load(path.stem)
                instances = spec.instances()
            except (CampaignSpecError, SandboxError, ValueError, OSError) as err:
                entry.error = str(err).splitlines()[0]
                entries.append(entry)
                continue
            state = scan(spec.output_root, instances)
            report = self.output_root(path.stem) / REPORT / "report.html"
            entry.name, entry.description = spec.name, spec.description
            entry.total, entry.finished, entry.failed = len(instances), len(state.finished), len(state.failed)
            entry.report = report if report.is_file() else None
            entries.append(entry)
        return entries

    def launch(self, key: str, *, executor: str = "local", workers: int | None = None,
               scheduler_address: str | None = None) -> CampaignJob:
        """Run (or resume) the campaign ``key`` in a background thread, then build its report.

        Raises:
            SandboxError, CampaignSpecError: as :meth:`load`; ValueError: executor options refused
                (:func:`~batreplay.campaign.executors.make_executor`).
        """
        from batreplay.campaign.executors import make_executor

        spec = self.load(key)
        chosen = make_executor(executor, workers=workers if executor == "local" else None,
                               scheduler_address=scheduler_address if executor == "dask" else None)
        with self._lock:
            job = self.jobs.get(key)
            if job is not None and job.status == RUNNING:
                return job
            job = self.jobs[key] = CampaignJob(RUNNING, f"running on {chosen.describe()}")
        job.thread = threading.Thread(target=self._run, args=(key, spec, chosen, job), daemon=True,
                                      name=f"campaign {key}")
        job.thread.start()
        return job

    def _run(self, key: str, spec: CampaignSpec, executor, job: CampaignJob) -> None:
        from rich.console import Console

        from batreplay.campaign.report import build_report

        quiet = Console(quiet=True)
        try:
            summary = run_campaign(spec, executor=executor, console=quiet, show_progress=False)
            build_report(spec, self.output_root(key) / REPORT, console=quiet)
        except (CampaignBusyError, CampaignSpecError, ValueError, OSError, RuntimeError) as err:
            job.status, job.message = FAILED, str(err).splitlines()[0] if str(err) else type(err).__name__
            return
        job.status = DONE
        job.message = (f"{summary.already_finished + len(summary.done)}/{summary.total} instances finished, "
                       f"{len(summary.failed)} failed, in {summary.wall_seconds:.0f} s; report built")
