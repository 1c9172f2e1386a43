"""The closed replay of a site model (``--replay closed``, Caspart et al. 2019): exactly ``population`` jobs in the
system until replacements stop, checked on out_jobs.csv; the same jobs whatever the engine (real Batsim included,
byte for byte); the users' bookkeeping; one-line refusals before the simulation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.platforms.generate import platform_command
from batreplay.replay.closed import ClosedPopulation, DrawnRequests
from batreplay.replay.protocol import ReplayError
from batreplay.replay.registry import ReplaySpec
from batreplay.run.runner import RunError, run
from batreplay.run.spec import RunSpec
from batreplay.sitemodels.model_file import read_model
from conftest import WORKLOADS
from replay_helpers import gridka_site_model

#: Batsim tells the decision process of a job's end at the job's finish time in out_jobs.csv or 1 us after it (its
#: message latency; two jobs ending together may be told in two messages); the replacement is registered then.
#: Batsim's times have a resolution of 1 us.
MESSAGE_LATENCY = 1e-6


@pytest.fixture(scope="module")
def gridka_model(tmp_path_factory):
    """The GridKa jobs of the LCG log (partitions 156-157), one type per group; the log has no CPU times, so every
    job only computes (no I/O demand): what a closed replay runs."""
    return gridka_site_model(tmp_path_factory.mktemp("model"))


def jobs_in_system(out_jobs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(times, counts)``: the jobs submitted and not finished half-way between each event time and the next
    microsecond tick, leaving out the moments within :data:`MESSAGE_LATENCY` after an end, when its replacement may
    not be registered yet; in time order."""
    submitted = np.sort(out_jobs["submission_time"].to_numpy())
    finished = np.sort(out_jobs["finish_time"].to_numpy())
    times = np.unique(np.concatenate([submitted, finished])) + 1.5 * MESSAGE_LATENCY
    last_end = np.searchsorted(finished, times, side="right") - 1  # the latest end at or before each time
    waiting = (last_end >= 0) & (times - finished[np.maximum(last_end, 0)] <= 1.1 * MESSAGE_LATENCY)
    times = times[~waiting]
    counts = np.searchsorted(submitted, times, side="right") - np.searchsorted(finished, times, side="right")
    return times, counts


def closed_run(model, platform, out, **replay):
    return run(RunSpec.build(workload=model, platform=platform, scheduler="easy", out_dir=out, replay="closed",
                             **replay))


def assert_population_kept(out_jobs: pd.DataFrame, population: int) -> None:
    """Exactly ``population`` jobs in the system from time 0 until replacements stop, at the first end that is not
    replaced (ends are replaced in time order: of ``n`` jobs, the first ``n - population`` ends are); from then on
    jobs only end."""
    times, counts = jobs_in_system(out_jobs)
    stop = np.sort(out_jobs["finish_time"].to_numpy())[len(out_jobs) - population]
    kept, after = times < stop, times > stop + 1.5 * MESSAGE_LATENCY
    assert kept.any() and (counts[kept] == population).all(), counts[kept][counts[kept] != population][:5]
    assert (np.diff(counts[after]) <= 0).all() and counts[-1] == 0


def test_a_closed_run_keeps_its_population_until_its_last_job(gridka_model, tmp_path):
    model, platform = gridka_model
    result = closed_run(model, platform, tmp_path / "r", population="55", closed_jobs=600)
    out_jobs = pd.read_csv(tmp_path / "r" / "out_jobs.csv")
    assert len(out_jobs) == 600 and result.metrics["nb_jobs"] == 600
    assert sorted(out_jobs["job_id"]) == list(range(1, 601))
    assert (out_jobs["submission_time"] == 0).sum() == 55
    assert_population_kept(out_jobs, 55)
    assert "closed replay: 55 jobs kept in the system, replaced until 600 jobs" in " ".join(result.input_notes)


def test_fill_keeps_one_job_per_job_slot_and_a_duration_stops_replacements(gridka_model, tmp_path):
    model, platform = gridka_model
    closed_run(model, platform, tmp_path / "r", closed_duration=20_000.0, model_seed=3)
    out_jobs = pd.read_csv(tmp_path / "r" / "out_jobs.csv")
    assert (out_jobs["submission_time"] == 0).sum() == 40  # 40 hosts of one job slot each
    assert out_jobs["submission_time"].max() < 20_000  # jobs that end from then on are not replaced
    assert (out_jobs["finish_time"] >= 20_000).sum() == 40  # the population in the system at the stop ends after it
    assert_population_kept(out_jobs, 40)
    again = closed_run(model, platform, tmp_path / "again", closed_duration=20_000.0, model_seed=3)
    assert again.metrics["nb_jobs"] == len(out_jobs)
    assert (tmp_path / "r" / "out_jobs.csv").read_bytes() == (tmp_path / "again" / "out_jobs.csv").read_bytes()
    other = closed_run(model, platform, tmp_path / "other", closed_duration=20_000.0, model_seed=4)
    assert other.metrics != again.metrics


@settings(max_examples=6, deadline=None)
@given(population=st.integers(1, 60), extra=st.integers(0, 150), seed=st.integers(0, 2**31))
def test_every_job_ends_once_and_the_population_holds_for_any_size(gridka_model, tmp_path_factory, population,
                                                                   extra, seed):
    model, platform = gridka_model
    out = tmp_path_factory.mktemp("prop") / "r"
    closed_run(model, platform, out, population=str(population), closed_jobs=population + extra, model_seed=seed)
    out_jobs = pd.read_csv(out / "out_jobs.csv")
    assert out_jobs["job_id"].is_unique and len(out_jobs) == population + extra
    assert (out_jobs["finish_time"] >= out_jobs["starting_time"]).all()
    assert_population_kept(out_jobs, population)


@pytest.mark.slow
def test_a_closed_run_is_the_same_on_a_real_batsim(gridka_model, tmp_path, real_batsim):
    model, platform = gridka_model
    closed_run(model, platform, tmp_path / "embedded", population="70", closed_jobs=1500, model_seed=5)
    closed_run(model, platform, tmp_path / "real", population="70", closed_jobs=1500, model_seed=5, engine="batsim",
               batsim=real_batsim)
    real = (tmp_path / "real" / "out_jobs.csv").read_bytes()
    assert (tmp_path / "embedded" / "out_jobs.csv").read_bytes() == real  # byte for byte
    out_jobs = pd.read_csv(tmp_path / "real" / "out_jobs.csv")
    assert len(out_jobs) == 1500 and (out_jobs["workload_name"] == "dyn").all()
    assert_population_kept(out_jobs, 70)


def test_the_users_bookkeeping():
    users = ClosedPopulation(3, max_jobs=5)
    assert users.next_submission_time() == 0.0 and users.pop_due(0.0) == [1, 2, 3] and not users.all_submitted
    users.job_terminated(2, 10.0)
    assert users.next_submission_time() == 10.0 and users.pop_due(10.0) == [4]
    users.job_terminated(1, 12.0)
    users.job_terminated(3, 12.0)  # one more than max_jobs allows: not replaced
    assert users.pop_due(12.0) == [5] and users.all_submitted and users.nb_jobs == 5
    with pytest.raises(KeyError):
        users.job_terminated(6, 13.0)
    timed = ClosedPopulation(2, duration=100.0)
    assert timed.pop_due(0.0) == [1, 2] and timed.next_submission_time() == 100.0
    timed.job_terminated(1, 100.0)  # at the duration: not replaced
    assert timed.pop_due(100.0) == [] and timed.all_submitted and timed.nb_jobs == 2
    stalled = ClosedPopulation(1, duration=50.0)
    stalled.pop_due(0.0)
    with pytest.raises(ReplayError, match="time does not advance"):
        for job in range(1, 1000):
            stalled.job_terminated(job, 0.0)
            stalled.pop_due(0.0)


def test_drawn_requests_depend_on_the_seed_only(gridka_model):
    model = read_model(gridka_model[0])
    first, second = DrawnRequests(model, 9), DrawnRequests(model, 9)
    late = second[2000]  # drawn in another order: the same jobs
    assert first[1] == second[1] and first[2000] == late and first[3] != DrawnRequests(model, 10)[3]
    profile = first[1]["profile"]
    assert profile["type"] == "parallel_homogeneous" and profile["cpu"] >= 1 and first[1]["res"] == 1
    # GridKa's requested times are all at least the run times (ratios >= 1): no walltime below the CPU seconds
    assert min(t.requested_time_ratio.support()[0] for t in model.types) >= 1
    assert all(first[k]["walltime"] >= first[k]["profile"]["cpu"] / 1e9 for k in range(1, 2001))


def test_refusals_name_the_problem_before_the_simulation(gridka_model, tmp_path):
    model_path, platform = gridka_model
    model = read_model(model_path)
    with_io = dataclasses.replace(model, types=tuple(dataclasses.replace(t, io_demand=t.cpu_demand)
                                                     for t in model.types))
    with pytest.raises(ReplayError, match="read from storage"):
        DrawnRequests(with_io, 0)
    with pytest.raises(ReplayError, match=r"--closed-jobs: an option of --replay closed; the user model 'rigid'"):
        ReplaySpec("rigid", closed_jobs=3)
    with pytest.raises(ReplayError, match=r"--model-seed: an option of --replay distribution or --replay closed or "
                                          r"--replay open; .* 'feed"):
        ReplaySpec("feedback", model_seed=3)
    with pytest.raises(ReplayError, match=r"--population: an option of --replay closed; the user model 'open'"):
        ReplaySpec("open", population="3", open_jobs=3)
    with pytest.raises(ReplayError, match="give --closed-jobs N or --closed-duration"):
        ReplaySpec("closed")
    with pytest.raises(ReplayError, match="--population 'many'"):
        ReplaySpec("closed", population="many", closed_jobs=3)
    with pytest.raises(RunError, match="draws jobs from a site model .*not a batreplay site model"):
        closed_run(WORKLOADS / "../batsim-golden/delays/workload.json", platform, tmp_path / "x", closed_jobs=3)
    with pytest.raises(RunError, match="leave out the workload conversion options"):
        run(RunSpec.build(workload=model_path, platform=platform, scheduler="easy", out_dir=tmp_path / "y",
                          replay="closed", closed_jobs=3, max_jobs=5))
    (narrow,) = platform_command(1, 1e9, tmp_path / "one.xml")
    wide = dataclasses.replace(model, types=(dataclasses.replace(model.types[0], job_slots=type(
        model.types[0].job_slots).fit([1, 2], integer=True)), *model.types[1:]))
    from batreplay.replay.closed import build_closed_users

    with pytest.raises(ReplayError, match=r"group=1 \(up to 2\) ask for more job slots than the platform's 1 hosts"):
        build_closed_users(wide, 1, 1, ReplaySpec("closed", closed_jobs=3))
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists() and narrow.exists()


def test_a_closed_run_that_may_pass_the_engines_agreement_is_refused(gridka_model, tmp_path):
    """1e10 s: beyond it the embedded engine and Batsim part ways. GridKa's longest job is 172,800 s: 10 million of
    them one after the other may pass it."""
    model, platform = gridka_model
    with pytest.raises(RunError, match="passes 1e\\+10 s"):
        closed_run(model, platform, tmp_path / "r", population="1", closed_jobs=10_000_000)
    assert not (tmp_path / "r").exists()


def test_a_warm_up_past_a_closed_runs_last_submission_fails_after_it_and_leaves_nothing(gridka_model, tmp_path):
    """A closed run's submissions are known once it has run: a warm-up past its last one leaves no job to measure."""
    model, platform = gridka_model
    with pytest.raises(RunError, match=r"^warm_up \(--warm-up\) 1e\+09 s: the last job is submitted .* s after the "
                                       r"first and the run ends .* s after it, so no job is left to measure: give a "
                                       r"shorter warm-up$"):
        closed_run(model, platform, tmp_path / "r", population="3", closed_jobs=6, warm_up=1e9)
    assert list(tmp_path.iterdir()) == []
