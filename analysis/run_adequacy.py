"""Baranov et al. 2018's Table I for runs: a run against the recorded SWF log it replayed, and two runs of the
same job stream against each other.

The adequacy measure P itself (eq. 2) and the job streams it compares are in
:mod:`batreplay.analysis.adequacy`; this module matches a run's jobs with the log's (or another run's), decides
whether the two are the same job stream (same jobs, submission times, resources and requested times,
Sect. VII), and puts the paper's reference values (:data:`BARANOV_TABLE_I`) beside the run's. A run that is not
a replay of the log's job stream is refused with a :class:`~batreplay.analysis.adequacy.StreamMismatchError`
(:class:`NotInLogError`, :class:`RequestedTimesDifferError`), which :func:`refusal_note` turns into the note
``batreplay analyze`` shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from batreplay.analysis.adequacy import (
    DEFAULT_TIME_TOLERANCE,
    StreamMismatchError,
    adequacy_table,
    stream_from_out_jobs,
    stream_from_swf,
)
from batreplay.analysis.run_dir import RunData
from batreplay.options import RUN_CONDUCT
from batreplay.workloads.swf import SwfLog

#: Baranov et al. 2018, Table I: P (s) and number of jobs whose waiting time differs, on the first k
#: jobs, for the SUPPZ job management system against itself with virtual nodes. The paper takes P = 12 s as
#: the reference value of an adequate model. Column names as in ``adequacy_vs_log.csv``.
BARANOV_TABLE_I = pd.DataFrame({
    "prefix": ["50", "100", "250", "500", "750", "1000"],
    "baranov2018_p": [0.0, 12.0, 11.4, 12.0, 11.6, 11.2],
    "baranov2018_nb_different_jobs": [0, 4, 13, 20, 28, 35],
})
#: The reference value of P (s) of an adequate model (Baranov et al. 2018, Table I).
BARANOV_REFERENCE_P = 12.0

#: Values of ``adequacy_requested_times`` (see :func:`adequacy_against_log`).
REQUESTED_TIMES_CHOICES = ("run", "log")


class NotInLogError(StreamMismatchError):
    """A run holds jobs that the recorded log does not: it is not a replay of that log."""


class RequestedTimesDifferError(StreamMismatchError):
    """A run's requested times (walltimes) differ from the log's, so P is undefined (Baranov et al. 2018,
    Sect. VII) unless the log's requested times are used for both streams."""


def _best_resources_column(run: RunData, matched: pd.DataFrame) -> str:
    """The SWF processor count the run's jobs requested: the column agreeing with more jobs."""
    requested = run.jobs.set_index("job_id")["requested_number_of_resources"].reindex(matched["job_id"]).to_numpy()
    agree = {c: int((matched[c].to_numpy() == requested).sum())
             for c in ("allocated_processors", "requested_processors")}
    return max(agree, key=lambda c: (agree[c], c == "allocated_processors"))


def adequacy_against_log(run: RunData, log: SwfLog, *,
                         requested_times: Literal["run", "log"] = "run") -> tuple[pd.DataFrame, list[str]]:
    """Baranov et al. 2018's Table I of a run (model stream J) against the recorded log (stream j).

    Jobs are matched by the run's bare Batsim job id = the SWF job number. Log jobs the run does not hold
    (dropped by the conversion, or beyond ``--max-jobs``) are left out and counted in the notes. Recorded
    times are moved to the run's clock so that the earliest recorded submission of the matched jobs falls on
    the run's first submission (the conversion's rule: simulated submission = recorded submission - first
    recorded submission). The processor count compared is the SWF field (allocated or requested) that agrees
    with more of the run's jobs.

    P is defined for two streams of the same jobs: same submission times, resources and requested times
    (Baranov et al. 2018, Sect. VII). A run whose walltimes were changed (``--walltime-factor 2``, as in
    Madon et al. 2024) has other requested times than the log, so:

    - ``requested_times="run"`` (default, the paper's definition): such a run is refused
      (:class:`RequestedTimesDifferError`);
    - ``requested_times="log"``: both streams take the log's requested time ``e_i``. The changed walltimes are
      then taken as part of the model (like its scheduler): P measures how far the model's residence times
      are from the recorded ones for the jobs users submitted, whatever walltime the model gave them. The
      notes say how many jobs had another requested time in the run.

    Returns:
        (table, notes): :func:`batreplay.analysis.adequacy.adequacy_table` with the columns of
        :data:`BARANOV_TABLE_I` added (NaN where the paper has no such k), and human-readable notes, each
        starting ``"vs log: "`` and without the run's name (which
        :func:`batreplay.analysis.analyze_report.merge_run_notes` adds).

    Raises:
        NotInLogError: a run job is not in the log, or the log has duplicate job numbers.
        RequestedTimesDifferError: requested times differ and ``requested_times="run"``.
        StreamMismatchError: the run has rejected jobs, or a matched job differs in submission time or
            resources (first such job named), see :func:`batreplay.analysis.adequacy.align_streams`.
        ValueError: ``requested_times`` is neither ``"run"`` nor ``"log"``.
    """
    if requested_times not in REQUESTED_TIMES_CHOICES:
        raise ValueError(f"requested_times must be 'run' or 'log', got {requested_times!r}")
    table = log.jobs.assign(job_id=log.jobs["job_id"].astype(str))
    duplicated = table["job_id"][table["job_id"].duplicated()]
    if len(duplicated):
        raise NotInLogError(f"{log.path}: job number {duplicated.iloc[0]} appears more than once")
    ids = run.jobs["job_id"].astype(str)
    if ids.duplicated().any():
        raise NotInLogError(f"job id {ids[ids.duplicated()].iloc[0]!r} appears in several workloads, jobs "
                            "cannot be matched with SWF job numbers")
    absent = ids[~ids.isin(table["job_id"])]
    if len(absent):
        raise NotInLogError(
            f"{len(absent)} of the run's {len(ids)} job(s) are not in the log {log.path} "
            f"(first: {', '.join(absent.head(5))}); is it a run of this log?")
    matched = table[table["job_id"].isin(ids)].reset_index(drop=True)
    notes = []
    left_out = len(table) - len(matched)
    if left_out:
        lines = table.loc[~table["job_id"].isin(ids), "line"].head(5).astype(str)
        notes.append(f"vs log: {left_out} of the log's {len(table)} jobs are not in the run "
                     f"(dropped by the conversion or not simulated) and are left out (SWF lines {', '.join(lines)}"
                     f"{', ...' if left_out > 5 else ''})")
    in_run = run.jobs.set_index("job_id")["requested_time"].reindex(matched["job_id"]).to_numpy(dtype="float64")
    in_log = matched["requested_time"].to_numpy(dtype="float64")
    differ = ~(np.abs(in_run - in_log) <= DEFAULT_TIME_TOLERANCE)
    if differ.any() and requested_times == "run":
        k = int(np.flatnonzero(differ)[0])
        factor = run.spec.get("walltime_factor")
        raise RequestedTimesDifferError(
            f"the requested times (walltimes) of {int(differ.sum())} of its {len(matched)} jobs differ from the "
            f"log's (first: job {matched['job_id'].iloc[k]}, {in_log[k]:g} s in the log, {in_run[k]:g} s in the run)"
            + (f"; the run raised walltimes with walltime_factor = {factor:g}" if factor else ""))
    shift = float(matched["submission_time"].min()) - float(run.jobs["submission_time"].min())
    column = _best_resources_column(run, matched)
    notes.append(f"vs log: {len(matched)} jobs compared, recorded processors from SWF field "
                 f"{column}, recorded times shifted by {-shift:g} s")
    stream_log = stream_from_swf(matched.assign(submission_time=matched["submission_time"] - shift),
                                 resources_column=column)
    stream_run = stream_from_out_jobs(run.jobs, id_column="job_id")
    if requested_times == "log":
        stream_run["requested_time"] = stream_run["job_id"].map(stream_log.set_index("job_id")["requested_time"])
        if differ.any():
            notes.append("vs log: the log's requested times are used for both streams; "
                         f"{int(differ.sum())} of the {len(matched)} jobs had another walltime in the run")
    result = adequacy_table(stream_log, stream_run, names=(f"log {Path(log.path).name}", f"run {run.name}"))
    result = result.merge(BARANOV_TABLE_I, on="prefix", how="left")
    result["baranov2018_nb_different_jobs"] = result["baranov2018_nb_different_jobs"].astype("Int64")
    return result, notes


def adequacy_between_runs(reference: RunData, model: RunData) -> pd.DataFrame:
    """Baranov et al. 2018's Table I of two runs of the same job stream (``reference`` = j, ``model`` = J).

    Jobs are matched by full id ``workload!job_id`` when both runs have the same workload names, else by
    bare job id. Requested times must agree (runs with different walltimes are not the same job stream).

    Raises:
        StreamMismatchError: the runs are not of the same job stream (see
            :func:`batreplay.analysis.adequacy.align_streams`) or have rejected jobs.
    """
    same_names = set(reference.jobs["workload_name"]) == set(model.jobs["workload_name"])
    id_column = "full_job_id" if same_names else "job_id"
    return adequacy_table(stream_from_out_jobs(reference.jobs, id_column=id_column),
                          stream_from_out_jobs(model.jobs, id_column=id_column),
                          names=(f"run {reference.name}", f"run {model.name}"))


#: Keys of a run's ``spec`` that do not change what it simulates: where and how long it may run, which Batsim binary
#: (its version is in ``versions``), the metrics' warm-up, the label the user gave it.
_NOT_THE_SETTING = (*RUN_CONDUCT, "batsim_timeout", "batsim", "warm_up")


def setting_of(run: RunData) -> dict | None:
    """What a run with random overheads simulates, its seed left out: ``spec`` of ``run.json`` but
    :data:`_NOT_THE_SETTING`, and the versions that ran it (``versions``); its input files by their SHA-256
    (``inputs_sha256``) rather than by path when ``run.json`` has them (two copies of one platform file are one
    platform). None for a run without overheads (``--overheads``, :mod:`batreplay.workloads.overheads`) or without
    ``run.json``."""
    if run.spec.get("overheads") is None:
        return None
    setting = {key: value for key, value in run.spec.items() if key not in (*_NOT_THE_SETTING, "overhead_seed")}
    files = run.manifest.get("inputs_sha256")
    if files:
        setting = {key: value for key, value in setting.items() if key not in ("workload", "platform")}
    return {**setting, "inputs_sha256": files, "versions": run.manifest.get("versions")}


def setting_difference(first: RunData, second: RunData) -> str | None:
    """The first key (of :func:`setting_of`) in which two runs with overheads differ, None when they do not."""
    one, other = setting_of(first) or {}, setting_of(second) or {}
    return next((key for key in sorted(set(one) | set(other)) if one.get(key) != other.get(key)), None)


def are_repetitions(first: RunData, second: RunData) -> bool:
    """True when two runs are two repetitions of one experiment (Baranov et al. 2018, section VIII): both drew
    random job overheads, with other seeds, and everything else they simulate is the same."""
    setting = setting_of(first)
    return (setting is not None and setting == setting_of(second)
            and first.spec.get("overhead_seed", 0) != second.spec.get("overhead_seed", 0))


def reference_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """The reference value P_ideal of the adequacy measure (Baranov et al. 2018, section VIII, Table I) from the
    Table I rows of pairs of repetitions (``adequacy_pairs.csv`` rows whose ``repetition`` is true): per prefix k,
    the mean over the pairs of P (``p_ideal``, s) and of the jobs whose waiting time differs
    (``nb_different_jobs_ideal``), and the number of pairs (``nb_repetition_pairs``); the paper's values beside.
    Empty when no pair is a repetition."""
    rows = pairs[pairs["repetition"]]
    table = rows.groupby("prefix", sort=False).agg(nb_jobs=("nb_jobs", "first"), p_ideal=("measure", "mean"),
                                                     nb_different_jobs_ideal=("nb_different_jobs", "mean"),
                                                     nb_repetition_pairs=("measure", "size")).reset_index()
    table = table.merge(BARANOV_TABLE_I, on="prefix", how="left")
    table["baranov2018_nb_different_jobs"] = table["baranov2018_nb_different_jobs"].astype("Int64")
    return table


def refusal_note(run: RunData, err: StreamMismatchError) -> str:
    """The note saying why ``run`` has no table against the recorded log: ``err`` (the refusal of
    :func:`adequacy_against_log`) and the definition of P it follows (Baranov et al. 2018, eq. 2, Sect. VII),
    with the way to compare anyway when only the requested times differ."""
    why = ("P of Baranov et al. 2018 (eq. 2) compares two runs of the same job stream: same jobs, submission "
           "times, resources and requested times (Sect. VII)")
    if isinstance(err, RequestedTimesDifferError):
        why += ("; adequacy_requested_times='log' (--adequacy-requested-times log) compares with the log's "
                "requested times")
    return f"not compared with the log, no adequacy table for this run: {err}. {why}"

