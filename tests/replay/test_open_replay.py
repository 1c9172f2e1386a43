"""The open replay of a site model (``--replay open``): the jobs and arrival times drawn from the model
(:func:`batreplay.sitemodels.generate.open_workload`) simulated as a static workload, without the broker; the draw
checked against :func:`~batreplay.sitemodels.generate.drawn_log` and ``batreplay model generate``; the seed decides
it; the same jobs whatever the engine (real Batsim included, byte for byte); one-line refusals that leave nothing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batreplay.cli import main
from batreplay.platforms.generate import platform_command
from batreplay.replay.registry import ReplaySpec, replay_decision_process
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from batreplay.schedulers.registry import load_scheduler
from batreplay.sitemodels.fit import FitOptions, fit_site_model, save_fit
from batreplay.sitemodels.generate import SECONDS_PER_DAY, GenerateOptions, drawn_log
from batreplay.sitemodels.job_types import JobTypeRule
from batreplay.sitemodels.model_file import read_model
from conftest import WORKLOADS
from replay_helpers import gridka_site_model

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def gridka_model(tmp_path_factory):
    """The GridKa jobs of the LCG log (partitions 156-157), one type per group (as in test_closed_population.py):
    one job slot each, compute only; and a platform of 40 hosts."""
    return gridka_site_model(tmp_path_factory.mktemp("model"))


@pytest.fixture(scope="module")
def kth_model(tmp_path_factory):
    """KTH-SP2 typed by its processors (thresholds 2, 9, 33): jobs of 1 to 100 nodes, for the shipped ``kth-sp2``
    platform (100 nodes, the log's MaxProcs)."""
    folder = tmp_path_factory.mktemp("kth-model")
    fitted = fit_site_model(KTH, JobTypeRule.parse("processors:2,9,33"), FitOptions(seed=1))
    path, _ = save_fit(fitted, folder / "kth.json")
    return path


def open_run(model, platform, out, **replay):
    return run(RunSpec.build(workload=model, platform=platform, scheduler="easy", out_dir=out, replay="open",
                             **replay))


def run_tables(out) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(out_jobs, jobs)``: out_jobs.csv and jobs.csv of a run directory, both in job id order."""
    out_jobs = pd.read_csv(out / "out_jobs.csv").sort_values("job_id", ignore_index=True)
    jobs = pd.read_csv(out / "jobs.csv").sort_values("job_id", ignore_index=True)
    return out_jobs, jobs


def test_an_open_run_simulates_the_jobs_drawn_with_its_seed(gridka_model, tmp_path):
    model_path, platform = gridka_model
    model = read_model(model_path)
    result = open_run(model_path, platform, tmp_path / "r", open_jobs=250, model_seed=7)
    out_jobs, jobs = run_tables(tmp_path / "r")
    assert len(out_jobs) == 250 and result.metrics["nb_jobs"] == 250
    assert out_jobs["job_id"].tolist() == list(range(1, 251)) == jobs["job_id"].tolist()
    assert (out_jobs["submission_time"] == jobs["recorded_submission_time"]).all()
    assert "open workload drawn with seed 7: 250 jobs" in result.input_notes
    # the jobs drawn, checked against the draw itself: submissions, types and CPU seconds, job by job
    log, types = drawn_log(model, GenerateOptions(jobs=250, seed=7))
    assert (out_jobs["submission_time"].to_numpy() == log.jobs["submission_time"].to_numpy()).all()
    assert jobs["job_type"].tolist() == types
    assert (jobs["average_cpu_time"].to_numpy() == log.jobs["average_cpu_time"].to_numpy()).all()
    assert set(jobs["job_type"]) <= {t.name for t in model.types} and jobs["job_type"].nunique() > 1
    assert (jobs["average_cpu_time"] <= jobs["run_time"]).all() and (jobs["average_cpu_time"] > 0).any()
    assert out_jobs["submission_time"].is_monotonic_increasing and out_jobs["submission_time"].iloc[-1] > 0

    again = open_run(model_path, platform, tmp_path / "again", open_jobs=250, model_seed=7)
    for name in ("out_jobs.csv", "jobs.csv", "workload.json"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "r" / name).read_bytes(), name
    assert again.metrics == result.metrics
    # run.json records what draws the workload: the run it describes draws it again
    recorded = json.loads((tmp_path / "r" / "run.json").read_text())["spec"]
    assert (recorded["replay"], recorded["open_jobs"], recorded["model_seed"]) == ("open", 250, 7)
    run(RunSpec.from_dict({**recorded, "out_dir": tmp_path / "from-json"}))
    assert (tmp_path / "from-json" / "out_jobs.csv").read_bytes() == (tmp_path / "r" / "out_jobs.csv").read_bytes()

    open_run(model_path, platform, tmp_path / "other", open_jobs=250, model_seed=8)
    other, _ = run_tables(tmp_path / "other")
    assert len(other) == 250 and (other["submission_time"] != out_jobs["submission_time"]).any()


def test_an_open_duration_draws_the_arrivals_before_it(gridka_model, tmp_path):
    model_path, platform = gridka_model
    duration = 150_000.0  # about 1.7 days: some 700 GridKa jobs
    result = open_run(model_path, platform, tmp_path / "r", open_duration=duration, model_seed=4)
    out_jobs, jobs = run_tables(tmp_path / "r")
    assert (out_jobs["submission_time"] < duration).all()
    log, types = drawn_log(read_model(model_path), GenerateOptions(days=duration / SECONDS_PER_DAY, seed=4))
    assert len(out_jobs) == len(log.jobs) == result.metrics["nb_jobs"] > 100
    assert out_jobs["job_id"].tolist() == list(range(1, len(log.jobs) + 1))
    assert (out_jobs["submission_time"].to_numpy() == log.jobs["submission_time"].to_numpy()).all()
    assert jobs["job_type"].tolist() == types
    assert out_jobs["submission_time"].max() > duration / 2  # arrivals over the whole duration, not a burst
    shorter = open_run(model_path, platform, tmp_path / "short", open_duration=duration / 3, model_seed=4)
    assert 0 < shorter.metrics["nb_jobs"] < len(out_jobs)
    assert (pd.read_csv(tmp_path / "short" / "out_jobs.csv")["submission_time"] < duration / 3).all()


@settings(max_examples=6, deadline=None)
@given(jobs=st.integers(1, 80), seed=st.integers(0, 2**31))
def test_any_count_and_seed_give_the_draw_job_for_job(gridka_model, tmp_path_factory, jobs, seed):
    model_path, platform = gridka_model
    out = tmp_path_factory.mktemp("prop") / "r"
    open_run(model_path, platform, out, open_jobs=jobs, model_seed=seed)
    out_jobs, table = run_tables(out)
    log, types = drawn_log(read_model(model_path), GenerateOptions(jobs=jobs, seed=seed))
    assert out_jobs["job_id"].tolist() == list(range(1, jobs + 1))
    assert (out_jobs["submission_time"].to_numpy() == log.jobs["submission_time"].to_numpy()).all()
    assert table["job_type"].tolist() == types
    assert (out_jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()


def test_the_run_simulates_what_model_generate_writes(kth_model, tmp_path, capsys, monkeypatch):
    """``batreplay model generate --jobs N --seed S`` and ``batreplay run --replay open --open-jobs N --model-seed
    S`` draw the same jobs. On a platform as wide as the widest job, the same workload; on a narrower one the run
    keeps the wide jobs (the scheduler rejects them) where a conversion without platform would drop them."""
    monkeypatch.chdir(tmp_path)
    assert main(["model", "generate", str(kth_model), "--jobs", "300", "--seed", "2", "--out", "x.json"]) == 0
    assert "wrote x.json: 300 jobs" in capsys.readouterr().out
    generated = json.loads((tmp_path / "x.json").read_text())
    widest = max(job["res"] for job in generated["jobs"])
    assert len(generated["jobs"]) == 300 and 33 < widest <= 100  # wide jobs: the platform's width matters

    open_run(kth_model, "kth-sp2", tmp_path / "wide", open_jobs=300, model_seed=2)
    simulated = json.loads((tmp_path / "wide" / "workload.json").read_text())
    assert simulated["nb_res"] == 100
    assert simulated["jobs"] == generated["jobs"]  # ids, submission times, resources, walltimes, profile names
    assert simulated["profiles"] == generated["profiles"]
    out_jobs, jobs = run_tables(tmp_path / "wide")
    assert out_jobs["job_id"].astype(str).tolist() == [job["id"] for job in generated["jobs"]]
    assert (out_jobs["submission_time"].to_numpy() == [job["subtime"] for job in generated["jobs"]]).all()
    assert set(jobs["job_type"]) <= {t.name for t in read_model(kth_model).types}
    assert (jobs["average_cpu_time"] <= jobs["run_time"]).all()
    assert (out_jobs["final_state"] != "REJECTED").all()

    (narrow,) = platform_command(16, 1e9, tmp_path / "cluster-16.xml")
    open_run(kth_model, narrow, tmp_path / "narrow", open_jobs=300, model_seed=2)
    narrow_jobs = json.loads((tmp_path / "narrow" / "workload.json").read_text())
    assert narrow_jobs["nb_res"] == 16 and narrow_jobs["jobs"] == generated["jobs"]
    out_narrow = pd.read_csv(tmp_path / "narrow" / "out_jobs.csv")
    too_wide = {int(job["id"]) for job in generated["jobs"] if job["res"] > 16}
    assert too_wide and set(out_narrow.loc[out_narrow["final_state"] == "REJECTED", "job_id"]) == too_wide


def test_an_open_run_is_a_static_workload_without_broker(gridka_model, tmp_path):
    """No broker: the jobs are in the workload Batsim reads (``w0``), not registered as they come (``dyn``, as the
    closed replay of the same model does); the built-in scheduler is driven directly."""
    model_path, platform = gridka_model
    inner = load_scheduler("easy")
    assert replay_decision_process(ReplaySpec("open", open_jobs=3), {"nb_res": 40, "jobs": []}, None,
                                   inner) == (inner, [])
    assert not ReplaySpec("open", open_duration=10.0).dynamic and ReplaySpec("closed", closed_jobs=3).dynamic

    result = open_run(model_path, platform, tmp_path / "open", open_jobs=120, model_seed=1)
    manifest = json.loads((tmp_path / "open" / "run.json").read_text())
    assert manifest["decision_driver"] == "direct" and manifest["engine"] == "embedded"
    assert len(json.loads((tmp_path / "open" / "workload.json").read_text())["jobs"]) == 120
    assert (pd.read_csv(tmp_path / "open" / "out_jobs.csv")["workload_name"] == "w0").all()
    assert not any("closed replay" in note for note in result.input_notes)

    closed = run(RunSpec.build(workload=model_path, platform=platform, scheduler="easy", out_dir=tmp_path / "closed",
                               replay="closed", population="10", closed_jobs=120, model_seed=1))
    assert json.loads((tmp_path / "closed" / "workload.json").read_text())["jobs"] == []
    assert (pd.read_csv(tmp_path / "closed" / "out_jobs.csv")["workload_name"] == "dyn").all()
    assert any("closed replay" in note for note in closed.input_notes)


REFUSALS = [
    (["--replay", "open"], "--replay open: give --open-jobs N or --open-duration SECONDS (one of them)"),
    (["--replay", "open", "--open-jobs", "5", "--open-duration", "100"],
     "--replay open: give --open-jobs N or --open-duration SECONDS (one of them)"),
    (["--replay", "open", "--open-jobs", "5", "--population", "3"],
     "--population: an option of --replay closed; the user model 'open' does not use it"),
    (["--replay", "open", "--open-jobs", "5", "--closed-jobs", "5"],
     "--closed-jobs: an option of --replay closed; the user model 'open' does not use it"),
    (["--replay", "rigid", "--open-jobs", "5"],
     "--open-jobs: an option of --replay open; the user model 'rigid' does not use it"),
    (["--replay", "feedback", "--open-duration", "100"],
     "--open-duration: an option of --replay open; the user model 'feedback' does not use it"),
    (["--replay", "open", "--open-jobs", "5", "--max-jobs", "5"],
     "--replay open: the workload MODEL is a site model whose jobs are drawn, not converted: leave out the "
     "workload conversion options"),
    (["--replay", "open", "--open-jobs", "5", "--walltime-factor", "2"],
     "is a site model whose jobs are drawn, not converted"),
    (["--replay", "open", "--open-jobs", "0"], "open_jobs (--open-jobs) must be an integer from 1"),
    (["--replay", "open", "--open-duration", "1e10"], "--replay open, MODEL: arrivals: about"),
]


@pytest.mark.parametrize(("options", "message"), REFUSALS,
                         ids=["neither", "both", "population", "closed-jobs", "rigid", "feedback", "max-jobs",
                              "walltime-factor", "zero-jobs", "too-many-arrivals"])
def test_refusals_are_one_line_and_leave_nothing(gridka_model, tmp_path, capsys, monkeypatch, options, message):
    model_path, platform = gridka_model
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["run", "--workload", str(model_path), "--platform", str(platform), "--scheduler", "easy",
              "--out", "run", "--quiet", *options])
    error = capsys.readouterr().err
    assert stop.value.code == 2 and error.startswith("batreplay: error: ")
    assert message.replace("MODEL", str(model_path)) in error and error.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # no run directory, no staging leftover


@pytest.mark.parametrize("workload", [KTH, WORKLOADS / "../batsim-golden/delays/workload.json"],
                         ids=["swf-log", "batsim-json"])
def test_a_workload_that_is_not_a_site_model_is_refused(gridka_model, tmp_path, capsys, monkeypatch, workload):
    _, platform = gridka_model
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["run", "--workload", str(workload), "--platform", str(platform), "--scheduler", "easy", "--out", "run",
              "--quiet", "--replay", "open", "--open-jobs", "5"])
    error = capsys.readouterr().err
    assert stop.value.code == 2 and error.count("\n") == 1
    assert error.startswith(f"batreplay: error: --replay open draws jobs from a site model (batreplay model fit): "
                            f"{workload}: ")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("replay", ["rigid", "feedback"])
def test_a_site_model_replayed_as_a_log_is_refused_with_the_replays_it_takes(gridka_model, tmp_path, capsys,
                                                                              monkeypatch, replay):
    model_path, platform = gridka_model
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["run", "--workload", str(model_path), "--platform", str(platform), "--scheduler", "easy", "--out", "run",
              "--quiet", "--replay", replay])
    error = capsys.readouterr().err
    assert stop.value.code == 2 and error == (f"batreplay: error: {model_path} is a site model (batreplay model fit), "
                                               "whose jobs are drawn: replay it with --replay closed or --replay open, "
                                               f"not {replay}\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_an_open_run_is_the_same_on_a_real_batsim(gridka_model, tmp_path, real_batsim):
    model_path, _ = gridka_model
    (platform,) = platform_command(10, 1e9, tmp_path / "cluster-10.xml")  # 10 hosts: a long queue
    embedded = open_run(model_path, platform, tmp_path / "embedded", open_jobs=400, model_seed=5)
    open_run(model_path, platform, tmp_path / "real", open_jobs=400, model_seed=5, engine="batsim",
             batsim=real_batsim)
    real = (tmp_path / "real" / "out_jobs.csv").read_bytes()
    assert (tmp_path / "embedded" / "out_jobs.csv").read_bytes() == real  # byte for byte
    assert json.loads((tmp_path / "real" / "run.json").read_text())["decision_driver"] == "zeromq"
    out_jobs = pd.read_csv(tmp_path / "real" / "out_jobs.csv")
    assert len(out_jobs) == 400 and (out_jobs["workload_name"] == "w0").all()
    assert embedded.metrics["mean_waiting_time"] > 0 and np.isfinite(embedded.metrics["utilisation"])
