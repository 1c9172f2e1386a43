"""The replays by batches (``adjusted``, ``distribution``, ``fluid``, ``schlagkamp``) on the whole KTH-SP2 log.

One EASY run per model on the embedded engine (``batreplay run --replay MODEL``, sessions ``arrival:60``), shared by
the tests of the module. Each run must:

- end every job of the workload exactly once (as many rows in out_jobs.csv as jobs in the run's jobs.csv, the same
  ids), all registered dynamically;
- record its model in run.json (``spec.replay``, with the default sessions);
- keep submission <= start <= finish on every row;
- submit no job of a batch before every job of the batches it depends on has finished in the simulation (the
  batch graphs of :func:`batreplay.replay.batches.batches_for`); with ``adjusted``, a batch that depends on others
  starts exactly at the latest (finish + recorded think time) over them;
- with ``fluid``, start every batch inside one of its user's recorded session spans, in simulated time, or after
  the user's last one, and never before its own session's recorded start.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from batreplay.formats.out_jobs import read_out_jobs
from batreplay.replay.batches import Batches, batches_for
from batreplay.replay.feedback_setup import simulation_origin
from batreplay.run.runner import RunSpec, run
from batreplay.workloads.loading import WorkloadOptions, load_workload
from conftest import WORKLOADS

# slow: four runs of the whole log (about 10 s each on an idle 2-core machine)
pytestmark = pytest.mark.slow

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
MODELS = ("adjusted", "distribution", "fluid", "schlagkamp")
SESSIONS = "arrival:60"
#: Seconds: Batsim writes times with six decimals, and the users round submissions to the microsecond.
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def workload() -> tuple[pd.DataFrame, Batches]:
    """The whole log's per-job table and its batches under :data:`SESSIONS`."""
    job_table = load_workload(KTH, WorkloadOptions()).job_table
    return job_table, batches_for(job_table, SESSIONS)


@pytest.fixture(scope="module")
def whole_log_run(tmp_path_factory) -> Callable[[str], Path]:
    """``whole_log_run(model)``: the directory of the model's EASY run of the whole log, run once per module."""
    done: dict[str, Path] = {}

    def get(model: str) -> Path:
        if model not in done:
            out_dir = tmp_path_factory.mktemp("whole-log") / model
            run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", out_dir=out_dir, replay=model))
            done[model] = out_dir
        return done[model]

    return get


def _jobs(out_dir: Path) -> pd.DataFrame:
    """out_jobs.csv indexed by the SWF job number (a dynamic run's ``job_id``, workload ``dyn``)."""
    jobs = read_out_jobs(out_dir / "out_jobs.csv")
    return jobs.set_index(jobs["job_id"].astype("int64"))


def _batch_times(batches: Batches, jobs: pd.DataFrame) -> tuple[dict[int, float], dict[int, float]]:
    """Per batch id, the simulated first submission and last finish of its jobs (jobs from the batch graphs)."""
    batch_of_job = pd.Series({job_id: batch for graph in batches.graphs.values()
                              for batch in graph.session_ids.tolist() for job_id, _offset in graph.jobs_of(batch)})
    assert batch_of_job.index.is_unique and set(batch_of_job.index) == set(jobs.index)
    grouped = jobs.groupby(batch_of_job.reindex(jobs.index))
    return grouped["submission_time"].min().to_dict(), grouped["finish_time"].max().to_dict()


@pytest.mark.parametrize("model", MODELS)
def test_every_job_of_the_log_ends_exactly_once(whole_log_run, workload, model):
    out_dir = whole_log_run(model)
    job_table, _batches = workload
    expected = pd.read_csv(out_dir / "jobs.csv")["job_id"]  # the workload the run simulated
    jobs = _jobs(out_dir)
    assert len(expected) == len(job_table) == 28467  # 28,476 in the log, 8 of run time 0 and 1 without nodes dropped
    assert len(jobs) == len(expected) and jobs.index.is_unique
    assert set(jobs.index) == set(expected) == set(job_table["job_id"].astype("int64"))
    assert (jobs["workload_name"] == "dyn").all()  # registered by the broker
    assert (jobs["final_state"] != "REJECTED").all()


@pytest.mark.parametrize("model", MODELS)
def test_run_json_records_the_model(whole_log_run, model):
    manifest = json.loads((whole_log_run(model) / "run.json").read_text())
    assert manifest["engine"] == "embedded"
    assert manifest["spec"]["replay"] == model and manifest["spec"]["sessions"] == SESSIONS
    assert manifest["spec"].get("model_seed", 0) == 0  # the default seed (of distribution) is not recorded
    assert any(note.startswith(f"{model} replay: ") for note in manifest["input_notes"])


@pytest.mark.parametrize("model", MODELS)
def test_submission_start_finish_in_order(whole_log_run, model):
    jobs = _jobs(whole_log_run(model))
    assert (jobs["submission_time"] <= jobs["starting_time"]).all()
    assert (jobs["starting_time"] <= jobs["finish_time"]).all()


@pytest.mark.parametrize("model", MODELS)
def test_no_batch_is_submitted_before_the_batches_it_depends_on_end(whole_log_run, workload, model):
    _job_table, batches = workload
    jobs = _jobs(whole_log_run(model))
    first, last = _batch_times(batches, jobs)
    early, nb_edges = [], 0
    for user, graph in batches.graphs.items():
        for source, target in zip(graph.dependency_source.tolist(), graph.dependency_target.tolist()):
            nb_edges += 1
            if first[target] < last[source] - TOLERANCE:
                early.append((user, source, target, last[source], first[target]))
    assert nb_edges > 10_000  # measured 19,625 dependencies between the 16,476 batches
    assert not early, (f"{model}: {len(early)} batches submitted before a batch they depend on ended, first "
                       f"(user, batch, dependent batch, its last finish, dependent's first submission): {early[0]}")


def test_adjusted_batches_start_at_last_finish_plus_recorded_think_time(whole_log_run, workload):
    """``adjusted`` adds nothing to the feedback loop: a batch that depends on others starts at the latest, over
    them, of (simulated last finish + recorded think time)."""
    _job_table, batches = workload
    first, last = _batch_times(batches, _jobs(whole_log_run("adjusted")))
    ready: dict[int, float] = {}
    for graph in batches.graphs.values():
        for source, target, think in zip(graph.dependency_source.tolist(), graph.dependency_target.tolist(),
                                         graph.dependency_think_time.tolist()):
            ready[target] = max(ready.get(target, -np.inf), last[source] + think)
    off = {batch: (first[batch], when) for batch, when in ready.items() if abs(first[batch] - when) > TOLERANCE}
    assert len(ready) > 10_000 and not off, f"{len(off)} batches off their start, e.g. {next(iter(off.items()))}"


def test_fluid_batches_start_inside_their_users_sessions(whole_log_run, workload):
    """Every batch of the fluid replay starts inside one of its user's recorded session spans ``[first_submit,
    last_finish] - origin`` (simulated s), or after the end of the user's last one, and never before the recorded
    start of its own session."""
    job_table, batches = workload
    first, _last = _batch_times(batches, _jobs(whole_log_run("fluid")))
    origin = simulation_origin(job_table)
    spans = {int(user): (rows["first_submit"].to_numpy(dtype=float) - origin,
                         rows["last_finish"].to_numpy(dtype=float) - origin, rows["session_id"].to_numpy())
             for user, rows in batches.sessions.sessions.groupby("user_id")}
    outside, moved = [], 0
    for user, graph in batches.graphs.items():
        starts, ends, sessions = spans[int(user)]
        times = np.array([first[batch] for batch in graph.session_ids.tolist()])
        inside = (times[:, None] >= starts[None, :] - TOLERANCE) & (times[:, None] <= ends[None, :] + TOLERANCE)
        ok = inside.any(axis=1) | (times >= ends.max() - TOLERANCE)
        outside += [(user, int(batch), float(time)) for batch, time in zip(graph.session_ids[~ok], times[~ok])]
        # batches started at the very start of another session of their user: they waited for that period
        at_start = np.abs(times[:, None] - starts[None, :]) <= TOLERANCE
        own = sessions[None, :] == batches.session_of_batch[graph.session_ids][:, None]
        moved += int((at_start & ~own).any(axis=1).sum())
    assert not outside, f"{len(outside)} batches start outside their user's sessions, e.g. (user, batch, s): " \
                        f"{outside[0]}"
    assert moved > 0  # the periods do hold batches back
    session_start = batches.sessions.sessions["first_submit"].to_numpy(dtype=float) - origin
    early = [batch for batch, time in first.items()
             if time < session_start[batches.session_of_batch[batch]] - TOLERANCE]
    assert not early, f"{len(early)} batches start before their session's recorded start, e.g. batch {early[0]}"
