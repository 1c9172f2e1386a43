"""Batches: the groups of a session's jobs that the user submitted without waiting for each other.

Source: Zakay and Feitelson, "Preserving user behavior characteristics in trace-based simulation of parallel job
scheduling" (2015), as summarised by Madon, Da Costa, Pierson 2024 (section 3.2, footnote 2, and section 7.5):
within a session, a *batch* is a group of jobs whose executions overlap in the log, and the relation "depends on"
and the think times are defined between batches instead of between sessions.

Rule (one session, jobs in submission order, submission ``a``, recorded finish ``f = a + wait + run``, unknown parts
taken as 0 as in :mod:`batreplay.replay.sessions`): a job joins the current batch when it was submitted before every
job of that batch had finished (``a < max f`` over the batch so far), or at the same time as the batch's first job;
otherwise it opens a new batch. A job submitted while an earlier one of its session was still queued or running did
not wait for its result, which is the overlap the batch stands for; a job submitted once they had all ended may
depend on them. The comparison matches Definition 5 of Madon et al. (a job submitted in the very second the batch
ended depends on it). Batches never cross a session boundary, so each batch belongs to one session.

Batch starts are distinct per user (a new batch starts strictly after the one before), so the batches of a user
make a session graph like sessions do (:func:`batreplay.replay.session_graph.build_session_graphs`: dependencies of
Definition 5 between batches, transitively reduced, and their think times, Definition 6). The replays of
:mod:`batreplay.replay.batch_replay` run on these graphs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from batreplay.replay.protocol import ReplayError
from batreplay.replay.session_graph import SessionGraphs, build_session_graphs
from batreplay.replay.session_source import is_session_directory, parse_session_rule, recorded_jobs
from batreplay.replay.sessions import SessionPartition, offsets_in_session, partition_sessions, session_table


@dataclass(frozen=True, eq=False)
class Batches:
    """The batches of a log's users and their graphs.

    Attributes:
        sessions: the session partition the batches were cut from.
        partition: the batches, as a :class:`~batreplay.replay.sessions.SessionPartition` whose "sessions" are
            batches (``session_id`` is the batch id; ``offset_in_session`` the offset from the batch's first
            submission, s).
        session_of_batch: int64 ``(number of batches,)``: the session id of each batch, by batch id.
        graphs: the users' batch graphs (dependencies and think times between batches, transitively reduced).
    """

    sessions: SessionPartition
    partition: SessionPartition
    session_of_batch: np.ndarray
    graphs: SessionGraphs

    @property
    def label(self) -> str:
        """The session rule's short name (``a60``)."""
        return self.sessions.label


def batch_ids(session_id: np.ndarray, submission: np.ndarray, finish: np.ndarray) -> np.ndarray:
    """The batch of each job (see the module's rule).

    Args:
        session_id, submission, finish: ``(n,)`` arrays, jobs sorted by user then submission order, as in
            :attr:`SessionPartition.jobs`: session ids, and submission and recorded finish times (s).

    Returns:
        int64 ``(n,)``: batch ids ``0, 1, ...`` in job order, a new id at each session boundary.
    """
    batch = np.empty(len(session_id), dtype=np.int64)
    current, reach, first, session = -1, 0.0, 0.0, None
    for position, (sid, submitted, finished) in enumerate(zip(session_id.tolist(), submission.tolist(),
                                                               finish.tolist())):
        if sid != session or (submitted >= reach and submitted > first):
            current, reach, first, session = current + 1, finished, submitted, sid
        else:
            reach = max(reach, finished)
        batch[position] = current
    return batch


def split_batches(sessions: SessionPartition) -> tuple[SessionPartition, np.ndarray]:
    """Cut each session of ``sessions`` into batches.

    Returns:
        ``(batches, session_of_batch)``: the batches as a partition (same method, threshold, anomalies and
        unknown-user policy) and the session id of each batch id.
    """
    jobs = sessions.jobs.copy()
    jobs["recorded_session"] = jobs["session_id"]
    jobs["session_id"] = batch_ids(jobs["session_id"].to_numpy(), jobs["submission_time"].to_numpy(dtype=float),
                                   jobs["finish_time"].to_numpy(dtype=float))
    jobs["offset_in_session"] = offsets_in_session(jobs)
    session_of_batch = jobs.groupby("session_id", sort=True)["recorded_session"].first().to_numpy(dtype=np.int64)
    batches = SessionPartition(method=sessions.method, threshold_minutes=sessions.threshold_minutes,
                               jobs=jobs.drop(columns="recorded_session"), sessions=session_table(jobs),
                               anomalies=dict(sessions.anomalies), unknown_user=sessions.unknown_user)
    return batches, session_of_batch


def batches_for(job_table: pd.DataFrame, sessions: str) -> Batches:
    """The batches of the jobs of ``job_table`` (a converted workload's per-job table, see
    :func:`batreplay.replay.session_source.recorded_jobs`) under the session rule ``sessions``.

    Raises:
        ReplayError: ``sessions`` is a directory of session graphs (batches are cut from the recorded job times, so a
            rule is needed), or a rule that does not parse.
    """
    if is_session_directory(sessions):
        raise ReplayError(f"--sessions {sessions}: a replay by batches cuts its sessions from the log itself; give a "
                          "rule (arrival:60, a60), not a directory of session graphs")
    method, threshold = parse_session_rule(sessions)
    partition = partition_sessions(recorded_jobs(job_table), method, threshold)
    batches, session_of_batch = split_batches(partition)
    return Batches(partition, batches, session_of_batch, build_session_graphs(batches))
