"""Where a replay's session graphs come from: a session rule (``arrival:60``, ``a60``) or a directory of graphs.

The session rules are those of :mod:`batreplay.replay.sessions` (Madon, Da Costa, Pierson 2024, section 3.1;
Zakay & Feitelson 2012); the graphs are built or loaded by :mod:`batreplay.replay.session_graph` (section 3.2).
A specification is text, as given to ``--sessions``:

- ``method:minutes``, e.g. ``arrival:60``, ``last:0``, ``max:7.5``;
- a short label, e.g. ``a60``, ``l0``, ``m7.5`` (the paper's naming);
- a directory written by ``batreplay sessions`` (or its ``index.json``); it is read as a directory whenever it
  exists as one, whatever its name.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from batreplay.replay.protocol import ReplayError
from batreplay.replay.session_graph import SessionGraphFormatError, SessionGraphs, build_session_graphs, load_session_graphs
from batreplay.replay.sessions import METHODS, parse_session_spec, partition_sessions

#: What a session specification may be, for error messages.
EXPECTED_SESSIONS = ("expected method:minutes (arrival:60, last:60, max:60), a label such as a60/l60/m60, "
                     "or a directory written by 'batreplay sessions'")
_LABEL = re.compile(r"^\s*[alm]\s*[-+.\d]", re.IGNORECASE)


def is_session_directory(sessions: str) -> bool:
    """True when ``sessions`` names an existing directory or an ``index.json`` file (graphs to load)."""
    folder = Path(sessions)
    return folder.is_dir() or (folder.is_file() and folder.name == "index.json")


def looks_like_rule(sessions: str) -> bool:
    """True when ``sessions`` is meant as a session rule (``method:minutes`` or a label such as ``a60``) rather
    than a directory: it contains ``:`` or starts like a label."""
    return ":" in sessions or _LABEL.match(sessions) is not None


def session_rule(text: str) -> tuple[str, float]:
    """``(method, threshold_minutes)`` of a session rule: ``"arrival:60"`` or ``"a60"`` -> ``("arrival", 60.0)``.

    Raises:
        ValueError: an unknown method, or a threshold that is not a finite number of minutes >= 0 (the message says
            which, without quoting the text).
    """
    if ":" in text:
        method, threshold = text.split(":", 1)
        method = method.strip()
        try:
            minutes = float(threshold)
        except ValueError:
            raise ValueError(f"the threshold {threshold.strip()!r} is not a number of minutes") from None
    else:
        method, minutes = parse_session_spec(text)
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}")
    if not (math.isfinite(minutes) and minutes >= 0):
        raise ValueError(f"the threshold must be a finite number of minutes >= 0, not {minutes!r}")
    return method, minutes


def parse_session_rule(sessions: str) -> tuple[str, float]:
    """:func:`session_rule` of a ``--sessions`` value.

    Raises:
        ReplayError: an empty text, or what :func:`session_rule` refuses (the message quotes ``--sessions``, its
            command-line option, and lists what is expected).
    """
    if not sessions.strip():
        raise ReplayError(f"--sessions is empty: {EXPECTED_SESSIONS}")
    try:
        return session_rule(sessions)
    except ValueError as err:
        raise ReplayError(f"--sessions {sessions!r}: {EXPECTED_SESSIONS} ({err})") from None


def session_graphs_for(job_table: pd.DataFrame, sessions: str) -> SessionGraphs:
    """Session graphs of the jobs of ``job_table`` (a converted workload's per-job table).

    Args:
        job_table: one row per job, with ``job_id``, ``user_id``, ``swf_submission_time`` (s, recorded submission),
            ``swf_wait_time`` (s, recorded wait, -1 unknown) and ``run_time`` (s) (the table of
            :class:`~batreplay.workloads.batsim_workload.BatsimWorkload`).
        sessions: a ``method:threshold`` pair (``arrival:60``), a short label (``a60``, ``l0``, ``m60``) or a
            directory written by ``batreplay sessions`` (see the module docstring).

    Returns:
        The users' session graphs (Madon, Da Costa, Pierson 2024, Definitions 5-6), transitively reduced.

    Raises:
        ReplayError: an empty or unreadable specification, a directory without ``index.json``, or session graphs
            that cannot be read (missing or malformed file, or an edge outside the transitive reduction: the
            message names the file).
    """
    if not sessions.strip():
        raise ReplayError(f"--sessions is empty: {EXPECTED_SESSIONS}")
    folder = Path(sessions)
    if is_session_directory(sessions):
        if folder.is_dir() and not (folder / "index.json").is_file():
            raise ReplayError(f"--sessions {sessions}: the directory has no index.json; expected a directory written "
                              "by 'batreplay sessions' (index.json and one JSON graph per user)")
        try:
            return load_session_graphs(folder)
        except (OSError, SessionGraphFormatError) as err:
            reason = str(err)
            if isinstance(err, OSError) and err.strerror:  # no "[Errno 2]": the reason, and the file if not named
                named = err.filename is None or Path(err.filename).name in err.strerror
                reason = err.strerror if named else f"{err.strerror}: {err.filename}"
            raise ReplayError(f"--sessions {sessions}: {reason}") from err
    method, threshold = parse_session_rule(sessions)
    return build_session_graphs(partition_sessions(recorded_jobs(job_table), method, threshold))


def recorded_jobs(job_table: pd.DataFrame) -> pd.DataFrame:
    """The recorded jobs of a converted workload's per-job table (``job_id``, ``user_id``, ``swf_submission_time``,
    ``swf_wait_time``, ``run_time``, s) as :func:`batreplay.replay.sessions.partition_sessions` reads them
    (``job_id``, ``user_id``, ``submission_time``, ``wait_time``, ``run_time``: the log's times)."""
    return pd.DataFrame({
        "job_id": job_table["job_id"].astype("int64"),
        "user_id": job_table["user_id"],
        "submission_time": job_table["swf_submission_time"],
        "wait_time": job_table["swf_wait_time"],
        "run_time": job_table["run_time"],
    })


def _check_sessions_inputs(workload: Path, method: str, threshold: float, max_jobs: int | None,
                           options: tuple[str, str]) -> None:
    """Refuse, before any reading, what :func:`write_sessions` cannot use, naming the command-line option
    (``options``: those of the method and the threshold) or the file.

    Raises:
        ReplayError: an unknown method, a threshold that is not a finite number of minutes >= 0, ``max_jobs`` below
            1, or a Batsim JSON workload (sessions are cut from the recorded users and times of an SWF log).
    """
    method_option, threshold_option = options
    if method not in METHODS:
        raise ReplayError(f"{method_option} {method!r}: unknown method; expected one of {', '.join(METHODS)}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not (
            math.isfinite(threshold) and threshold >= 0):
        raise ReplayError(f"{threshold_option} {threshold!r}: the threshold must be a finite number of minutes >= 0")
    if max_jobs is not None and max_jobs < 1:
        raise ReplayError(f"--max-jobs must be an integer >= 1, got {max_jobs}")
    if workload.name.lower().endswith(".json"):
        raise ReplayError(f"workload {workload}: sessions need an SWF log (.swf or .swf.gz), with its users and "
                          "recorded times; a Batsim JSON workload has neither")


def write_sessions(workload: str | Path, method: str, threshold: float, out: str | Path,
                   max_jobs: int | None = None, zero_runtime: str = "drop",
                   on_progress: Callable[[str, int, int], None] | None = None,
                   options: tuple[str, str] = ("--method", "--threshold")) -> tuple[Path, Any, list[str]]:
    """The work of ``batreplay sessions``: cut an SWF log into user sessions (``method`` with a ``threshold`` in
    minutes, :mod:`batreplay.replay.sessions`), build the session graphs and save them into the folder ``out``
    (one JSON graph per user and ``index.json``, see :mod:`batreplay.replay.session_graph`), with
    ``statistics_per_user.csv`` and ``statistics.json``.

    ``zero_runtime`` is what becomes of jobs with a recorded run time of 0 s, as in a run (``"drop"`` or ``"min"``,
    see :class:`batreplay.workloads.loading.WorkloadOptions`). ``on_progress(step, done, total)`` is called before each of the ``total`` steps (reading the log, cutting the
    sessions, writing the graphs) and once at the end with ``done == total``.

    Returns:
        ``(index path, statistics, notes)``: the statistics of
        :func:`~batreplay.replay.session_graph.describe_session_graphs` and one line per thing the SWF reading
        counted and per reason the conversion dropped jobs (those are not in any session; the conversion's notes
        about walltimes concern simulations only and are left out).

    ``options`` are the command-line options the method and the threshold came from, named in the messages
    (those of ``batreplay sessions`` by default).

    Raises:
        ReplayError: ``max_jobs`` below 1, an unusable method or threshold, or a JSON workload (all before the log
            is read); SwfFormatError names the file, line and field of a malformed log, or a folder or a file that
            is not a regular one; NoJobsError (a ValueError): no job to cut into sessions (every job dropped, or none).
    """
    from batreplay.atomic import write_text_atomically
    from batreplay.replay.session_graph import describe_session_graphs, save_session_graphs
    from batreplay.workloads.batsim_workload import swf_to_workload
    from batreplay.workloads.swf import read_swf

    workload = Path(workload)
    _check_sessions_inputs(workload, method, threshold, max_jobs, options)
    steps = ("reading the log", "cutting sessions", "writing session graphs")

    def step(done: int) -> None:
        if on_progress is not None:
            on_progress(steps[done] if done < len(steps) else "done", done, len(steps))

    step(0)
    log = read_swf(workload)
    converted = swf_to_workload(log, profile="delay", max_jobs=max_jobs, zero_runtime=zero_runtime)
    step(1)
    graphs = session_graphs_for(converted.job_table, f"{method}:{float(threshold)!r}")
    step(2)
    out = Path(out)
    index = save_session_graphs(graphs, out)
    stats = describe_session_graphs(graphs)
    stats.per_user.to_csv(out / "statistics_per_user.csv")
    write_text_atomically(out / "statistics.json", json.dumps(stats.to_dict(), indent=2, default=float))
    step(3)
    return index, stats, [log.anomalies.summary(), converted.report.summary(sections=("dropped",))]
