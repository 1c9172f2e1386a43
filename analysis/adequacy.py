"""Adequacy measure of a job-management-system model (Baranov et al. 2018, Sect. VII, eq. 2).

Two streams of the same jobs are compared: ``j`` (for instance the recorded log) and ``J`` (a model run).
Job ``i`` has a submission time ``r_i``, requested resources ``p_i``, a requested (ordered) processing time
``e_i``, a launch time ``s_i`` chosen by the scheduler and a real processing time ``w_i``; its residence
time is ``v_i = s_i - r_i + w_i`` (waiting time ``q_i = s_i - r_i`` plus processing time). The measure is

    P = sqrt( sum_i (V_i - v_i)^2 / n )                                   (Baranov et al. 2018, eq. 2)

with jobs numbered in the order they enter the system. It is defined only when both streams have the
same number of jobs and, job by job, the same ``r_i``, ``p_i`` and ``e_i``; otherwise the comparison is
refused (:class:`StreamMismatchError`). Baranov et al. 2018's Table I reports P and the number of jobs whose waiting
time differs on the first k = 50, 100, 250, 500, 750, 1000 jobs (:func:`adequacy_table`).

A stream here is a DataFrame with columns ``job_id`` (str), ``submission_time`` (r, s), ``requested_resources``
(p, nodes or processors), ``requested_time`` (e, s), ``start_time`` (s, s) and ``processing_time`` (w, s),
sorted in submission order (ties: by job id, numerically when ids are numbers). Build one with
:func:`stream_from_out_jobs` or :func:`stream_from_swf`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from batreplay.analysis.metric import Metric
from batreplay.formats.out_jobs import FULL_ID, REJECTED

STREAM_COLUMNS: tuple[str, ...] = (
    "job_id", "submission_time", "requested_resources", "requested_time", "start_time", "processing_time")
#: Prefix sizes of Baranov et al. 2018's Table I.
TABLE_I_PREFIXES: tuple[int, ...] = (50, 100, 250, 500, 750, 1000)
#: Default slack for time equality, seconds (Batsim writes times rounded to 1e-6 s).
DEFAULT_TIME_TOLERANCE = 1e-6


class StreamMismatchError(ValueError):
    """Two job streams cannot be compared (Baranov et al. 2018, Sect. VII); the message names the first
    differing job."""


def _submission_order(stream: pd.DataFrame) -> pd.DataFrame:
    """Sort by submission time; ties by workload prefix then id (numerically when all tied ids are numbers)."""
    submission = stream["submission_time"].to_numpy(dtype="float64")
    tied = pd.Series(submission).duplicated(keep=False).to_numpy()
    if not tied.any():
        return stream.iloc[np.argsort(submission, kind="stable")].reset_index(drop=True)
    parts = stream["job_id"][tied].str.rpartition("!")
    number = pd.to_numeric(parts[2], errors="coerce")
    head = np.full(len(stream), "", dtype=object)
    head[tied] = parts[0].to_numpy(dtype=object)
    if number.notna().all():
        rank = np.zeros(len(stream))
        rank[tied] = number.to_numpy(dtype="float64")
    else:
        rank = np.full(len(stream), "", dtype=object)
        rank[tied] = parts[2].to_numpy(dtype=object)
    keys = pd.DataFrame({"t": submission, "h": head, "n": rank})
    order = keys.sort_values(["t", "h", "n"], kind="stable").index.to_numpy()
    return stream.iloc[order].reset_index(drop=True)


def _make_stream(job_id, submission, resources, requested, start, processing) -> pd.DataFrame:
    stream = pd.DataFrame({
        "job_id": pd.Series(job_id).astype(str).to_numpy(),
        "submission_time": np.asarray(submission, dtype="float64"),
        "requested_resources": np.asarray(resources, dtype="float64"),
        "requested_time": np.asarray(requested, dtype="float64"),
        "start_time": np.asarray(start, dtype="float64"),
        "processing_time": np.asarray(processing, dtype="float64"),
    })
    return _submission_order(stream)


def stream_from_out_jobs(jobs: pd.DataFrame, *, id_column: str = FULL_ID) -> pd.DataFrame:
    """The stream of a simulated run, from a validated jobs table (``out_jobs.csv``).

    ``r`` = ``submission_time``, ``p`` = ``requested_number_of_resources``, ``e`` = ``requested_time``,
    ``s`` = ``starting_time``, ``w`` = ``finish_time - starting_time`` (a job killed at its walltime keeps
    the time it actually ran).

    Args:
        jobs: from :func:`batreplay.formats.out_jobs.read_out_jobs`.
        id_column: ``"full_job_id"`` (``workload!id``, to compare two runs) or ``"job_id"`` (bare id, to
            compare with a log whose jobs are numbered the same way).

    Raises:
        StreamMismatchError: a job was rejected (it has no residence time, so P is undefined; the first
            rejected jobs are named), or bare ids are not unique.
    """
    rejected = jobs["final_state"] == REJECTED
    if rejected.any():
        names = jobs.loc[rejected, FULL_ID]
        raise StreamMismatchError(
            f"{int(rejected.sum())} job(s) were rejected and have no residence time, the adequacy measure is "
            f"undefined (first: {', '.join(names.head(5))})")
    ids = jobs[id_column].astype(str)
    dup = ids[ids.duplicated()]
    if len(dup):
        raise StreamMismatchError(f"job id {dup.iloc[0]!r} is not unique in column {id_column!r}; use full ids")
    start = jobs["starting_time"].to_numpy(dtype="float64")
    return _make_stream(ids, jobs["submission_time"], jobs["requested_number_of_resources"],
                        jobs["requested_time"], start, jobs["finish_time"].to_numpy(dtype="float64") - start)


def stream_from_swf(log: pd.DataFrame, *, resources_column: str = "allocated_processors") -> pd.DataFrame:
    """The stream of a recorded log, from an SWF-derived table.

    Needs columns ``job_id``, ``submission_time`` (s, same origin as the simulation to compare with),
    ``wait_time`` (s), ``run_time`` (s), ``requested_time`` (s) and ``resources_column``. The recorded
    launch time is ``s = submission_time + wait_time`` and ``w = run_time``. ``resources_column`` must be what
    the simulated jobs requested (the kth2000 golden workload used ``allocated_processors``; pass
    ``"requested_processors"`` when the conversion used that).

    Raises:
        ValueError: a column is missing (all missing ones listed).
        StreamMismatchError: a wait or run time is missing (SWF -1) or negative (first jobs named).
    """
    needed = ["job_id", "submission_time", "wait_time", "run_time", "requested_time", resources_column]
    missing = [c for c in needed if c not in log.columns]
    if missing:
        raise ValueError(f"log table: missing column(s) {', '.join(missing)} (found: {', '.join(map(str, log.columns))})")
    for name in ("wait_time", "run_time", "submission_time"):
        values = log[name].to_numpy(dtype="float64")
        bad = ~(values >= 0)
        if bad.any():
            names = log["job_id"].astype(str)[bad]
            raise StreamMismatchError(
                f"log table: {int(bad.sum())} job(s) have no usable {name} (missing or negative; first: "
                f"{', '.join(names.head(5))}); their residence time is unknown")
    submission = log["submission_time"].to_numpy(dtype="float64")
    return _make_stream(log["job_id"], submission, log[resources_column], log["requested_time"],
                        submission + log["wait_time"].to_numpy(dtype="float64"), log["run_time"])


def _checked_stream(stream: pd.DataFrame, name: str) -> pd.DataFrame:
    missing = [c for c in STREAM_COLUMNS if c not in stream.columns]
    if missing:
        raise ValueError(f"{name} stream: missing column(s) {', '.join(missing)}")
    return _submission_order(stream.assign(job_id=stream["job_id"].astype(str)))


def _first_difference(pair: pd.DataFrame, column: str, tolerance: float, what: str,
                      names: tuple[str, str]) -> None:
    a, b = pair[f"{column}_ref"].to_numpy(), pair[f"{column}_model"].to_numpy()
    differ = ~(np.abs(a - b) <= tolerance)
    if differ.any():
        k = int(np.flatnonzero(differ)[0])
        raise StreamMismatchError(
            f"{what} differs for job {pair['job_id_ref'].iloc[k]}"
            + (f" / {pair['job_id_model'].iloc[k]}" if pair['job_id_model'].iloc[k] != pair['job_id_ref'].iloc[k] else "")
            + f" (position {k + 1} in submission order): {a[k]:g} in {names[0]}, {b[k]:g} in {names[1]}"
            f"; {int(differ.sum())} job(s) differ; streams are not comparable (Baranov et al. 2018, Sect. VII)")


def align_streams(reference: pd.DataFrame, model: pd.DataFrame, *,
                  align: Literal["job_id", "submission_order"] = "job_id",
                  time_tolerance: float = DEFAULT_TIME_TOLERANCE,
                  names: tuple[str, str] = ("reference", "model")) -> pd.DataFrame:
    """Pair the jobs of two streams and check they are comparable (Baranov et al. 2018, Sect. VII).

    Args:
        reference, model: streams (see the module docstring).
        align: ``"job_id"`` pairs jobs with the same id (both streams must hold the same ids);
            ``"submission_order"`` pairs the i-th submitted job of each stream, as in the paper.
        time_tolerance: largest difference (s) under which two submission or requested times are equal,
            and under which two waiting times count as equal.
        names: how to call the two streams in messages.

    Returns:
        One row per job, in the reference's submission order: ``job_id_ref``, ``job_id_model``,
        ``submission_time``, ``waiting_ref``, ``waiting_model``, ``residence_ref`` (v_i), ``residence_model``
        (V_i), seconds.

    Raises:
        StreamMismatchError: different job counts, jobs on one side only, or a job whose submission
            time, requested resources or requested time differ (the first such job is named, with both
            values and the number of differing jobs).
        ValueError: a stream lacks a column, or ``align`` is unknown.
    """
    ref, mod = _checked_stream(reference, names[0]), _checked_stream(model, names[1])
    if len(ref) != len(mod):
        detail = ""
        if align == "job_id":
            only_ref = ref.loc[~ref["job_id"].isin(mod["job_id"]), "job_id"]
            only_mod = mod.loc[~mod["job_id"].isin(ref["job_id"]), "job_id"]
            detail = (f"; only in {names[0]}: {', '.join(only_ref.head(5)) or '-'}"
                      f"; only in {names[1]}: {', '.join(only_mod.head(5)) or '-'}")
        raise StreamMismatchError(
            f"streams have different job counts: {len(ref)} in {names[0]}, {len(mod)} in {names[1]}{detail}")
    if align == "job_id":
        for stream, name in ((ref, names[0]), (mod, names[1])):
            dup = stream["job_id"][stream["job_id"].duplicated()]
            if len(dup):
                raise StreamMismatchError(f"job id {dup.iloc[0]!r} appears more than once in the {name} stream")
        only_ref = ref.loc[~ref["job_id"].isin(mod["job_id"]), "job_id"]
        if len(only_ref):
            only_mod = mod.loc[~mod["job_id"].isin(ref["job_id"]), "job_id"]
            raise StreamMismatchError(
                f"{len(only_ref)} job(s) only in {names[0]} (first: {', '.join(only_ref.head(5))}), "
                f"{len(only_mod)} only in {names[1]} (first: {', '.join(only_mod.head(5))})")
        mod = mod.set_index("job_id", drop=False).loc[ref["job_id"].to_numpy()].reset_index(drop=True)
    elif align != "submission_order":
        raise ValueError(f"align must be 'job_id' or 'submission_order', got {align!r}")
    pair = pd.concat([ref.add_suffix("_ref"), mod.add_suffix("_model")], axis=1)
    _first_difference(pair, "submission_time", time_tolerance, "submission time", names)
    _first_difference(pair, "requested_resources", 0.0, "requested resources", names)
    _first_difference(pair, "requested_time", time_tolerance, "requested time", names)
    submission = pair["submission_time_ref"].to_numpy()
    return pd.DataFrame({
        "job_id_ref": pair["job_id_ref"], "job_id_model": pair["job_id_model"], "submission_time": submission,
        "waiting_ref": pair["start_time_ref"] - submission,
        "waiting_model": pair["start_time_model"] - pair["submission_time_model"],
        "residence_ref": pair["start_time_ref"] - submission + pair["processing_time_ref"],
        "residence_model": pair["start_time_model"] - pair["submission_time_model"] + pair["processing_time_model"],
    })


def adequacy_measure(reference: pd.DataFrame, model: pd.DataFrame, **options) -> float:
    """P of Baranov et al. 2018, eq. 2: root mean square difference of residence times, seconds.

    Args:
        reference, model: streams; ``options`` go to :func:`align_streams`.

    Raises:
        StreamMismatchError, ValueError: as :func:`align_streams`; ValueError also for empty streams.
    """
    pair = align_streams(reference, model, **options)
    if len(pair) == 0:
        raise ValueError("adequacy measure of empty streams is undefined")
    diff = pair["residence_model"].to_numpy() - pair["residence_ref"].to_numpy()
    return float(np.sqrt(np.mean(diff * diff)))


def adequacy_table(reference: pd.DataFrame, model: pd.DataFrame, *,
                   prefixes: Sequence[int] = TABLE_I_PREFIXES,
                   time_tolerance: float = DEFAULT_TIME_TOLERANCE, **options) -> pd.DataFrame:
    """Baranov et al. 2018's Table I: P on the first k jobs (submission order) and on all jobs.

    Args:
        reference, model: streams; other ``options`` go to :func:`align_streams`.
        prefixes: the k values; those larger than the number of jobs are left out.
        time_tolerance: as in :func:`align_streams`; two waiting times differ when they are further apart.

    Returns:
        Frame with one row per kept k and a last row for all jobs: ``prefix`` (``"50"``, ..., ``"all"``),
        ``nb_jobs`` (k), ``measure`` (P on those jobs, s), ``nb_different_jobs`` (jobs among them whose
        waiting time differs).

    Raises:
        StreamMismatchError, ValueError: as :func:`align_streams`; ValueError for a k < 1 or empty streams.
    """
    pair = align_streams(reference, model, time_tolerance=time_tolerance, **options)
    n = len(pair)
    if n == 0:
        raise ValueError("adequacy table of empty streams is undefined")
    if any(k < 1 for k in prefixes):
        raise ValueError(f"prefix sizes must be >= 1, got {list(prefixes)}")
    diff = pair["residence_model"].to_numpy() - pair["residence_ref"].to_numpy()
    squares = np.cumsum(diff * diff)
    differ = np.cumsum(~(np.abs(pair["waiting_model"].to_numpy() - pair["waiting_ref"].to_numpy()) <= time_tolerance))
    ks = sorted({int(k) for k in prefixes if k <= n})
    rows = [(str(k), k) for k in ks] + [("all", n)]
    return pd.DataFrame({
        "prefix": [label for label, _ in rows],
        "nb_jobs": [k for _, k in rows],
        "measure": [float(np.sqrt(squares[k - 1] / k)) for _, k in rows],
        "nb_different_jobs": [int(differ[k - 1]) for _, k in rows],
    })


def compare_run_with_log(jobs: pd.DataFrame, log: pd.DataFrame, *,
                         resources_column: str = "allocated_processors",
                         prefixes: Sequence[int] = TABLE_I_PREFIXES, **options) -> pd.DataFrame:
    """Table I of a simulated run (``J``) against the recorded log (``j``), jobs matched by their bare id.

    Args:
        jobs: validated ``out_jobs.csv`` table of the run (bare job ids = SWF job numbers).
        log: SWF-derived table, see :func:`stream_from_swf` (``submission_time`` relative to the same origin).
        resources_column: log column holding what the simulated jobs requested.
        prefixes, options: as :func:`adequacy_table`.

    Raises:
        StreamMismatchError, ValueError: as :func:`stream_from_out_jobs`, :func:`stream_from_swf` and
            :func:`align_streams`.
    """
    return adequacy_table(stream_from_swf(log, resources_column=resources_column),
                          stream_from_out_jobs(jobs, id_column="job_id"),
                          prefixes=prefixes, names=("log", "run"), **options)


def compare_runs(reference_jobs: pd.DataFrame, model_jobs: pd.DataFrame, *,
                 prefixes: Sequence[int] = TABLE_I_PREFIXES, **options) -> pd.DataFrame:
    """Table I of two simulated runs of one workload, jobs matched by their full id ``workload!job_id``.

    Args:
        reference_jobs, model_jobs: validated ``out_jobs.csv`` tables.
        prefixes, options: as :func:`adequacy_table`.

    Raises:
        StreamMismatchError, ValueError: as :func:`stream_from_out_jobs` and :func:`align_streams`.
    """
    return adequacy_table(stream_from_out_jobs(reference_jobs), stream_from_out_jobs(model_jobs),
                          prefixes=prefixes, names=("reference run", "model run"), **options)


#: The run-level adequacy metrics of ``metrics.csv`` (with a recorded log); each ``compute`` takes the
#: :func:`adequacy_table` of the run against the log and reads its last row (all jobs).
ADEQUACY_METRICS: tuple[Metric, ...] = (
    Metric("adequacy_vs_log", "s", "adequacy measure P against the log", "{:.2f}",
           lambda table: float(table.iloc[-1]["measure"]), source="Baranov et al. 2018, eq. 2",
           readable=False),
    Metric("nb_different_jobs_vs_log", "", "jobs whose waiting time differs from the log", "{:d}",
           lambda table: int(table.iloc[-1]["nb_different_jobs"]), source="Baranov et al. 2018, Table I"),
)


def adequacy_metrics(table: pd.DataFrame) -> dict[str, float | int]:
    """Every metric of :data:`ADEQUACY_METRICS`, in order, from an :func:`adequacy_table` (its ``all`` row)."""
    return {metric.name: metric.compute(table) for metric in ADEQUACY_METRICS}
