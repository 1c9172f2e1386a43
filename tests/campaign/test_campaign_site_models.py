"""Campaigns of site models (``[[logs]] site_model = ...``, commit 51d136e): a site model is crossed with the
closed and open replays only and a log with rigid (and feedback) only; the seed axis is the seed of the draws; each
site model instance gets the options its replay reads; adding a site model leaves the logs' instance ids alone. A
small campaign (300 KTH-SP2 jobs and the GridKa site model of the LCG log) is run end to end and reported; the
refusals are one line naming the file, the table and the key."""

from __future__ import annotations

import hashlib
import json
import shutil

import pandas as pd
import pytest
from conftest import WORKLOADS
from rich.console import Console

from batreplay.campaign.executors import LocalExecutor
from batreplay.campaign.runner import run_campaign
from batreplay.campaign.spec import CampaignSpecError, load_campaign
from batreplay.campaign.worker import INSTANCE_MANIFEST
from batreplay.cli import main
from batreplay.options import declared_options
from batreplay.platforms.shipped import SHIPPED_PLATFORMS
from batreplay.replay.registry import MODEL_OPTIONS
from batreplay.reports.report import build_report
from batreplay.run.spec import run_option
from batreplay.sitemodels.fit import FitOptions, fit_site_model, save_fit
from batreplay.sitemodels.job_types import JobTypeRule
from batreplay.sitemodels.model_file import read_model
from batreplay.workloads.loading import WorkloadOptions

QUIET = Console(quiet=True)
KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
#: The workload conversion's options (a log's, refused in a site model's table).
CONVERSION = {declaration.name for declaration in declared_options(WorkloadOptions)}
#: What the runs draw: small, so that the campaign runs in a few seconds.
POPULATION, CLOSED_JOBS, OPEN_JOBS = 20, 150, 120

KTH_TABLE = f"""
[[logs]]
name = "kth"
workload = "{KTH.as_posix()}"
platform = "kth-sp2"
max_jobs = 300
"""

GRIDKA_TABLE = f"""
[[logs]]
name = "gridka"
site_model = "gridka.json"
nodes = 40
population = {POPULATION}
closed_jobs = {CLOSED_JOBS}
open_jobs = {OPEN_JOBS}
"""


def campaign_text(logs: str, replay_models: str = '["rigid", "closed", "open"]', *,
                  schedulers: str = '["easy", "fcfs"]', seeds: str = "[0, 1]", defaults: str = "") -> str:
    return f"""
[campaign]
name = "site-models"
output_root = "runs"
report_dir = "report"
{defaults}
{logs}

[matrix]
schedulers = {schedulers}
replay_models = {replay_models}
seeds = {seeds}

[report]
tables = ["scheduling"]
figures = ["cumulative"]
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A folder holding ``gridka.json``, the GridKa jobs of the LCG log (partitions 156-157, one type per group; the
    log has no CPU times: compute only, what a closed replay runs) and ``gridka-io.json``, the same fitted with
    ``--io-share 0.2`` (I/O demand > 0: refused by a closed replay)."""
    folder = tmp_path_factory.mktemp("models")
    rule = JobTypeRule.parse("group")
    save_fit(fit_site_model(WORKLOADS / "LCG.swf.gz", rule, FitOptions(select={"partition": [156, 157]}, seed=1)),
             folder / "gridka.json")
    save_fit(fit_site_model(WORKLOADS / "LCG.swf.gz", rule,
                            FitOptions(select={"partition": [156, 157]}, seed=1, io_share=0.2)),
             folder / "gridka-io.json")
    return folder


def write_campaign(folder, text: str, models_folder=None, name: str = "c.toml"):
    """The campaign file ``name`` in ``folder`` (its root), with the fixture's model files beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    if models_folder is not None:
        for model in ("gridka.json", "gridka-io.json"):
            if not (folder / model).exists():
                shutil.copyfile(models_folder / model, folder / model)
    (folder / name).write_text(text)
    return folder / name


def refusal(path) -> str:
    with pytest.raises(CampaignSpecError) as caught:
        load_campaign(path)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


# ----------------------------------------------------------------------------------------------- load


def test_a_site_model_is_crossed_with_the_closed_and_open_replays_only(models, tmp_path):
    spec = load_campaign(write_campaign(tmp_path, campaign_text(KTH_TABLE + GRIDKA_TABLE), models))
    assert [log.source for log in spec.logs] == ["log", "site-model"]
    assert ("[[logs]] gridka, site_model", tmp_path / "gridka.json") in spec.input_files()
    instances = spec.instances()
    # logs x experiments x (the replays of the log's source) x seeds, in that order
    own = {"kth": ["rigid"], "gridka": ["closed", "open"]}
    expected = [(log, experiment, replay, seed) for log in ("kth", "gridka") for experiment in ("easy", "fcfs")
                for replay in own[log] for seed in (0, 1)]
    assert len(instances) == 1 * 2 * 1 * 2 + 1 * 2 * 2 * 2 == 12
    assert [(i.log.name, i.experiment.name, i.replay.model, i.seed) for i in instances] == expected
    assert {(i.log.name, i.params["replay"]) for i in instances} == {("kth", "rigid"), ("gridka", "closed"),
                                                                     ("gridka", "open")}
    assert len({i.id for i in instances}) == 12
    default_model_seed = run_option("model_seed").default
    for instance in instances:
        params = instance.params
        assert params["seed"] == instance.seed
        if instance.log.name == "kth":
            assert params["workload"] == KTH.as_posix() and params["max_jobs"] == 300
            assert not set(MODEL_OPTIONS) & set(params), params  # no model_seed, population, closed_jobs...
            continue
        assert params["workload"] == "gridka.json" and not CONVERSION & set(params), params
        # the seed axis is the seed of the draws (recorded when not its default, 0: then the run draws with 0)
        assert params.get("model_seed", default_model_seed) == instance.seed
        if instance.seed != default_model_seed:
            assert params["model_seed"] == instance.seed
        if instance.replay.model == "closed":
            assert (params["population"], params["closed_jobs"]) == (str(POPULATION), CLOSED_JOBS)
            assert not {"open_jobs", "open_duration"} & set(params), params
        else:
            assert params["open_jobs"] == OPEN_JOBS
            assert not {"population", "closed_jobs", "closed_duration"} & set(params), params
        # every site-model option in the parameters is one the replay's model reads
        assert {key for key in params if key in MODEL_OPTIONS} <= {"population", "closed_jobs", "open_jobs",
                                                                   "model_seed"}
    # adding a site model (and the replays of its own) changes none of the log's instance ids
    alone = load_campaign(write_campaign(tmp_path, campaign_text(KTH_TABLE, '["rigid"]'), name="alone.toml"))
    assert [i.id for i in alone.instances()] == [i.id for i in instances if i.log.name == "kth"]
    # ... and each site-model instance has its own seed, scheduler and replay in its id
    assert sorted(i.id.split("__")[3:5] for i in instances if i.log.name == "gridka") == sorted(
        [replay, f"s{seed}"] for _ in ("easy", "fcfs") for replay in ("closed", "open") for seed in (0, 1))


@pytest.mark.parametrize("population, written", [("48", "48"), ('"fill"', "fill"), ("7", "7")])
def test_a_population_is_a_whole_number_or_fill(models, tmp_path, population, written):
    table = f'[[logs]]\nname = "gridka"\nsite_model = "gridka.json"\nnodes = 40\npopulation = {population}\n' \
            "closed_jobs = 100\n"
    spec = load_campaign(write_campaign(tmp_path, campaign_text(table, '["closed"]'), models))
    assert spec.logs[0].options["population"] == written
    assert [i.params["population"] for i in spec.instances()] == [written] * 4
    # the same in [defaults], an integer read as its text
    table = '[[logs]]\nname = "gridka"\nsite_model = "gridka.json"\nnodes = 40\nclosed_jobs = 100\n'
    text = campaign_text(table, '["closed"]', defaults=f"[defaults]\npopulation = {population}\n")
    spec = load_campaign(write_campaign(tmp_path, text, name="defaults.toml"))
    assert [i.params["population"] for i in spec.instances()] == [written] * 4


def test_defaults_apply_to_the_logs_they_fit_and_the_warm_up_to_both(models, tmp_path):
    defaults = """[defaults]
max_jobs = 200
walltime_factor = 2.0
population = 10
closed_jobs = 90
open_duration = 5000.0
warm_up = 100.0
"""
    kth = '[[logs]]\nname = "kth"\nworkload = "' + KTH.as_posix() + '"\nplatform = "kth-sp2"\n'
    gridka = '[[logs]]\nname = "gridka"\nsite_model = "gridka.json"\nnodes = 40\nwarm_up = 50.0\n'
    spec = load_campaign(write_campaign(tmp_path, campaign_text(kth + gridka, seeds="[3]", defaults=defaults), models))
    by_replay = {i.replay.model: i.params for i in spec.instances() if i.experiment.name == "easy"}
    assert set(by_replay) == {"rigid", "closed", "open"}
    rigid, closed, opened = by_replay["rigid"], by_replay["closed"], by_replay["open"]
    assert (rigid["max_jobs"], rigid["walltime_factor"], rigid["warm_up"]) == (200, 2.0, 100.0)
    assert not set(MODEL_OPTIONS) & set(rigid)
    assert (closed["population"], closed["closed_jobs"], closed["model_seed"], closed["warm_up"]) == ("10", 90, 3, 50.0)
    assert (opened["open_duration"], opened["model_seed"], opened["warm_up"]) == (5000.0, 3, 50.0)
    for params in (closed, opened):
        assert not CONVERSION & set(params), params
    assert "open_duration" not in closed and "population" not in opened


# ----------------------------------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def ran(models, tmp_path_factory):
    """The campaign of the log and the site model, run once (2 local workers), its output root under the tmp folder."""
    root = tmp_path_factory.mktemp("campaign")
    path = write_campaign(root, campaign_text(KTH_TABLE + GRIDKA_TABLE), models)
    spec = load_campaign(path, output_root=root / "out")
    summary = run_campaign(spec, executor=LocalExecutor(2), console=QUIET, show_progress=False)
    return spec, summary


def instance_of(spec, log: str, replay: str, seed: int, scheduler: str = "easy"):
    (found,) = [i for i in spec.instances() if (i.log.name, i.replay.model, i.seed, i.experiment.scheduler)
                == (log, replay, seed, scheduler)]
    return found


def test_every_instance_of_the_campaign_finishes(ran):
    spec, summary = ran
    assert summary.complete and not summary.failed and len(summary.done) == 12, summary.outcomes
    for instance in spec.instances():
        folder = spec.output_root / instance.id
        manifest = json.loads((folder / INSTANCE_MANIFEST).read_text())
        assert manifest["params"] == instance.params and manifest["status"] == "done"
        if instance.log.site_model:  # the model file is the run's workload, its checksum recorded
            digest = hashlib.sha256((spec.root / "gridka.json").read_bytes()).hexdigest()
            assert manifest["workload_sha256"] == digest
            assert json.loads((folder / "run.json").read_text())["inputs_sha256"]["workload"] == digest
        assert (folder / "out_jobs.csv").is_file()
    rigid = pd.read_csv(spec.output_root / instance_of(spec, "kth", "rigid", 0).id / "out_jobs.csv")
    assert len(rigid) == 300


@pytest.mark.parametrize("seed", [0, 1])
def test_a_closed_instance_runs_its_population_with_its_seed(ran, seed):
    spec, _ = ran
    folder = spec.output_root / instance_of(spec, "gridka", "closed", seed).id
    recorded = json.loads((folder / "run.json").read_text())["spec"]
    assert recorded["replay"] == "closed" and recorded["population"] == str(POPULATION)
    assert recorded["closed_jobs"] == CLOSED_JOBS and recorded["workload"] == "gridka.json"
    assert recorded.get("model_seed", run_option("model_seed").default) == seed
    if seed != 0:
        assert recorded["model_seed"] == seed
    assert "open_jobs" not in recorded and "open_duration" not in recorded
    out_jobs = pd.read_csv(folder / "out_jobs.csv")
    assert sorted(out_jobs["job_id"]) == list(range(1, CLOSED_JOBS + 1))
    assert (out_jobs["submission_time"] == 0).sum() == POPULATION  # the population, at the start


def test_the_seed_decides_the_draws_and_a_rerun_gives_the_same_bytes(ran, tmp_path):
    spec, _ = ran
    for replay in ("closed", "open"):
        seed0 = (spec.output_root / instance_of(spec, "gridka", replay, 0).id / "out_jobs.csv").read_bytes()
        seed1 = (spec.output_root / instance_of(spec, "gridka", replay, 1).id / "out_jobs.csv").read_bytes()
        assert seed0 != seed1, replay
    # the same campaign in another output root: the same instances give the same bytes
    again = load_campaign(spec.path, output_root=tmp_path / "again")
    summary = run_campaign(again, executor=LocalExecutor(2), only="gridka__easy__*", console=QUIET,
                           show_progress=False)
    assert summary.complete and summary.total == len(summary.done) == 4 and not summary.failed  # (those only)
    for instance in again.select("gridka__easy__*"):
        first = (spec.output_root / instance.id / "out_jobs.csv").read_bytes()
        assert (again.output_root / instance.id / "out_jobs.csv").read_bytes() == first, instance.id


@pytest.mark.parametrize("seed", [0, 1])
def test_an_open_instance_draws_its_number_of_jobs(ran, seed):
    spec, _ = ran
    folder = spec.output_root / instance_of(spec, "gridka", "open", seed, "fcfs").id
    recorded = json.loads((folder / "run.json").read_text())["spec"]
    assert recorded["replay"] == "open" and recorded["open_jobs"] == OPEN_JOBS
    assert recorded.get("model_seed", run_option("model_seed").default) == seed
    assert "population" not in recorded and "closed_jobs" not in recorded
    out_jobs = pd.read_csv(folder / "out_jobs.csv")
    assert len(out_jobs) == OPEN_JOBS and sorted(out_jobs["job_id"]) == list(range(1, OPEN_JOBS + 1))


@pytest.fixture(scope="module")
def reported(ran, tmp_path_factory):
    """``campaign report`` of the campaign run once, into a folder under the tmp folder: ``(folder, exit status)``."""
    spec, _ = ran
    out = tmp_path_factory.mktemp("report") / "report"
    status = main(["campaign", "report", str(spec.path), "--output-root", str(spec.output_root), "--out", str(out)])
    return out, status


def test_the_report_lists_every_instance(ran, reported):
    spec, _ = ran
    out, status = reported
    assert status == 0
    assert (out / "README.md").is_file() and (out / "report.html").is_file()
    listed = pd.read_csv(out / "instances.csv")
    assert sorted(listed["id"]) == sorted(i.id for i in spec.instances())
    assert set(listed["status"]) == {"done"}
    counts = listed.set_index("id")["nb_jobs"]
    for instance in spec.instances():
        expected = {"rigid": 300, "closed": CLOSED_JOBS, "open": OPEN_JOBS}[instance.replay.model]
        assert counts[instance.id] == expected, instance.id


def test_a_table_no_replay_of_a_log_shows_is_said_not_a_crash(ran, tmp_path):
    """The lateness tables show feedback replays: a campaign of rigid, closed and open replays has none to show."""
    from dataclasses import replace

    spec, _ = ran
    asked = replace(spec, report=replace(spec.report, tables=["scheduling", "lateness", "user-lateness-percentiles"]))
    result = build_report(asked, tmp_path / "report")
    for log in ("kth", "gridka"):
        for kind in ("lateness", "user-lateness-percentiles"):
            assert (f"{log}: no {kind} table (the campaign has no feedback, adjusted, distribution, fluid or "
                    "schlagkamp replay of this log)") in result.notes
    assert "## Scheduling metrics" in (tmp_path / "report" / "README.md").read_text()


def test_the_report_says_a_site_model_is_one(reported):
    out, _ = reported
    text = (out / "README.md").read_text()
    assert "gridka.json is a Batsim JSON workload" not in text
    assert "gridka.json is a site model whose replays draw their jobs" in text


def test_the_report_of_a_site_model_named_without_json_suffix(models, tmp_path):
    shutil.copyfile(models / "gridka.json", tmp_path / "gridka.model")
    table = '[[logs]]\nname = "gridka"\nsite_model = "gridka.model"\nnodes = 40\nopen_jobs = 20\n'
    spec = load_campaign(write_campaign(tmp_path, campaign_text(table, '["open"]', seeds="[0]")))
    assert [i.params["workload"] for i in spec.instances()] == ["gridka.model"] * 2  # the model loads
    result = build_report(spec, tmp_path / "report")  # nothing has run: the report is written anyway
    assert result.instances_found == 0 and result.instances_total == 2
    assert "gridka.model is a site model" in " ".join(result.notes)


# ----------------------------------------------------------------------------------------------- refusals


def gridka(extra: str = f"population = {POPULATION}\nclosed_jobs = {CLOSED_JOBS}\nopen_jobs = {OPEN_JOBS}\n",
           model: str = "gridka.json") -> str:
    return f'[[logs]]\nname = "gridka"\nsite_model = "{model}"\nnodes = 40\n{extra}'


REFUSALS = {
    "a site model's option in [defaults] with logs only": (
        campaign_text(KTH_TABLE, '["rigid"]', defaults="[defaults]\nclosed_jobs = 5\n"),
        "[defaults], key 'closed_jobs': ", "no instance would read it: an option of a site model's replay"),
    "a population in [defaults] with open replays only": (
        campaign_text(gridka("open_jobs = 9\n"), '["open"]', defaults="[defaults]\npopulation = 5\n"),
        "[defaults], key 'population': ", "no site model is replayed by one that reads it"),
    "a conversion option in [defaults] with site models only": (
        campaign_text(gridka("open_jobs = 9\n"), '["open"]', defaults="[defaults]\nmax_jobs = 5\n"),
        "[defaults], key 'max_jobs': ", "every [[logs]] table gives a site model"),
    "site_model and workload": (
        campaign_text(KTH_TABLE + gridka(f'workload = "{KTH.as_posix()}"\nclosed_jobs = 9\nopen_jobs = 9\n')),
        "[[logs]] #2: give 'workload' (a log) or 'site_model'", "not both"),
    "a platform file as the model": (
        campaign_text(KTH_TABLE + gridka(model=SHIPPED_PLATFORMS["kth-sp2"].as_posix())),
        "[[logs]] #2, key 'site_model': ", SHIPPED_PLATFORMS["kth-sp2"].name),
    "an SWF log as the model": (
        campaign_text(KTH_TABLE + gridka(model=KTH.as_posix())), "[[logs]] #2, key 'site_model': ", KTH.name),
    "a missing model": (
        campaign_text(KTH_TABLE + gridka(model="none.json")), "[[logs]] #2, key 'site_model': ",
        "none.json: no such file"),
    "max_jobs in a site model's table": (
        campaign_text(KTH_TABLE + gridka("closed_jobs = 9\nopen_jobs = 9\nmax_jobs = 10\n")),
        "[[logs]] #2, key 'max_jobs': ", "drawn"),
    "profile in a site model's table": (
        campaign_text(gridka('closed_jobs = 9\nopen_jobs = 9\nprofile = "delay"\n'), '["closed", "open"]'),
        "[[logs]] #1, key 'profile': ", "drawn"),
    "population in a log's table": (
        campaign_text(KTH_TABLE + "population = 4\n" + gridka()), "[[logs]] #1, key 'population': ", "site model"),
    "open_jobs in a log's table": (
        campaign_text(KTH_TABLE + "open_jobs = 4\n", '["rigid"]'), "[[logs]] #1, key 'open_jobs': ", "site model"),
    "closed without closed_jobs nor closed_duration": (
        campaign_text(KTH_TABLE + gridka("population = 5\nopen_jobs = 9\n")), "[[logs]] #2: ",
        "--closed-jobs N or --closed-duration"),
    "open with open_jobs and open_duration": (
        campaign_text(KTH_TABLE + gridka("closed_jobs = 9\nopen_jobs = 9\nopen_duration = 100.0\n")), "[[logs]] #2: ",
        "--open-jobs N or --open-duration SECONDS (one of them)"),
    "open with neither": (
        campaign_text(gridka(""), '["open"]'), "[[logs]] #1: ", "--open-jobs N or --open-duration"),
    "an option no instance reads": (
        campaign_text(gridka("closed_jobs = 9\nopen_jobs = 9\n"), '["open"]'), "[[logs]] #1, key 'closed_jobs': ",
        "an option of the closed replay, which [matrix] replay_models does not give"),
    "a population of 0": (
        campaign_text(gridka("population = 0\nclosed_jobs = 9\n"), '["closed"]'), "[[logs]] #1: ", "--population '0'"),
    "a population that is not a number": (
        campaign_text(gridka('population = "lots"\nclosed_jobs = 9\n'), '["closed"]'), "[[logs]] #1: ",
        "--population 'lots'"),
    "a model seed in a table (the seeds are the matrix's)": (
        campaign_text(gridka("closed_jobs = 9\nmodel_seed = 3\n"), '["closed"]'), "[[logs]] #1: ", "'model_seed'"),
    "closed with only logs": (
        campaign_text(KTH_TABLE, '["closed"]'), "[matrix], key 'replay_models': ", "'closed' replays a site model"),
    "open beside rigid with only logs": (
        campaign_text(KTH_TABLE, '["rigid", "open"]'), "[matrix], key 'replay_models': ",
        "'open' replays a site model"),
    "rigid with only a site model": (
        campaign_text(gridka(), '["rigid"]'), "[matrix], key 'replay_models': ", "'rigid' replays a log"),
    "a site model with no replay of its own": (
        campaign_text(KTH_TABLE + gridka(), '["rigid", "feedback"]'), "[matrix], key 'replay_models': ",
        "[[logs]] 'gridka'"),
    "a log with no replay of its own": (
        campaign_text(KTH_TABLE + gridka(), '["closed"]'), "[matrix], key 'replay_models': ", "[[logs]] 'kth'"),
    "a closed replay of a model with I/O demand": (
        campaign_text(gridka("closed_jobs = 9\n", model="gridka-io.json"), '["closed"]'),
        "[[logs]] #1, key 'site_model': ", "I/O demand > 0"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusals_are_one_line_naming_the_file_the_table_and_the_key(models, tmp_path, case):
    text, where, what = REFUSALS[case]
    path = write_campaign(tmp_path, text, models)
    message = refusal(path)
    assert message.startswith(f"{path}: {where}"), message
    assert what in message, message


def test_a_model_with_io_demand_is_refused_closed_and_open_without_storage(models, tmp_path):
    # the fixture's model reads from storage indeed, and is replayed open on a platform with a storage host
    assert any(t.io_demand.support()[1] > 0 for t in read_model(models / "gridka-io.json").types)
    assert all(t.io_demand.support()[1] == 0 for t in read_model(models / "gridka.json").types)
    assert main(["platform", "--nodes", "40", "--io-rate", "1e8", "--out", str(tmp_path / "io-40.xml")]) == 0
    with_storage = gridka("open_jobs = 9\n", model="gridka-io.json").replace("nodes = 40", 'platform = "io-40.xml"')
    spec = load_campaign(write_campaign(tmp_path, campaign_text(with_storage, '["open"]'), models))
    assert [i.params["replay"] for i in spec.instances()] == ["open"] * 4
    message = refusal(write_campaign(tmp_path, campaign_text(gridka("open_jobs = 9\n", model="gridka-io.json"),
                                                             '["open"]'), name="open.toml"))
    assert "key 'site_model'" in message and "an open replay needs a platform with a storage host" in message
    message = refusal(write_campaign(tmp_path, campaign_text(
        gridka("closed_jobs = 9\nopen_jobs = 9\n", model="gridka-io.json"), '["closed", "open"]'), name="both.toml"))
    assert "key 'site_model'" in message and "group=" in message
