"""Session graphs: per-user weighted DAGs of sessions linked by think times, with JSON export/import and statistics.

Source: Madon, Da Costa, Pierson, "Replay with Feedback", FGCS 155 (2024), section 3.2 and section 4.2.

* Definition 5 (depends on): session ``s'`` depends on session ``s`` when every recorded job of ``s`` finished
  before the first job of ``s'`` was submitted, ``max_{j in s} f_j <= a_first(s')``.  The comparison is *not*
  strict (``<=``): a session submitted in the very second its predecessor's last job ended depends on it.
* Definition 6 (think time): the weight of that dependency, ``a_first(s') - max_{j in s} f_j`` (seconds), >= 0 by
  Definition 5 (the paper's Observation 1).
* Fictive root: sessions without predecessor hang from a root; the weight of that root edge is the recorded start of
  the session, i.e. its first submission time measured from ``time_origin``.  The default ``time_origin`` is 0, the
  origin of SWF time stamps (SWF submission times are seconds since the log's start time), so the root weight is
  the recorded submission time itself, as in the paper.
* Inside a session, each job keeps its offset from the session start (section 4.2: ``a_i - a_n``).

Only *direct* dependencies are kept (the transitive reduction): ``s -> s'`` is dropped when some ``s''`` has
``s -> s'' -> s'``.  This reduction is part of the user model, not a storage detail: it keeps reachability (a
session still waits for all its ancestors), but it changes *when* a session starts.  The feedback replay
(:mod:`batreplay.replay.feedback`) starts a session at the latest, over its incoming edges, of (predecessor's
simulated finish + think time); a redundant edge ``s -> s'`` adds the term ``finish(s) + a(s') - F(s)``, which
is the latest one when the sessions between ``s`` and ``s'`` finish earlier, relative to their recorded finish,
than ``s`` does.  Example (one user, EASY on 4
nodes, a60; jobs as (submission, wait, run) in s): j1 (0, 0, 1000), j2 (1800, 0, 600), j3 (9000, 2000, 3000),
j4 (10000, 0, 500), j5 (15000, 0, 100), j6 (18600, 0, 100) give sessions S0 = {j1, j2} (F = 2400),
S1 = {j3, j4} (a = 9000, F = 14000), S2 = {j5, j6} (a = 15000).  Reduced, S2 hangs from S1 only: S1 finishes at
12000 in the simulation (j3 does not wait), so j5 is submitted at 12000 + 1000 = 13000.  With the Definition 5
edge S0 -> S2 (think time 12600 s) kept, S2 cannot start before 2400 + 12600 = 15000.  The reduced graph is the
model implemented here and the one that reproduces Madon, Da Costa, Pierson 2024; so :func:`load_session_graphs`
refuses a file holding an edge that is not in the reduction (the error names the file, the edge and a session
lying between), rather than replaying another model silently.  Graphs built in memory are not checked.

The reduction shrinks the graph too: on KTH-SP2, 8 816 995 dependency pairs become 82 078 edges at a0, and 964 113
become 13 481 at a60.  It is computed directly rather than with ``networkx.transitive_reduction`` (which needs about
4 minutes for the largest KTH-SP2 user at a0, 2 334 sessions and 2.7 million pairs, against about a millisecond
here; HPC2N at a0 has 862 million pairs reduced to 4.5 million edges in 0.3 s).  For one user the
sessions have distinct start times ``a`` and the relation ``F_i <= a_j`` (``F`` = last finish) is an interval
order, so, with ``A_j`` the latest start among the predecessors of ``j`` and ``k_j`` the session starting then, the
direct predecessors of ``j`` are exactly ``k_j`` and the predecessors whose last finish is after ``A_j``.  One sort
and a few binary searches give every edge (``O(n log n + edges)``); tests compare it with networkx on generated
traces and on real users.

Sessions are ordered by first submission; every dependency goes from an earlier to a strictly later session, so the
graph is acyclic.  Jobs of unknown users partitioned with ``unknown_user="independent"`` (see
:mod:`batreplay.replay.sessions`) get no dependency at all: all their sessions hang from the root.

JSON format (version 1; all times in seconds, floats; ids are integers)
----------------------------------------------------------------------
A graph set is a directory holding ``index.json`` and one file per user.

``index.json``::

    {"format": "batreplay-session-graphs", "version": 1, "time_unit": "s",
     "method": "arrival" | "last" | "max", "threshold_minutes": 60.0, "label": "a60",
     "time_origin": 0.0,                 # root edges weigh first_submit - time_origin
     "unknown_user": "independent" | "as_one_user",
     "anomalies": {"unknown_run_time": 0, ...},   # counts from the partition
     "users": [{"user_id": 3, "file": "user_3.json", "nb_sessions": 12, "nb_jobs": 40,
                "nb_dependencies": 15}, ...]}

``user_<id>.json`` (``user_unknown.json`` for user -1)::

    {"format": "batreplay-user-session-graph", "version": 1, "time_unit": "s",
     "user_id": 3, "time_origin": 0.0, "independent_sessions": false,
     "sessions": [{"session_id": 7, "first_submit": 600000.0, "last_finish": 603600.0,
                   "jobs": [[job_id, offset_from_session_start], ...]}, ...],   # by first_submit
     "dependencies": {"source": [session ids], "target": [session ids],
                      "think_time": [seconds]}}        # parallel arrays, transitive reduction

Roots are not stored: a session with no incoming dependency hangs from the root.  Files are written atomically (a
temporary file in the same directory, then ``os.replace``), the index last, so an index always describes complete
user files; files of an older export that the new index does not list are left in place and ignored.  :func:`load_session_graphs`
checks the format, version, types, that ids are unique and known, that each session's first job has offset 0 and
others >= 0, that ``last_finish >= first_submit``, that starts strictly increase (unless the sessions are
independent), that no edge is a loop or listed twice, that every think time equals Definition 6 (``first_submit[target] - last_finish[source]``,
>= 0) and that every edge belongs to the transitive reduction of Definition 5 (an edge may be left out, none added).
Errors name the file and the field.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from batreplay.atomic import write_text_atomically
from batreplay.replay.sessions import METHODS, UNKNOWN_USER_ID, SessionPartition, session_spec_label

__all__ = [
    "FORMAT_VERSION",
    "ROOT",
    "UserSessionGraph",
    "SessionGraphs",
    "SessionGraphStatistics",
    "direct_dependencies",
    "all_dependencies",
    "count_all_dependencies",
    "build_session_graphs",
    "user_file_name",
    "SessionGraphFormatError",
    "save_session_graphs",
    "load_session_graphs",
    "describe_session_graphs",
]

#: Version of the JSON format written by :func:`save_session_graphs`.
FORMAT_VERSION = 1
#: Node name of the fictive root session in :meth:`UserSessionGraph.to_networkx`.
ROOT = "root"

_INDEX_FORMAT = "batreplay-session-graphs"
_USER_FORMAT = "batreplay-user-session-graph"
_INDEX_NAME = "index.json"
_USER_FILE_PATTERN = re.compile(r"^user_(?:\d+|unknown)\.json$")
_THINK_TIME_TOLERANCE = 1e-6  # seconds, for the Definition 6 check on load


# --------------------------------------------------------------------------------------------------- dependencies


def direct_dependencies(first_submit: np.ndarray, last_finish: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Direct dependencies (transitive reduction of Definition 5) among the sessions of one user.

    Parameters
    ----------
    first_submit, last_finish:
        Float arrays of shape ``(n,)``, seconds: each session's first submission ``a`` and latest recorded finish
        ``F`` (``F >= a``).  The ``a`` must be pairwise distinct (true for any partition made by
        :func:`batreplay.replay.sessions.partition_sessions`, whose session starts strictly increase per user).

    Returns
    -------
    (source, target):
        int64 arrays of shape ``(e,)``, positions in the input arrays: ``target`` depends on ``source``
        (``F[source] <= a[target]``) and no third session lies between them.  Sorted by target, then source.

    Raises
    ------
    ValueError
        Shapes differ, a value is not finite, some ``F < a``, or two sessions start at the same time.
    """
    start, finish = _checked_times(first_submit, last_finish)
    n = len(start)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    order, finish_sorted, nb_predecessors = _predecessor_prefix(start, finish)
    start_sorted = start[order]
    # Latest start among the first p sessions in finish order, and where it is reached.
    prefix_max_start = np.maximum.accumulate(start_sorted)
    reached = np.where(start_sorted == prefix_max_start, np.arange(n), 0)
    prefix_argmax = np.maximum.accumulate(reached)

    targets = np.flatnonzero(nb_predecessors > 0)
    p = nb_predecessors[targets]
    latest_start = prefix_max_start[p - 1]
    latest = order[prefix_argmax[p - 1]]  # k_j, always a direct predecessor
    low = np.searchsorted(finish_sorted, latest_start, side="right")  # predecessors with F > A_j
    counts = np.maximum(p - low, 0)
    total = int(counts.sum())
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    positions = np.arange(total, dtype=np.int64) - offsets + np.repeat(low, counts)
    source = order[positions]
    target = np.repeat(targets, counts)
    # k_j has F >= A_j; it is inside the range above unless F == A_j (a session of zero length).
    missing = finish[latest] == latest_start
    if missing.any():
        source = np.concatenate([source, latest[missing]])
        target = np.concatenate([target, targets[missing]])
    resort = np.lexsort((source, target))
    return source[resort].astype(np.int64), target[resort].astype(np.int64)


def all_dependencies(first_submit: np.ndarray, last_finish: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of Definition 5 (no reduction) among the sessions of one user: ``(source, target)`` positions.

    Same inputs and errors as :func:`direct_dependencies`.  The output has one entry per pair, up to ``n(n-1)/2``:
    use it for small graphs (tests, illustrations); :func:`count_all_dependencies` only counts them.
    """
    start, finish = _checked_times(first_submit, last_finish)
    if len(start) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    order, _, nb_predecessors = _predecessor_prefix(start, finish)
    target = np.repeat(np.arange(len(start)), nb_predecessors)
    offsets = np.repeat(np.cumsum(nb_predecessors) - nb_predecessors, nb_predecessors)
    source = order[np.arange(len(target)) - offsets]
    return source.astype(np.int64), target.astype(np.int64)


def count_all_dependencies(first_submit: np.ndarray, last_finish: np.ndarray) -> int:
    """Number of Definition 5 pairs among the sessions of one user (edges before transitive reduction)."""
    start, finish = _checked_times(first_submit, last_finish)
    if len(start) == 0:
        return 0
    return int(_predecessor_prefix(start, finish)[2].sum())


def _predecessor_prefix(start: np.ndarray, finish: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sessions sorted by (F, a) and, for each session j, how many of them (a prefix) are its predecessors.

    The predecessors of j are the sessions i != j with F_i <= a_j.  In (F, a) order they form a prefix; the only
    session with F_i <= a_j that is not a predecessor is j itself when F_j == a_j, and it is then the last one of
    that prefix (among sessions with F == a_j it has the largest start).
    """
    order = np.lexsort((start, finish))
    finish_sorted = finish[order]
    nb_predecessors = np.searchsorted(finish_sorted, start, side="right") - (finish == start).astype(np.int64)
    return order, finish_sorted, nb_predecessors


def _checked_times(first_submit: Any, last_finish: Any) -> tuple[np.ndarray, np.ndarray]:
    start = np.asarray(first_submit, dtype=float)
    finish = np.asarray(last_finish, dtype=float)
    if start.ndim != 1 or start.shape != finish.shape:
        raise ValueError(f"first_submit and last_finish must be 1-D arrays of one length, not {start.shape} and {finish.shape}")
    if not (np.isfinite(start).all() and np.isfinite(finish).all()):
        raise ValueError("session times must be finite numbers of seconds")
    if (finish < start).any():
        i = int(np.flatnonzero(finish < start)[0])
        raise ValueError(f"session at position {i} finishes ({finish[i]}) before it starts ({start[i]})")
    if len(np.unique(start)) != len(start):
        raise ValueError("two sessions of one user start at the same time; Definition 5 would make them depend on each other")
    return start, finish


# ------------------------------------------------------------------------------------------------------ the graph


@dataclass(frozen=True, eq=False)
class UserSessionGraph:
    """The session graph of one user (Madon et al. 2024, section 3.2): sessions, direct dependencies, think times.

    Sessions are stored in order of first submission (array position ``0..n-1``), jobs in CSR layout.

    Attributes
    ----------
    user_id: the user (-1 = unknown).
    time_origin: s; a root session's think time is ``first_submit - time_origin``.
    session_ids: int64 ``(n,)``, ids of the sessions (those of the :class:`SessionPartition`).
    first_submit: float ``(n,)``, s, recorded first submission of each session (strictly increasing unless
        ``independent_sessions``).
    last_finish: float ``(n,)``, s, latest recorded finish of the jobs of each session.
    job_pointer: int64 ``(n + 1,)``; the jobs of session position ``i`` are ``job_ids[job_pointer[i]:job_pointer[i+1]]``.
    job_ids: int64 ``(m,)``, job ids, per session in submission order.
    job_offsets: float ``(m,)``, s, submission time minus the session's first submission (>= 0; 0 for the first).
    dependency_source, dependency_target: int64 ``(e,)``, session *ids*; the target depends on the source.
    dependency_think_time: float ``(e,)``, s, Definition 6 weight (>= 0).
    independent_sessions: True for unknown-user graphs partitioned with ``unknown_user="independent"`` (no edges).
    """

    user_id: int
    time_origin: float
    session_ids: np.ndarray
    first_submit: np.ndarray
    last_finish: np.ndarray
    job_pointer: np.ndarray
    job_ids: np.ndarray
    job_offsets: np.ndarray
    dependency_source: np.ndarray
    dependency_target: np.ndarray
    dependency_think_time: np.ndarray
    independent_sessions: bool = False

    # --- sizes and lookups
    @property
    def nb_sessions(self) -> int:
        """Number of sessions (nodes, the root excluded)."""
        return len(self.session_ids)

    @property
    def nb_jobs(self) -> int:
        """Number of jobs over all sessions."""
        return len(self.job_ids)

    @property
    def nb_dependencies(self) -> int:
        """Number of edges between sessions (root edges excluded)."""
        return len(self.dependency_source)

    @cached_property
    def _position(self) -> dict[int, int]:
        return {int(sid): i for i, sid in enumerate(self.session_ids)}

    def _positions_of(self, ids: np.ndarray) -> np.ndarray:
        sorter = np.argsort(self.session_ids, kind="stable")
        found = np.searchsorted(self.session_ids, ids, sorter=sorter)
        return sorter[found].astype(np.int64) if len(ids) else np.zeros(0, dtype=np.int64)

    @cached_property
    def _source_position(self) -> np.ndarray:
        return self._positions_of(self.dependency_source)

    @cached_property
    def _target_position(self) -> np.ndarray:
        return self._positions_of(self.dependency_target)

    def position_of(self, session_id: int) -> int:
        """Array position of a session id; KeyError if the user has no such session."""
        return self._position[int(session_id)]

    def jobs_of(self, session_id: int) -> list[tuple[int, float]]:
        """``[(job_id, offset_s), ...]`` of a session, in submission order (offset from the session start)."""
        i = self.position_of(session_id)
        lo, hi = self.job_pointer[i], self.job_pointer[i + 1]
        return [(int(j), float(o)) for j, o in zip(self.job_ids[lo:hi], self.job_offsets[lo:hi])]

    @cached_property
    def _by_source(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self._source_position, kind="stable")
        bounds = np.searchsorted(self._source_position[order], np.arange(self.nb_sessions + 1))
        return order, bounds

    @cached_property
    def _by_target(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self._target_position, kind="stable")
        bounds = np.searchsorted(self._target_position[order], np.arange(self.nb_sessions + 1))
        return order, bounds

    def successors(self, session_id: int) -> list[tuple[int, float]]:
        """``[(session_id, think_time_s), ...]`` of the sessions that directly depend on ``session_id``
        (O(out-degree) after a first call that indexes the edges).  KeyError for an unknown session."""
        i = self.position_of(session_id)
        order, bounds = self._by_source
        edges = order[bounds[i]:bounds[i + 1]]
        return list(zip(self.dependency_target[edges].tolist(), self.dependency_think_time[edges].tolist()))

    def predecessors(self, session_id: int) -> list[tuple[int, float]]:
        """``[(session_id, think_time_s), ...]`` of the sessions ``session_id`` directly depends on
        (O(in-degree) after a first call).  KeyError for an unknown session."""
        i = self.position_of(session_id)
        order, bounds = self._by_target
        edges = order[bounds[i]:bounds[i + 1]]
        return list(zip(self.dependency_source[edges].tolist(), self.dependency_think_time[edges].tolist()))

    def in_degrees(self) -> np.ndarray:
        """int ``(n,)``: number of direct predecessors of each session (root edge not counted)."""
        return np.bincount(self._target_position, minlength=self.nb_sessions)

    def out_degrees(self) -> np.ndarray:
        """int ``(n,)``: number of direct successors of each session."""
        return np.bincount(self._source_position, minlength=self.nb_sessions)

    def root_sessions(self) -> tuple[np.ndarray, np.ndarray]:
        """Sessions hanging from the fictive root: ``(session_ids, think_times_s)`` with think time
        ``first_submit - time_origin`` (Madon et al. 2024, end of section 3.2)."""
        is_root = self.in_degrees() == 0
        return self.session_ids[is_root], self.first_submit[is_root] - self.time_origin

    def longest_path(self) -> int:
        """Number of sessions on the longest dependency chain (root excluded; 0 for an empty graph).

        Dynamic programming over sessions in start order (a topological order, since every dependency goes to a
        strictly later session).
        """
        n = self.nb_sessions
        if n == 0:
            return 0
        length = np.ones(n, dtype=np.int64)
        order, bounds = self._by_target
        sources = self._source_position[order]
        for j in np.argsort(self.first_submit, kind="stable"):
            lo, hi = bounds[j], bounds[j + 1]
            if hi > lo:
                length[j] = 1 + length[sources[lo:hi]].max()
        return int(length.max())

    def count_all_dependencies(self) -> int:
        """Number of Definition 5 pairs (before transitive reduction); 0 for independent sessions."""
        if self.independent_sessions:
            return 0
        return count_all_dependencies(self.first_submit, self.last_finish)

    def to_networkx(self, *, include_root: bool = True) -> nx.DiGraph:
        """The graph as a ``networkx.DiGraph``: nodes are session ids (plus :data:`ROOT`), node attributes
        ``first_submit``, ``last_finish``, ``jobs`` (list of (job_id, offset)); edge attribute ``think_time`` (s)."""
        graph = nx.DiGraph(user_id=self.user_id, time_origin=self.time_origin)
        for i, sid in enumerate(self.session_ids):
            graph.add_node(
                int(sid),
                first_submit=float(self.first_submit[i]),
                last_finish=float(self.last_finish[i]),
                jobs=self.jobs_of(int(sid)),
            )
        graph.add_weighted_edges_from(
            zip(self.dependency_source.tolist(), self.dependency_target.tolist(), self.dependency_think_time.tolist()),
            weight="think_time",
        )
        if include_root:
            graph.add_node(ROOT)
            roots, waits = self.root_sessions()
            graph.add_weighted_edges_from(((ROOT, int(s), float(w)) for s, w in zip(roots, waits)), weight="think_time")
        return graph

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UserSessionGraph):
            return NotImplemented
        return (
            self.user_id == other.user_id
            and self.time_origin == other.time_origin
            and self.independent_sessions == other.independent_sessions
            and all(
                np.array_equal(getattr(self, name), getattr(other, name))
                for name in (
                    "session_ids", "first_submit", "last_finish", "job_pointer", "job_ids", "job_offsets",
                    "dependency_source", "dependency_target", "dependency_think_time",
                )
            )
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=True)
class SessionGraphs(Mapping[int, UserSessionGraph]):
    """The session graphs of all users of a trace, a read-only mapping ``user_id -> UserSessionGraph``.

    Attributes: ``method`` and ``threshold_minutes`` (the session rule), ``time_origin`` (s), ``unknown_user``
    (policy of the partition), ``anomalies`` (counts from the partition), ``graphs`` (dict, by increasing user id).
    """

    method: str
    threshold_minutes: float
    time_origin: float
    unknown_user: str
    graphs: dict[int, UserSessionGraph]
    anomalies: dict[str, int] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Short rule name such as ``"a60"``."""
        return session_spec_label(self.method, self.threshold_minutes)

    def __getitem__(self, user_id: int) -> UserSessionGraph:
        return self.graphs[user_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self.graphs)

    def __len__(self) -> int:
        return len(self.graphs)

    __hash__ = None  # type: ignore[assignment]


def build_session_graphs(partition: SessionPartition, *, time_origin: float = 0.0) -> SessionGraphs:
    """Build every user's session graph from a session partition (Madon et al. 2024, Definitions 5-6, section 3.2).

    Parameters
    ----------
    partition: from :func:`batreplay.replay.sessions.partition_sessions`.
    time_origin: seconds; root edges weigh ``first_submit - time_origin``.  Default 0 = the SWF time origin (the
        log's start time), which makes the root weight the recorded submission time as in the paper.

    Returns
    -------
    SessionGraphs (users in increasing id order).

    Raises
    ------
    ValueError: ``time_origin`` not finite or later than some session start; session times inconsistent (see
        :func:`direct_dependencies`).
    """
    origin = float(time_origin)
    if not math.isfinite(origin):
        raise ValueError(f"time_origin must be a finite number of seconds, not {time_origin!r}")
    sessions = partition.sessions
    if len(sessions) and sessions["first_submit"].min() < origin:
        raise ValueError(
            f"time_origin {origin} s is after the first session start {sessions['first_submit'].min()} s; "
            "root think times would be negative"
        )
    jobs = partition.jobs
    # Both frames are sorted by (user, start): sessions by session id, jobs by (user, submission order).
    session_user = sessions["user_id"].to_numpy()
    session_bounds = _group_bounds(session_user)
    job_user = jobs["user_id"].to_numpy()
    job_bounds = _group_bounds(job_user)
    job_session = jobs["session_id"].to_numpy()
    job_ids = jobs["job_id"].to_numpy().astype(np.int64)
    job_offsets = jobs["offset_in_session"].to_numpy().astype(float)
    session_ids = sessions["session_id"].to_numpy().astype(np.int64)
    first_submit = sessions["first_submit"].to_numpy().astype(float)
    last_finish = sessions["last_finish"].to_numpy().astype(float)

    graphs: dict[int, UserSessionGraph] = {}
    for user, (lo, hi) in session_bounds.items():
        jlo, jhi = job_bounds[user]
        ids = session_ids[lo:hi]
        start, finish = first_submit[lo:hi], last_finish[lo:hi]
        independent = user == UNKNOWN_USER_ID and partition.unknown_user == "independent"
        if independent:
            source = target = np.zeros(0, dtype=np.int64)
        else:
            source, target = direct_dependencies(start, finish)
        user_job_sessions = job_session[jlo:jhi]
        pointer = np.searchsorted(user_job_sessions, ids, side="left")
        pointer = np.append(pointer, len(user_job_sessions)).astype(np.int64)
        graphs[int(user)] = UserSessionGraph(
            user_id=int(user),
            time_origin=origin,
            session_ids=ids.copy(),
            first_submit=start.copy(),
            last_finish=finish.copy(),
            job_pointer=pointer,
            job_ids=job_ids[jlo:jhi].copy(),
            job_offsets=job_offsets[jlo:jhi].copy(),
            dependency_source=ids[source],
            dependency_target=ids[target],
            dependency_think_time=start[target] - finish[source],
            independent_sessions=independent,
        )
    return SessionGraphs(
        method=partition.method,
        threshold_minutes=float(partition.threshold_minutes),
        time_origin=origin,
        unknown_user=partition.unknown_user,
        graphs=dict(sorted(graphs.items())),
        anomalies=dict(partition.anomalies),
    )


def _group_bounds(sorted_keys: np.ndarray) -> dict[int, tuple[int, int]]:
    """``{key: (lo, hi)}`` slices of an array sorted by key."""
    if len(sorted_keys) == 0:
        return {}
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], len(sorted_keys)]
    return {int(sorted_keys[s]): (int(s), int(e)) for s, e in zip(starts, ends)}


# ------------------------------------------------------------------------------------------------------ JSON I/O


def user_file_name(user_id: int) -> str:
    """File name of a user's graph: ``user_<id>.json``, ``user_unknown.json`` for user -1.

    Raises ValueError for any other negative or non-integer id.
    """
    if isinstance(user_id, bool) or not isinstance(user_id, (int, np.integer)):
        raise ValueError(f"user id must be an integer, not {user_id!r}")
    if user_id == UNKNOWN_USER_ID:
        return "user_unknown.json"
    if user_id < 0:
        raise ValueError(f"user id {user_id} is negative (only -1, unknown, is allowed)")
    return f"user_{int(user_id)}.json"


def save_session_graphs(graphs: SessionGraphs, directory: str | os.PathLike[str]) -> Path:
    """Write a graph set as JSON (format in the module docstring): one file per user, then ``index.json``.

    Each file is written atomically (temporary file + ``os.replace``).  Creates ``directory`` if needed and returns
    the path of the index.  Raises OSError on write failure.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for user_id, graph in graphs.items():
        name = user_file_name(user_id)
        _write_json_atomically(folder / name, _user_document(graph))
        entries.append(
            {
                "user_id": int(user_id),
                "file": name,
                "nb_sessions": graph.nb_sessions,
                "nb_jobs": graph.nb_jobs,
                "nb_dependencies": graph.nb_dependencies,
            }
        )
    index = {
        "format": _INDEX_FORMAT,
        "version": FORMAT_VERSION,
        "time_unit": "s",
        "method": graphs.method,
        "threshold_minutes": float(graphs.threshold_minutes),
        "label": graphs.label,
        "time_origin": float(graphs.time_origin),
        "unknown_user": graphs.unknown_user,
        "anomalies": {k: int(v) for k, v in graphs.anomalies.items()},
        "users": entries,
    }
    index_path = folder / _INDEX_NAME
    _write_json_atomically(index_path, index)
    return index_path


def _user_document(graph: UserSessionGraph) -> dict[str, Any]:
    sessions = []
    for i, sid in enumerate(graph.session_ids.tolist()):
        lo, hi = graph.job_pointer[i], graph.job_pointer[i + 1]
        sessions.append(
            {
                "session_id": sid,
                "first_submit": float(graph.first_submit[i]),
                "last_finish": float(graph.last_finish[i]),
                "jobs": [[j, o] for j, o in zip(graph.job_ids[lo:hi].tolist(), graph.job_offsets[lo:hi].astype(float).tolist())],
            }
        )
    return {
        "format": _USER_FORMAT,
        "version": FORMAT_VERSION,
        "time_unit": "s",
        "user_id": int(graph.user_id),
        "time_origin": float(graph.time_origin),
        "independent_sessions": bool(graph.independent_sessions),
        "sessions": sessions,
        "dependencies": {
            "source": graph.dependency_source.tolist(),
            "target": graph.dependency_target.tolist(),
            "think_time": graph.dependency_think_time.astype(float).tolist(),
        },
    }


def _write_json_atomically(path: Path, document: dict[str, Any]) -> None:
    write_text_atomically(path, json.dumps(document, separators=(",", ":"), allow_nan=False) + "\n")


class SessionGraphFormatError(ValueError):
    """A session-graph JSON file does not follow the format (the message names the file and the field)."""


def load_session_graphs(directory: str | os.PathLike[str]) -> SessionGraphs:
    """Read a graph set written by :func:`save_session_graphs` and check it (checks in the module docstring).

    ``directory`` may also be the path of ``index.json`` itself.

    Raises
    ------
    FileNotFoundError: no index, or a user file it lists is missing.
    SessionGraphFormatError (a ValueError): the content breaks the format; the message names file and field.
    """
    path = Path(directory)
    index_path = path if path.is_file() else path / _INDEX_NAME
    folder = index_path.parent
    index = _read_json(index_path)
    where = index_path.name
    _expect(index, "format", str, where, equals=_INDEX_FORMAT)
    _expect(index, "version", int, where, equals=FORMAT_VERSION)
    _expect(index, "time_unit", str, where, equals="s")
    method = _expect(index, "method", str, where)
    if method not in METHODS:
        raise SessionGraphFormatError(f"{where}: field method: {method!r} is not one of {', '.join(METHODS)}")
    threshold = _number(_expect(index, "threshold_minutes", (int, float), where), where, "threshold_minutes")
    if threshold < 0:
        raise SessionGraphFormatError(f"{where}: field threshold_minutes: negative ({threshold})")
    origin = _number(_expect(index, "time_origin", (int, float), where), where, "time_origin")
    unknown_user = _expect(index, "unknown_user", str, where)
    if unknown_user not in ("independent", "as_one_user"):
        raise SessionGraphFormatError(f"{where}: field unknown_user: {unknown_user!r} is not 'independent' or 'as_one_user'")
    anomalies = _expect(index, "anomalies", dict, where)
    for key, value in anomalies.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise SessionGraphFormatError(f"{where}: field anomalies.{key}: not a count ({value!r})")
    users = _expect(index, "users", list, where)

    graphs: dict[int, UserSessionGraph] = {}
    seen_sessions: set[int] = set()
    seen_jobs: set[int] = set()
    for n, entry in enumerate(users):
        field_name = f"users[{n}]"
        if not isinstance(entry, dict):
            raise SessionGraphFormatError(f"{where}: field {field_name}: not an object")
        user_id = _integer(_expect(entry, "user_id", int, where, prefix=field_name), where, f"{field_name}.user_id")
        name = _expect(entry, "file", str, where, prefix=field_name)
        if not _USER_FILE_PATTERN.match(name) or name != user_file_name(user_id):
            raise SessionGraphFormatError(f"{where}: field {field_name}.file: {name!r} is not the file name of user {user_id}")
        if user_id in graphs:
            raise SessionGraphFormatError(f"{where}: field {field_name}.user_id: user {user_id} listed twice")
        graph = _read_user_graph(folder / name, user_id, origin, unknown_user)
        for key, actual in (("nb_sessions", graph.nb_sessions), ("nb_jobs", graph.nb_jobs), ("nb_dependencies", graph.nb_dependencies)):
            stated = _expect(entry, key, int, where, prefix=field_name)
            if stated != actual:
                raise SessionGraphFormatError(f"{where}: field {field_name}.{key}: says {stated}, {name} holds {actual}")
        overlap = seen_sessions.intersection(graph.session_ids.tolist())
        if overlap:
            raise SessionGraphFormatError(f"{name}: field sessions: session id {min(overlap)} also belongs to another user")
        overlap = seen_jobs.intersection(graph.job_ids.tolist())
        if overlap:
            raise SessionGraphFormatError(f"{name}: field sessions.jobs: job {min(overlap)} also belongs to another user")
        seen_sessions.update(graph.session_ids.tolist())
        seen_jobs.update(graph.job_ids.tolist())
        graphs[user_id] = graph
    return SessionGraphs(
        method=method,
        threshold_minutes=float(threshold),
        time_origin=float(origin),
        unknown_user=unknown_user,
        graphs=dict(sorted(graphs.items())),
        anomalies={k: int(v) for k, v in anomalies.items()},
    )


def _read_user_graph(path: Path, user_id: int, origin: float, unknown_user: str) -> UserSessionGraph:
    """One user's file, checked on its own and against the index (``user_id``, ``origin``, ``unknown_user``)."""
    doc = _read_json(path)
    where = path.name
    independent = _read_user_header(doc, where, user_id, origin, unknown_user)
    ids, starts, finishes, pointer, job_ids, offsets = _read_sessions(doc, where, origin)
    start_array = np.asarray(starts, dtype=float)
    _check_session_order(where, start_array, independent)
    finish_array = np.asarray(finishes, dtype=float)
    source, target, think = _read_dependencies(doc, where, np.asarray(ids, dtype=np.int64), start_array,
                                               finish_array, independent)
    return UserSessionGraph(
        user_id=user_id,
        time_origin=origin,
        session_ids=np.asarray(ids, dtype=np.int64),
        first_submit=start_array,
        last_finish=finish_array,
        job_pointer=np.asarray(pointer, dtype=np.int64),
        job_ids=np.asarray(job_ids, dtype=np.int64),
        job_offsets=np.asarray(offsets, dtype=float),
        dependency_source=source,
        dependency_target=target,
        dependency_think_time=think,
        independent_sessions=independent,
    )


def _read_user_header(doc: dict, where: str, user_id: int, origin: float, unknown_user: str) -> bool:
    """Check a user file's format, version, unit, user and time origin against the index; returns its
    ``independent_sessions`` flag (allowed for the unknown user under the policy ``independent`` only)."""
    _expect(doc, "format", str, where, equals=_USER_FORMAT)
    _expect(doc, "version", int, where, equals=FORMAT_VERSION)
    _expect(doc, "time_unit", str, where, equals="s")
    if _expect(doc, "user_id", int, where) != user_id:
        raise SessionGraphFormatError(f"{where}: field user_id: {doc['user_id']} but the index says {user_id}")
    if _number(_expect(doc, "time_origin", (int, float), where), where, "time_origin") != origin:
        raise SessionGraphFormatError(f"{where}: field time_origin: {doc['time_origin']} differs from the index ({origin})")
    independent = _expect(doc, "independent_sessions", bool, where)
    if independent and not (user_id == UNKNOWN_USER_ID and unknown_user == "independent"):
        raise SessionGraphFormatError(f"{where}: field independent_sessions: only the unknown user (-1) with policy 'independent' may have independent sessions")
    return independent


def _read_sessions(doc: dict, where: str, origin: float) -> tuple[list, list, list, list, list, list]:
    """The ``sessions`` of a user file, in file order: session ids, first submissions, last finishes, job pointer
    (session ``n`` holds jobs ``pointer[n]:pointer[n + 1]``), job ids and job offsets; ids are checked unique."""
    sessions = _expect(doc, "sessions", list, where)
    ids, starts, finishes, pointer, job_ids, offsets = [], [], [], [0], [], []
    for n, session in enumerate(sessions):
        field_name = f"sessions[{n}]"
        if not isinstance(session, dict):
            raise SessionGraphFormatError(f"{where}: field {field_name}: not an object")
        ids.append(_integer(_expect(session, "session_id", int, where, prefix=field_name), where, f"{field_name}.session_id"))
        start = _number(_expect(session, "first_submit", (int, float), where, prefix=field_name), where, f"{field_name}.first_submit")
        finish = _number(_expect(session, "last_finish", (int, float), where, prefix=field_name), where, f"{field_name}.last_finish")
        if finish < start:
            raise SessionGraphFormatError(f"{where}: field {field_name}.last_finish: {finish} is before first_submit {start}")
        if start < origin:
            raise SessionGraphFormatError(f"{where}: field {field_name}.first_submit: {start} is before time_origin {origin}")
        jobs = _expect(session, "jobs", list, where, prefix=field_name)
        _read_session_jobs(jobs, where, field_name, job_ids, offsets)
        starts.append(start)
        finishes.append(finish)
        pointer.append(len(job_ids))
    if len(set(ids)) != len(ids):
        raise SessionGraphFormatError(f"{where}: field sessions: duplicated session_id")
    if len(set(job_ids)) != len(job_ids):
        raise SessionGraphFormatError(f"{where}: field sessions.jobs: a job id appears twice")
    return ids, starts, finishes, pointer, job_ids, offsets


def _read_session_jobs(jobs: list, where: str, field_name: str, job_ids: list, offsets: list) -> None:
    """Append the ``[job_id, offset]`` pairs of one session (``field_name``) to ``job_ids`` and ``offsets``: at
    least one job, the first at offset 0, the others at offsets >= 0."""
    if not jobs:
        raise SessionGraphFormatError(f"{where}: field {field_name}.jobs: a session has at least one job")
    for k, job in enumerate(jobs):
        job_field = f"{field_name}.jobs[{k}]"
        if not (isinstance(job, list) and len(job) == 2):
            raise SessionGraphFormatError(f"{where}: field {job_field}: expected [job_id, offset]")
        job_ids.append(_integer(job[0], where, f"{job_field}[0]"))
        offset = _number(job[1], where, f"{job_field}[1]")
        if offset < 0 or (k == 0 and offset != 0):
            raise SessionGraphFormatError(f"{where}: field {job_field}[1]: offset {offset} (the first job has offset 0, the others >= 0)")
        offsets.append(offset)


def _check_session_order(where: str, start_array: np.ndarray, independent: bool) -> None:
    """Sessions are listed by increasing first submission: strictly, unless they are independent."""
    if len(start_array) > 1:
        steps = np.diff(start_array)
        bad = steps < 0 if independent else steps <= 0
        if bad.any():
            n = int(np.flatnonzero(bad)[0]) + 1
            raise SessionGraphFormatError(f"{where}: field sessions[{n}].first_submit: sessions must be listed by strictly increasing first_submit")


def _read_dependencies(doc: dict, where: str, id_array: np.ndarray, start_array: np.ndarray,
                       finish_array: np.ndarray, independent: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``dependencies`` of a user file (``source``, ``target``, ``think_time``), checked against its sessions:
    known, distinct sessions, no edge twice, Definition 6's think times and the transitive reduction."""
    deps = _expect(doc, "dependencies", dict, where)
    source = _integer_array(_expect(deps, "source", list, where, prefix="dependencies"), where, "dependencies.source")
    target = _integer_array(_expect(deps, "target", list, where, prefix="dependencies"), where, "dependencies.target")
    think = _number_array(_expect(deps, "think_time", list, where, prefix="dependencies"), where, "dependencies.think_time")
    if not len(source) == len(target) == len(think):
        raise SessionGraphFormatError(f"{where}: field dependencies: source, target and think_time differ in length")
    if independent and len(source):
        raise SessionGraphFormatError(f"{where}: field dependencies: independent sessions have no dependency")
    positions = _session_positions(where, id_array, source, target)
    loops = positions["source"] == positions["target"]
    if loops.any():
        k = int(np.flatnonzero(loops)[0])
        raise SessionGraphFormatError(f"{where}: field dependencies.target[{k}]: session {target[k]} depends on itself")
    if len(source):
        pair_codes = positions["source"] * len(id_array) + positions["target"]
        unique_codes, first_index, counts = np.unique(pair_codes, return_index=True, return_counts=True)
        if (counts > 1).any():
            k = int(np.sort(np.setdiff1d(np.arange(len(source)), first_index))[0])
            raise SessionGraphFormatError(f"{where}: field dependencies[{k}]: edge {source[k]} -> {target[k]} listed twice")
    expected = start_array[positions["target"]] - finish_array[positions["source"]] if len(source) else np.zeros(0)
    wrong = (think < 0) | (expected < 0) | (np.abs(think - expected) > _THINK_TIME_TOLERANCE)
    if wrong.any():
        k = int(np.flatnonzero(wrong)[0])
        raise SessionGraphFormatError(
            f"{where}: field dependencies.think_time[{k}]: {think[k]} s for {source[k]} -> {target[k]}, but "
            f"Definition 6 gives first_submit(target) - last_finish(source) = {expected[k]} s (must be >= 0)"
        )
    if len(source):
        _check_reduced(where, id_array, start_array, finish_array, positions["source"], positions["target"])
    return source, target, think


def _session_positions(where: str, id_array: np.ndarray, source: np.ndarray, target: np.ndarray) -> dict:
    """The positions in ``id_array`` of the sessions each edge names (``{"source": ..., "target": ...}``);
    refuses an edge naming an unknown session."""
    sorter = np.argsort(id_array, kind="stable")
    positions = {}
    for key, values in (("source", source), ("target", target)):
        found = np.searchsorted(id_array, values, sorter=sorter).clip(max=max(len(id_array) - 1, 0))
        known = (id_array[sorter[found]] == values) if len(id_array) else np.zeros(len(values), dtype=bool)
        if not known.all():
            k = int(np.flatnonzero(~known)[0])
            raise SessionGraphFormatError(f"{where}: field dependencies.{key}[{k}]: unknown session {values[k]}")
        positions[key] = sorter[found]
    return positions


def _check_reduced(where: str, ids: np.ndarray, start: np.ndarray, finish: np.ndarray, source: np.ndarray,
                   target: np.ndarray) -> None:
    """Refuse an edge (array positions ``source[k] -> target[k]``) that is not in the transitive reduction of
    Definition 5 for these sessions: it would change when the target starts (module docstring)."""
    direct_source, direct_target = direct_dependencies(start, finish)
    n = len(ids)
    redundant = ~np.isin(source * n + target, direct_source * n + direct_target)
    if not redundant.any():
        return
    k = int(np.flatnonzero(redundant)[0])
    u, v = int(source[k]), int(target[k])
    between = (start >= finish[u]) & (finish <= start[v])
    between[[u, v]] = False
    w = int(ids[np.flatnonzero(between)[0]])
    raise SessionGraphFormatError(
        f"{where}: field dependencies[{k}]: edge {ids[u]} -> {ids[v]} is redundant (session {w} starts after "
        f"{ids[u]} ends and ends before {ids[v]} starts); session graphs hold the transitive reduction of Definition 5, "
        "and an extra edge would change when the session starts (see batreplay.replay.session_graph)"
    )


def _integer_array(values: list[Any], where: str, name: str) -> np.ndarray:
    if not all(type(v) is int for v in values):
        k = next(k for k, v in enumerate(values) if type(v) is not int)
        raise SessionGraphFormatError(f"{where}: field {name}[{k}]: expected an integer, found {values[k]!r}")
    return np.asarray(values, dtype=np.int64)


def _number_array(values: list[Any], where: str, name: str) -> np.ndarray:
    if not all(type(v) is float or type(v) is int for v in values):
        k = next(k for k, v in enumerate(values) if not (type(v) is float or type(v) is int))
        raise SessionGraphFormatError(f"{where}: field {name}[{k}]: expected a number, found {values[k]!r}")
    array = np.asarray(values, dtype=float)
    if not np.isfinite(array).all():
        k = int(np.flatnonzero(~np.isfinite(array))[0])
        raise SessionGraphFormatError(f"{where}: field {name}[{k}]: expected a finite number, found {values[k]!r}")
    return array


def _read_json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError as error:
        what = "no index.json" if path.name == _INDEX_NAME else f"{path.name}, listed in index.json, does not exist"
        raise FileNotFoundError(error.errno, f"{path.parent}: {what} (expected a directory written by "
                                "'batreplay sessions')", str(path)) from None
    except json.JSONDecodeError as error:
        raise SessionGraphFormatError(f"{path.name}: line {error.lineno}: not valid JSON ({error.msg})") from error
    except UnicodeDecodeError as error:
        raise SessionGraphFormatError(f"{path.name}: not UTF-8 text ({error.reason})") from None
    except RecursionError:
        raise SessionGraphFormatError(f"{path.name}: JSON nested too deeply to be a session graph") from None


def _expect(doc: Any, key: str, kind: Any, where: str, *, equals: Any = None, prefix: str = "") -> Any:
    name = f"{prefix}.{key}" if prefix else key
    if not isinstance(doc, dict) or key not in doc:
        raise SessionGraphFormatError(f"{where}: field {name}: missing")
    value = doc[key]
    if isinstance(value, bool) and kind is not bool:
        raise SessionGraphFormatError(f"{where}: field {name}: expected {_kind_name(kind)}, found a boolean")
    if not isinstance(value, kind):
        raise SessionGraphFormatError(f"{where}: field {name}: expected {_kind_name(kind)}, found {type(value).__name__}")
    if equals is not None and value != equals:
        raise SessionGraphFormatError(f"{where}: field {name}: expected {equals!r}, found {value!r}")
    return value


def _kind_name(kind: Any) -> str:
    if isinstance(kind, tuple):
        return " or ".join(k.__name__ for k in kind)
    return kind.__name__


def _integer(value: Any, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SessionGraphFormatError(f"{where}: field {name}: expected an integer, found {value!r}")
    return value


def _number(value: Any, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SessionGraphFormatError(f"{where}: field {name}: expected a finite number, found {value!r}")
    return float(value)


# ---------------------------------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class SessionGraphStatistics:
    """Structure of a set of session graphs (Madon et al. 2024, section 7.2 and Fig. 6).

    Attributes
    ----------
    label: session rule, e.g. ``"a60"``.
    per_user: DataFrame indexed by ``user_id`` with ``nb_jobs``, ``nb_sessions``, ``nb_dependencies`` (edges
        after reduction), ``nb_dependencies_unreduced`` (Definition 5 pairs), ``nb_root_sessions`` (sessions
        hanging from the fictive root), ``longest_path`` (sessions on the longest chain, root excluded),
        ``max_in_degree``, ``max_out_degree`` and ``arity`` (the larger of the two; root edges excluded).
    degree_distribution: DataFrame indexed by ``degree`` (0, 1, ...) with ``in_degree`` and ``out_degree``: the
        number of sessions (all users) having that many direct predecessors / successors (root excluded).
    think_times: float array, seconds, the think time of every dependency (root edges excluded).
    think_time_summary: Series: ``count``, ``min``, ``p10``, ``p25``, ``median``, ``p75``, ``p90``, ``max`` (s)
        and ``share_below_1h``, ``share_below_10h`` (fractions of the dependencies; the paper quotes these two).
    anomalies: counts carried from the partition.
    """

    label: str
    per_user: pd.DataFrame
    degree_distribution: pd.DataFrame
    think_times: np.ndarray
    think_time_summary: pd.Series
    anomalies: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (for JSON): totals, per-user quantiles, think-time summary, degree distribution."""
        per_user = self.per_user
        def quantiles(column: str) -> dict[str, float]:
            values = per_user[column]
            if values.empty:
                return {}
            return {f"p{q}": float(values.quantile(q / 100)) for q in (10, 50, 90)} | {"max": float(values.max())}
        return {
            "label": self.label,
            "nb_users": int(len(per_user)),
            "nb_jobs": int(per_user["nb_jobs"].sum()),
            "nb_sessions": int(per_user["nb_sessions"].sum()),
            "nb_dependencies": int(per_user["nb_dependencies"].sum()),
            "nb_dependencies_unreduced": int(per_user["nb_dependencies_unreduced"].sum()),
            "sessions_per_user": quantiles("nb_sessions"),
            "longest_path": quantiles("longest_path"),
            "arity": quantiles("arity"),
            "think_time_s": {k: float(v) for k, v in self.think_time_summary.items()},
            "degree_distribution": {
                column: {int(d): int(c) for d, c in self.degree_distribution[column].items() if c}
                for column in ("in_degree", "out_degree")
            },
            "anomalies": dict(self.anomalies),
        }

    def summary(self) -> str:
        """A few lines of text for the command line."""
        d = self.to_dict()
        tt = d["think_time_s"]
        lines = [
            f"session rule {d['label']}: {d['nb_users']} users, {d['nb_jobs']} jobs, {d['nb_sessions']} sessions",
            f"dependencies: {d['nb_dependencies']} direct ({d['nb_dependencies_unreduced']} before transitive reduction)",
        ]
        for key, title in (("sessions_per_user", "sessions per user"), ("longest_path", "longest path (sessions)"), ("arity", "arity (max in/out degree)")):
            q = d[key]
            if q:
                lines.append(f"{title}: median {q['p50']:g}, p90 {q['p90']:g}, max {q['max']:g}")
        if tt.get("count", 0):
            lines.append(
                f"think time: median {_hours(tt['median'])}, p10 {_hours(tt['p10'])}, p90 {_hours(tt['p90'])}; "
                f"{100 * tt['share_below_1h']:.1f}% < 1 h, {100 * tt['share_below_10h']:.1f}% < 10 h"
            )
        else:
            lines.append("think time: no dependency")
        noted = {k: v for k, v in d["anomalies"].items() if v}
        if noted:
            lines.append("anomalies: " + ", ".join(f"{k} {v}" for k, v in sorted(noted.items())))
        return "\n".join(lines)


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f} h"


def describe_session_graphs(graphs: SessionGraphs) -> SessionGraphStatistics:
    """Statistics of a graph set: sessions per user, longest path, arity and degree distributions, think times
    (Madon et al. 2024, section 7.2, Fig. 6).  See :class:`SessionGraphStatistics` for the fields."""
    rows = []
    in_counts: list[np.ndarray] = []
    out_counts: list[np.ndarray] = []
    think_times = []
    for user_id, graph in graphs.items():
        ins, outs = graph.in_degrees(), graph.out_degrees()
        max_in = int(ins.max()) if len(ins) else 0
        max_out = int(outs.max()) if len(outs) else 0
        rows.append(
            {
                "user_id": user_id,
                "nb_jobs": graph.nb_jobs,
                "nb_sessions": graph.nb_sessions,
                "nb_dependencies": graph.nb_dependencies,
                "nb_dependencies_unreduced": graph.count_all_dependencies(),
                "nb_root_sessions": int((ins == 0).sum()),
                "longest_path": graph.longest_path(),
                "max_in_degree": max_in,
                "max_out_degree": max_out,
                "arity": max(max_in, max_out),
            }
        )
        in_counts.append(np.bincount(ins))
        out_counts.append(np.bincount(outs))
        think_times.append(graph.dependency_think_time)
    columns = ["nb_jobs", "nb_sessions", "nb_dependencies", "nb_dependencies_unreduced", "nb_root_sessions",
               "longest_path", "max_in_degree", "max_out_degree", "arity"]
    per_user = pd.DataFrame(rows, columns=["user_id", *columns]).set_index("user_id")
    width = max([len(c) for c in in_counts + out_counts], default=0)
    degree = pd.DataFrame(
        {
            "in_degree": sum((np.pad(c, (0, width - len(c))) for c in in_counts), np.zeros(width, dtype=np.int64)),
            "out_degree": sum((np.pad(c, (0, width - len(c))) for c in out_counts), np.zeros(width, dtype=np.int64)),
        },
        index=pd.RangeIndex(width, name="degree"),
    )
    all_think = np.concatenate(think_times) if think_times else np.zeros(0)
    return SessionGraphStatistics(
        label=graphs.label,
        per_user=per_user,
        degree_distribution=degree,
        think_times=all_think,
        think_time_summary=_think_time_summary(all_think),
        anomalies=dict(graphs.anomalies),
    )


def _think_time_summary(values: np.ndarray) -> pd.Series:
    if len(values) == 0:
        return pd.Series({"count": 0.0})
    q = np.quantile(values, [0.1, 0.25, 0.5, 0.75, 0.9])
    return pd.Series(
        {
            "count": float(len(values)),
            "min": float(values.min()),
            "p10": q[0], "p25": q[1], "median": q[2], "p75": q[3], "p90": q[4],
            "max": float(values.max()),
            "share_below_1h": float((values < 3600).mean()),
            "share_below_10h": float((values < 36000).mean()),
        }
    )
