"""Occupancy per node type: how busy each type of node was, as nodes and as job slots.

On a platform of node types (Caspart et al., GridKa: each type has a CPU rate, cores, job slots and instances;
``batreplay platform --node-types``), the question "which nodes did the work" has two answers, given separately:

- *node utilisation*: the time a node computes while at least one job runs on it, over the nodes of the type and
  the span (Batsim's convention for a host, see :func:`batreplay.formats.out_schedule.busy_periods`);
- *slot occupancy*: the job-slot time the jobs held (a job takes one slot on each of its nodes, see
  :mod:`batreplay.schedulers.node_selection`), over the slots of the type and the span. With one slot per node and
  no compute sharing both are equal.

This module imports pandas, numpy, procset and batreplay.formats.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from procset import ProcSet

from batreplay.formats.out_schedule import busy_periods
from batreplay.platforms.model import UNTYPED  # (the node type of hosts without a node_type property)

COLUMNS = ("node_type", "nodes", "slots", "speed", "nb_jobs", "busy_node_seconds", "node_utilisation",
           "used_slot_seconds", "slot_occupancy", "mean_waiting_time")


def _type_counts(ran: pd.DataFrame, type_of: np.ndarray, nb_types: int) -> np.ndarray:
    """How many nodes of each type every job that ran was given: int array of shape (jobs, types), rows in table
    order.

    Raises:
        ValueError: a job ran on a host id beyond ``type_of``.
    """
    per_allocation = {}
    for job_id, text in zip(ran["job_id"] if "job_id" in ran.columns else ran.index,
                            ran["allocated_resources"].astype(str)):
        if text not in per_allocation:
            hosts = np.fromiter(ProcSet.from_str(text), dtype=np.int64)
            if len(hosts) and hosts.max() >= len(type_of):
                raise ValueError(f"job {job_id} ran on resource {int(hosts.max())} but the platform has "
                                 f"{len(type_of)} hosts")
            per_allocation[text] = np.bincount(type_of[hosts], minlength=nb_types)
    rows = [per_allocation[text] for text in ran["allocated_resources"].astype(str)]
    return np.array(rows, dtype=np.int64).reshape(len(ran), nb_types)


def node_type_occupancy(jobs: pd.DataFrame, host_types: list[str], host_slots: list[int],
                        host_speeds: list[float]) -> pd.DataFrame:
    """One row per node type (in order of first host id) over the span ``[first submission, last finish]``.

    Args:
        jobs: a validated jobs table (:func:`batreplay.formats.out_jobs.read_out_jobs`), with
            ``allocated_resources``.
        host_types, host_slots, host_speeds: the node type (:data:`UNTYPED` for none), job slots and flop/s per
            core of each host, by resource id (:class:`batreplay.platforms.model.Platform`'s hosts).

    Returns:
        Columns :data:`COLUMNS`: ``nodes`` and ``slots`` of the type, its ``speed`` (flop/s per core; the first
        host's), ``nb_jobs`` (jobs that ran on at least one of its nodes), ``busy_node_seconds`` and
        ``node_utilisation`` (0-1), ``used_slot_seconds`` and ``slot_occupancy`` (0-1), ``mean_waiting_time`` of
        its jobs (s; NaN without any). Utilisation and occupancy are NaN when the span is empty; occupancy exceeds
        1 when a scheduler put more jobs on a node than its slots (compute sharing without slot accounting).

    Raises:
        ValueError: a job ran on a host id beyond the lists.
    """
    types = list(dict.fromkeys(host_types))
    type_of = np.asarray([types.index(t) for t in host_types], dtype=np.int64)
    ran = jobs[jobs["starting_time"].notna()]
    submissions = jobs["submission_time"].to_numpy(dtype="float64")
    span_start = float(submissions.min()) if len(jobs) else float("nan")
    span_end = float(ran["finish_time"].max()) if len(ran) else float("nan")
    span = span_end - span_start
    counts = _type_counts(ran, type_of, len(types))
    durations = (ran["finish_time"] - ran["starting_time"]).to_numpy(dtype="float64")
    waiting = (ran["starting_time"] - ran["submission_time"]).to_numpy(dtype="float64")
    used = [sum((counts[:, index] * durations).tolist()) for index in range(len(types))]  # in job order
    waits = [waiting[counts[:, index] > 0] for index in range(len(types))]
    busy = np.zeros(len(types))
    if len(ran):
        host, begins, ends = busy_periods(ran)
        np.add.at(busy, type_of[host], ends - begins)
    rows = []
    for index, name in enumerate(types):
        members = np.flatnonzero(type_of == index)
        slots = int(sum(host_slots[m] for m in members))
        rows.append({
            "node_type": name, "nodes": len(members), "slots": slots, "speed": float(host_speeds[members[0]]),
            "nb_jobs": len(waits[index]), "busy_node_seconds": busy[index],
            "node_utilisation": busy[index] / (len(members) * span) if span > 0 else float("nan"),
            "used_slot_seconds": used[index],
            "slot_occupancy": used[index] / (slots * span) if span > 0 else float("nan"),
            "mean_waiting_time": float(np.mean(waits[index])) if len(waits[index]) else float("nan"),
        })
    return pd.DataFrame(rows, columns=list(COLUMNS))


def slot_occupancy_over_time(jobs: pd.DataFrame, host_types: list[str], host_slots: list[int],
                             bin_seconds: float) -> pd.DataFrame:
    """Slot occupancy of each node type over regular bins of ``bin_seconds`` from the first submission: the
    job-slot time held in the bin (one slot per job on each of its nodes) over the type's slots times the bin.

    Returns:
        Columns ``bin_start`` (s), ``node_type`` and ``slot_occupancy`` (0-1, above 1 only when a scheduler put
        more jobs on a node than its slots), one row per bin and type, types in order of first host id.

    Raises:
        ValueError: ``bin_seconds`` not > 0.
    """
    if not bin_seconds > 0:
        raise ValueError(f"bin_seconds must be > 0, got {bin_seconds}")
    types = list(dict.fromkeys(host_types))
    type_of = np.asarray([types.index(t) for t in host_types], dtype=np.int64)
    ran = jobs[jobs["starting_time"].notna()]
    low = float(jobs["submission_time"].min())
    high = float(ran["finish_time"].max()) if len(ran) else low
    edges = low + bin_seconds * np.arange(int(np.ceil((high - low) / bin_seconds)) + 1 if high > low else 2)
    counts = _type_counts(ran, type_of, len(types))
    starts, ends = ran["starting_time"].to_numpy(dtype="float64"), ran["finish_time"].to_numpy(dtype="float64")
    frames = []
    for index, name in enumerate(types):
        slots = sum(host_slots[h] for h in np.flatnonzero(type_of == index))
        times = np.concatenate([starts, ends])
        change = np.concatenate([counts[:, index], -counts[:, index]]).astype("float64")
        order = np.argsort(times, kind="stable")
        times, used = times[order], np.cumsum(change[order])  # slots held from each event on
        area = np.concatenate([[0.0], np.cumsum(used[:-1] * np.diff(times))]) if len(times) else np.zeros(1)
        at_edges = np.interp(edges, times, area) if len(times) else np.zeros(len(edges))  # held time is linear
        frames.append(pd.DataFrame({"bin_start": edges[:-1], "node_type": name,  # between events
                                    "slot_occupancy": np.diff(at_edges) / (slots * bin_seconds)}))
    return pd.concat(frames, ignore_index=True)
