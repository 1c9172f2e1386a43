"""The Campaigns page's data: the campaign files of a folder, how far each is, and campaigns run in the background.

A campaign (``expe/*.toml``, see :mod:`batreplay.campaign.spec`) launched from the GUI writes its run
directories under ``<runs dir>/campaigns/<name>/`` (not where its file says: the app writes only under its runs
folder), and its report under ``<runs dir>/campaigns/<name>/report/``. Launching it again resumes it: finished
instances are kept, the others run (:func:`batreplay.campaign.runner.run_campaign`), on this machine or on the Dask
cluster named when the app started (:func:`batreplay.campaign.executors.make_executor`; never an address sent by
the page). Its report is built when the run ends.

A campaign file that cannot be loaded, or that reads a file outside the folders the app may read (any of
:meth:`~batreplay.campaign.spec.CampaignSpec.input_files`: logs, platforms, node types, scheduler files,
speedup tables, the report's files), is listed with its one-line reason and cannot be launched. Those files are
found in the campaign's TOML text and checked before the campaign's reader opens any of them (:func:`named_files`),
and the message is the same whether such a file exists or not.
"""

from __future__ import annotations

import re
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batreplay.campaign.runner import CampaignBusyError, run_campaign, scan
from batreplay.campaign.spec import CampaignSpec, CampaignSpecError, load_campaign
from batreplay.campaign.spec import rooted as rooted_in_campaign
from batreplay.ui.messages import one_line
from batreplay.ui.sandbox import Sandbox, SandboxError

CAMPAIGNS = "campaigns"
#: What a campaign key (a campaign file's name without ``.toml``) may be made of.
KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
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
    """A campaign launched from the app: ``status`` (``idle`` until launched, then ``running``, ``done`` or
    ``failed``) and a one-line message."""

    status: str = IDLE
    message: str = ""
    thread: threading.Thread | None = field(default=None, repr=False)


def _tables(document: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The tables of the array of tables ``key`` (``[[logs]]``...) of a TOML document; those of another shape
    skipped (the campaign's own reader says what is wrong with them)."""
    value = document.get(key)
    return [table for table in value if isinstance(table, dict)] if isinstance(value, list) else []


def named_files(path: Path) -> list[tuple[str, Path]]:
    """Every file the campaign file ``path`` names, as ``(what, path)``, read from its TOML text without opening
    any of them (:func:`~batreplay.campaign.spec.load_campaign` opens them to check them): each log's workload
    (not a catalogue name: its cached file) or site model, platform file (not a shipped name) and node types, the
    schedulers that are files, the speedup tables, and the report's files; relative paths under the campaign's
    ``root``.
    A file that is not valid TOML names none (loading it says why in one line)."""
    from batreplay.platforms.shipped import SHIPPED_PLATFORMS
    from batreplay.schedulers.names import SCHEDULER_NAMES, names_a_file
    from batreplay.workloads.pwa import catalogue_entry

    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    head = document.get("campaign") if isinstance(document.get("campaign"), dict) else {}
    root = path.parent / (head["root"] if isinstance(head.get("root"), str) else ".")

    def rooted(text: str) -> Path:
        """``text`` as the campaign's reader takes it (:func:`batreplay.campaign.spec.rooted`)."""
        return rooted_in_campaign(text, root)

    found: list[tuple[str, Path]] = []
    for number, log in enumerate(_tables(document, "logs"), 1):
        where = f"[[logs]] {log.get('name', f'#{number}')}"
        for key in ("workload", "site_model", "platform", "node_types"):
            text = log.get(key)
            if not isinstance(text, str) or (key == "platform" and text in SHIPPED_PLATFORMS):
                continue
            if key == "workload" and catalogue_entry(text) is not None and not rooted(text).exists():
                continue  # a log of the catalogue: its cached file (the cache is an allowed folder)
            found.append((f"{where}, {key}", rooted(text)))
    matrix = document.get("matrix") if isinstance(document.get("matrix"), dict) else {}
    schedulers = matrix.get("schedulers") if isinstance(matrix.get("schedulers"), list) else []
    found += [("[matrix] schedulers", rooted(name)) for name in schedulers
              if isinstance(name, str) and name not in SCHEDULER_NAMES and names_a_file(name)]
    for number, experiment in enumerate(_tables(document, "experiments"), 1):
        where = f"[[experiments]] {experiment.get('name', f'#{number}')}"
        scheduler = experiment.get("scheduler")
        if isinstance(scheduler, str) and scheduler not in SCHEDULER_NAMES and names_a_file(scheduler):
            found.append((f"{where}, scheduler", rooted(scheduler)))
        own = experiment.get("scheduler_options")
        for key, options in (("speedup_options", experiment.get("speedup_options")),
                             ("scheduler_options speedup_options",
                              own.get("speedup_options") if isinstance(own, dict) else None)):
            if isinstance(options, dict) and isinstance(options.get("table"), str):
                found.append((f"{where}, {key} table", rooted(options["table"])))
    report = document.get("report") if isinstance(document.get("report"), dict) else {}
    found += [(f"[report] {key}", rooted(report[key])) for key in ("published", "explanations")
              if isinstance(report.get(key), str)]
    return found


class Campaigns:
    """The campaign files of ``folder`` (``*.toml``, not recursive) and the campaigns run from the app.

    Args:
        folder: where the campaign files are (None: no campaign).
        sandbox: the folders the app may read and its runs folder.
        dask_address: the Dask scheduler campaigns may run on (given at start, never by the page: a client of a
            Dask scheduler runs what it sends back), or None.
    """

    def __init__(self, folder: Path | None, sandbox: Sandbox, dask_address: str | None = None) -> None:
        self.folder = folder
        self.sandbox = sandbox
        self.dask_address = dask_address
        self.jobs: dict[str, CampaignJob] = {}
        self._lock = threading.Lock()

    @staticmethod
    def check_key(key: object) -> str:
        """``key`` if it can name a campaign file of the folder (a plain file name: no separator, no ``..``).

        Raises:
            SandboxError: anything else (a browser can send any value)."""
        if not isinstance(key, str) or not KEY.fullmatch(key) or ".." in key:
            raise SandboxError(f"campaign: {key!r} is not the name of a campaign file")
        return key

    def output_root(self, key: str) -> Path:
        """Where the GUI runs the campaign ``key``: ``<runs dir>/campaigns/<key>``.

        Raises:
            SandboxError: ``key`` is not a plain name (:meth:`check_key`)."""
        return self.sandbox.runs_dir / CAMPAIGNS / self.check_key(key)

    def load(self, key: str) -> CampaignSpec:
        """The campaign ``key``, its run directories under :meth:`output_root`.

        Raises:
            SandboxError: a key that is not a plain name, no such campaign file, or one that reads a file outside
                the allowed folders (:meth:`CampaignSpec.input_files`; the file named).
            CampaignSpecError: the file does not load (its one-line message).
        """
        if self.folder is None:
            raise SandboxError("no campaign folder was given at start (batreplay ui --campaigns DIR)")
        output_root = self.output_root(key)
        path = self.sandbox.resolve(str(self.folder / f"{key}.toml"), "campaign")
        self._check_inside(path, named_files(path))  # before load_campaign opens any of them
        spec = load_campaign(path, output_root=output_root)
        self._check_inside(path, spec.input_files())  # (the same files, as the campaign's own code finds them)
        return spec

    def _check_inside(self, path: Path, files: list[tuple[str, Path]]) -> None:
        """Raise SandboxError naming the first of ``files`` (``(what, path)`` pairs of the campaign file ``path``)
        that is outside the allowed folders (the same message whether it exists or not)."""
        for what, file in files:
            if not self.sandbox.contains(file):
                raise SandboxError(f"{path.name}: {what} {file} is outside the folders this app may read "
                                   f"({self.sandbox.describe_roots()})")

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
                entry.error = one_line(err)
                entries.append(entry)
                continue
            state = scan(spec.output_root, instances)
            report = self.output_root(path.stem) / REPORT / "report.html"
            entry.name, entry.description = spec.name, spec.description
            entry.total, entry.finished, entry.failed = len(instances), len(state.finished), len(state.failed)
            entry.report = report if report.is_file() else None
            entries.append(entry)
        return entries

    def launch(self, key: str, *, workers: int | None = None, dask: bool = False) -> CampaignJob:
        """Run (or resume) the campaign ``key`` in a background thread, then build its report: on this machine
        with ``workers`` instance processes, or (``dask``) on the Dask scheduler named when the app started.

        Raises:
            SandboxError, CampaignSpecError: as :meth:`load`; ValueError: Dask asked for without a scheduler
                address, or executor options refused (:func:`~batreplay.campaign.executors.make_executor`).
        """
        from batreplay.campaign.executors import make_executor

        spec = self.load(key)  # (a plain name of a campaign file of the folder, checked)
        if dask and not self.dask_address:
            raise ValueError("no Dask scheduler: start the app with --dask-address tcp://HOST:8786")
        chosen = (make_executor("dask", scheduler_address=self.dask_address) if dask
                  else make_executor("local", workers=workers))
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

        from batreplay.reports.report import build_report

        quiet = Console(quiet=True)
        try:
            summary = run_campaign(spec, executor=executor, console=quiet, show_progress=False)
            build_report(spec, self.output_root(key) / REPORT, console=quiet)
        except Exception as err:  # noqa: BLE001 - shown in the page; the job must not stay "running"
            job.status = FAILED
            job.message = one_line(err, kind=not isinstance(err, (CampaignBusyError, CampaignSpecError)))
            return
        job.status = DONE
        job.message = (f"{summary.already_finished + len(summary.done)}/{summary.total} instances finished, "
                       f"{len(summary.failed)} failed, in {summary.wall_seconds:.0f} s; report built")
