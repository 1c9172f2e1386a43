"""The think-time feedback replay of a converted SWF workload: its users and their job requests.

Glue between a workload (:func:`batreplay.workloads.loading.load_workload`: a Batsim document and its per-job SWF
table) and the user model of Madon, Da Costa, Pierson 2024 (Algorithm 1,
:class:`~batreplay.replay.feedback.ThinkTimeUsers`). The broker around them is built by
:func:`batreplay.replay.registry.replay_decision_process`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from batreplay.replay.feedback import ThinkTimeUsers
from batreplay.replay.protocol import ReplayError
from batreplay.replay.session_source import session_graphs_for

if TYPE_CHECKING:
    from batreplay.replay.registry import ReplaySpec


def job_requests(document: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """What each job of a Batsim workload document asks for, as the broker registers it.

    Returns ``{SWF job number: {"res": nodes, "walltime": s, "profile": {Batsim profile}}}``, in document order.
    """
    profiles = document["profiles"]
    return {int(job["id"]): {"res": job["res"], "walltime": job["walltime"], "profile": profiles[job["profile"]]}
            for job in document["jobs"]}


def check_covered(users: ThinkTimeUsers, requests: Mapping[int, Any], groups: str, hint: str = "") -> None:
    """Every job of the workload (``requests``' keys) belongs to a session (or batch) of ``users``.

    Raises:
        ReplayError: naming how many are not, a few of them, what ``groups`` of jobs missed them and the ``hint``.
    """
    missing = set(requests) - set(users.session_of_job)
    if missing:
        raise ReplayError(f"{groups} do not cover {len(missing)} jobs of the workload (e.g. {sorted(missing)[:5]})"
                          + hint)


def simulation_origin(job_table: pd.DataFrame) -> float:
    """The log's time (s) of simulated time 0: ``swf_submission_time - submission_time`` of the per-job table (0
    for an empty one)."""
    return float((job_table["swf_submission_time"] - job_table["submission_time"]).iloc[0]) if len(job_table) else 0.0


def feedback_users(document: dict, job_table: pd.DataFrame,
                   sessions: str) -> tuple[ThinkTimeUsers, dict[int, dict[str, Any]], str]:
    """The users of a converted SWF workload and what each of their jobs requests.

    Args:
        document: the Batsim workload (``{"nb_res", "jobs", "profiles"}``; job ids are SWF job numbers).
        job_table: its per-job SWF table (``job_id``, ``user_id``, ``submission_time`` (simulation clock) and
            ``swf_submission_time`` (as in the log) in s, ``swf_wait_time``, ``run_time``); simulated time 0 is
            ``swf_submission_time - submission_time``.
        sessions: how to get the session graphs (see :func:`batreplay.replay.session_source.session_graphs_for`).

    Returns:
        ``(users, requests, note)``: a :class:`~batreplay.replay.feedback.ThinkTimeUsers`, the per-job requests the
        broker registers (:func:`job_requests`) and a one-line summary.

    Raises:
        ReplayError: a bad session specification, or session graphs that do not cover the workload's jobs.
    """
    graphs = session_graphs_for(job_table, sessions)
    origin = simulation_origin(job_table)
    job_ids = job_table["job_id"].astype("int64").tolist()
    users = ThinkTimeUsers(graphs, origin=origin, job_ids=job_ids)
    requests = job_requests(document)
    check_covered(users, requests, "session graphs", "; were they computed from another log?")
    note = (f"feedback replay: {len(users.sessions)} sessions ({graphs.label}) for {users.nb_jobs} jobs of "
            f"{len(graphs)} users; {len(users.ignored_jobs)} jobs of the graphs not in the workload")
    return users, requests, note


def build_feedback_users(document: dict, job_table: pd.DataFrame,
                         spec: ReplaySpec) -> tuple[ThinkTimeUsers, dict[int, dict[str, Any]], str]:
    """The ``feedback`` entry of :data:`batreplay.replay.registry.REGISTRY`: :func:`feedback_users` with
    ``spec.sessions``."""
    return feedback_users(document, job_table, spec.sessions)
