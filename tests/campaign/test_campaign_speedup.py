"""Co-scheduling in campaign experiments: ``speedup_model`` and ``speedup_options`` of ``[[experiments]]`` reach the
run as ``batreplay run --speedup-model/--speedup-options`` do, are checked when the file is loaded (unknown model,
options without a model, a table that cannot be read, real Batsim) in one line naming the file and key, and an
experiment without them keeps the instance ids campaigns had before the keys existed."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import WORKLOADS

from batreplay.campaign.spec import CampaignSpecError, instance_id, load_campaign, make_instance
from batreplay.campaign.worker import run_spec_of, task_for
from batreplay.engine.choices import SPEEDUP_MODEL_NAMES

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
#: The parameters of an instance before the speedup keys existed.
OLD_PARAMS = {"workload", "platform", "nodes_factor", "speed_factor", "scheduler", "scheduler_options", "profile",
              "recorded_speed", "max_jobs", "walltime_factor", "replay", "sessions", "seed", "engine"}
RULE = {"field": "res", "threshold": 8, "below": "compute", "above": "memory"}
RULE_TOML = '{ field = "res", threshold = 8, below = "compute", above = "memory" }'


def write_table(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("job_class,neighbour_class,speedup\ncompute,compute,0.85\ncompute,memory,1.0\n"
                    "memory,compute,1.1\nmemory,memory,0.7\n")
    return path


def spec_text(*lines: str, campaign: str = "", plain: bool = True) -> str:
    """A campaign on the first KTH-SP2 jobs: an experiment ``plain`` (EASY, no extra key) when ``plain``, and an
    experiment ``E`` holding ``lines``."""
    first = '[[experiments]]\nname = "plain"\nscheduler = "easy"\n\n' if plain else ""
    return f"""
[campaign]
name = "t"
output_root = "out"
{campaign}

[[logs]]
name = "kth"
workload = "{KTH.as_posix()}"
platform = "kth-sp2"
max_jobs = 20

{first}[[experiments]]
name = "E"
scheduler = "easy"
{chr(10).join(lines)}
"""


def load(folder: Path, text: str, name: str = "c.toml"):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return load_campaign(path)


def test_the_keys_reach_the_params_and_the_run(tmp_path, monkeypatch):
    """A relative table is looked for under the campaign root (not the current folder) and stays as written."""
    write_table(tmp_path / "tables" / "s.csv")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    options = f'speedup_options = {{ table = "tables/s.csv", class_rule = {RULE_TOML} }}'
    spec = load(tmp_path / "expe", spec_text('speedup_model = "table"', options, "compute_sharing = true",
                                             campaign='root = ".."'))
    plain, shared = spec.instances()
    assert (shared.experiment.option("speedup_model"), shared.experiment.option("speedup_options")) == \
        ("table", {"table": "tables/s.csv", "class_rule": RULE})
    assert shared.params["speedup_model"] == "table"
    assert shared.params["speedup_options"] == {"table": "tables/s.csv", "class_rule": RULE}
    assert shared.params["compute_sharing"] is True
    assert set(plain.params) == OLD_PARAMS
    assert (plain.experiment.option("speedup_model"), plain.experiment.option("speedup_options")) == (None, {})
    run = run_spec_of(task_for(shared, spec))
    assert run.engine.speedup_model == "table" and run.engine.speedup_options == shared.params["speedup_options"]
    flat = run.to_dict()
    assert flat["speedup_model"] == "table" and flat["speedup_options"]["table"] == "tables/s.csv"
    assert "speedup_model" not in run_spec_of(task_for(plain, spec)).to_dict()


@pytest.mark.parametrize("model", [m for m in SPEEDUP_MODEL_NAMES if m != "table"])
def test_models_without_a_table(tmp_path, model):
    spec = load(tmp_path, spec_text(f'speedup_model = "{model}"', plain=False))
    (instance,) = spec.instances()
    assert instance.params["speedup_model"] == model and instance.params["speedup_options"] == {}


def test_an_experiment_without_the_keys_keeps_its_id(tmp_path):
    """The id of an experiment without the keys is the hash of the parameters campaigns had before them; one with
    a speedup model is another simulation, hence another id."""
    write_table(tmp_path / "s.csv")
    alone = load(tmp_path, spec_text(plain=False), name="alone.toml").instances()[0]
    assert set(alone.params) == OLD_PARAMS
    prefix = ["kth", "easy", "recorded", "rigid", "s0"]
    assert alone.id == instance_id(prefix, {key: alone.params[key] for key in OLD_PARAMS})
    both = load(tmp_path, spec_text('speedup_model = "table"', 'speedup_options = { table = "s.csv", '
                                    'class_field = "class", default_class = "compute" }'), name="both.toml")
    plain, shared = both.instances()
    assert plain.params == alone.params and plain.id == alone.id
    assert shared.id != alone.id
    without = replace(shared.experiment, options={**shared.experiment.options, "speedup_model": None, "speedup_options": {}})
    again = make_instance(shared.log, without, shared.replay, 0, both.engine)
    assert again.params == alone.params and again.id == alone.id


def one_line_error(path: Path, key: str, pattern: str, place: str = "[[experiments]] #2") -> str:
    with pytest.raises(CampaignSpecError) as info:
        load_campaign(path)
    message = str(info.value)
    assert "\n" not in message, message
    assert message.startswith(f"{path}: {place}, key '{key}': "), message
    assert re.search(pattern, message), message
    return message


@pytest.mark.parametrize(("lines", "key", "pattern"), [
    (['speedup_model = "magic"'], "speedup_model", r"'magic': expected one of none, table, random"),
    (["speedup_model = 1"], "speedup_model", "expected a string"),
    (['speedup_options = { table = "s.csv" }'], "speedup_options", "without a speedup model"),
    (["speedup_options = {}"], "speedup_options", "without a speedup model"),
    (['speedup_model = "table"', 'speedup_options = "s.csv"'], "speedup_options", "expected a table"),
    (['speedup_model = "table"', 'speedup_options = { table = "nosuch.csv" }'], "speedup_options",
     r"speedup table \S*nosuch.csv: no such file"),
    (['speedup_model = "table"'], "speedup_options", "table"),  # the model needs its table
    (['speedup_model = "table"', 'speedup_options = { table = "bad.csv" }'], "speedup_options",
     r"bad.csv:3: column 'speedup': 'fast' is not a number > 0"),
    (['speedup_model = "table"', 'speedup_options = { table = "s.csv", class_rule = { field = "res" } }'],
     "speedup_options", "class_rule: expected an object with exactly the keys"),
    (['speedup_model = "table"', 'speedup_options = { table = "s.csv", colour = "red" }'], "speedup_options",
     "unknown option.s. colour"),
    (['speedup_model = "random"', 'speedup_options = { low = 2.0, high = 1.0 }'], "speedup_options",
     "0 < low <= high"),
    (['speedup_model = "random"', 'speedup_options = { seed = "x" }'], "speedup_options",
     "speedup model 'random': .*'x'"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_bad_keys_are_one_line_naming_the_key(tmp_path, lines, key, pattern):
    write_table(tmp_path / "s.csv")
    (tmp_path / "bad.csv").write_text("job_class,neighbour_class,speedup\ncompute,compute,1\ncompute,memory,fast\n")
    path = tmp_path / "c.toml"
    path.write_text(spec_text(*lines))
    one_line_error(path, key, pattern)


def test_a_speedup_model_is_refused_with_real_batsim(tmp_path):
    write_table(tmp_path / "s.csv")
    path = tmp_path / "c.toml"
    path.write_text(spec_text('speedup_model = "table"', 'speedup_options = { table = "s.csv" }',
                              campaign='engine = "batsim"', plain=False))
    one_line_error(path, "speedup_model", "extension of the embedded engine: real Batsim cannot apply them",
                   place="[[experiments]] #1")
    path.write_text(spec_text(campaign='engine = "batsim"', plain=False))  # without the keys: as before
    assert len(load_campaign(path).instances()) == 1


def test_slots_accept_a_speedup_model_as_the_run_does(tmp_path):
    """Job slots put several jobs on a node: the run accepts co-scheduling instead of compute sharing."""
    spec = load(tmp_path, spec_text('speedup_model = "none"', "scheduler_options = { slots = true }"))
    shared = spec.instances()[1]
    assert run_spec_of(task_for(shared, spec)).engine.shares_hosts
    path = tmp_path / "slots.toml"
    path.write_text(spec_text("scheduler_options = { slots = true }"))
    one_line_error(path, "compute_sharing", "scheduler option slots")


def test_an_instance_with_a_speedup_table_runs_through_the_worker(tmp_path, monkeypatch):
    """One instance of 20 KTH-SP2 jobs, run by the worker from the campaign root with the table written relative
    to it: its run.json records the model and the options as written."""
    from batreplay.campaign.platforms import prepare_platforms
    from batreplay.campaign.worker import execute

    write_table(tmp_path / "speedups.csv")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the worker goes to the root itself (monkeypatch restores the cwd)
    options = {"table": "speedups.csv", "class_rule": RULE}
    spec = load(tmp_path, spec_text('speedup_model = "table"',
                                    f'speedup_options = {{ table = "speedups.csv", class_rule = {RULE_TOML} }}',
                                    "compute_sharing = true", plain=False))
    (instance,) = spec.instances()
    prepare_platforms(spec, [instance])
    assert execute(task_for(instance, spec)) == 0
    run_dir = spec.output_root / instance.id
    recorded = json.loads((run_dir / "run.json").read_text())["spec"]
    assert recorded["speedup_model"] == "table" and recorded["speedup_options"] == options
    assert recorded["compute_sharing"] is True
    assert (run_dir / "out_jobs.csv").is_file()


def test_a_coscheduling_experiment_without_a_model_or_sharing_is_refused_at_load(tmp_path):
    """easy-coscheduling predicts speedups with a model and shares nodes: without a model anywhere, or sharing nodes
    without a speedup model or compute sharing, the file is refused before any instance runs."""
    def experiment(*lines: str) -> str:
        return spec_text(*lines).replace('name = "E"\nscheduler = "easy"', 'name = "E"\nscheduler = "easy-coscheduling"')

    with pytest.raises(CampaignSpecError, match=r"key 'speedup_model': scheduler easy-coscheduling predicts"):
        load(tmp_path, experiment())
    with pytest.raises(CampaignSpecError, match=r"key 'compute_sharing': scheduler easy-coscheduling puts several"):
        load(tmp_path, experiment('scheduler_options = { speedup_model = "none" }'))
    spec = load(tmp_path, experiment('scheduler_options = { speedup_model = "none" }', "compute_sharing = true"))
    assert len(spec.instances()) == 2
    write_table(tmp_path / "s.csv")
    spec = load(tmp_path, experiment('speedup_model = "table"',
                                     f'speedup_options = {{ table = "s.csv", class_rule = {RULE_TOML} }}'))
    run_spec = run_spec_of(task_for(spec.instances()[1], spec))
    assert run_spec.scheduler.options["speedup_model"] == "table"  # the engine's model, given to the scheduler


def test_the_scheduler_own_speedup_table_is_looked_for_under_the_root(tmp_path, monkeypatch):
    """easy-coscheduling's scheduler option speedup_options names a table relative to the campaign root (where
    instances run), not to the folder the campaign is loaded from."""
    write_table(tmp_path / "tables" / "s.csv")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    own = (f'scheduler_options = {{ speedup_model = "table", speedup_options = {{ table = "tables/s.csv", '
           f'class_rule = {RULE_TOML} }} }}')
    text = spec_text(own, "compute_sharing = true", campaign='root = ".."').replace(
        'name = "E"\nscheduler = "easy"', 'name = "E"\nscheduler = "easy-coscheduling"')
    spec = load(tmp_path / "expe", text)
    assert spec.instances()[1].params["scheduler_options"]["speedup_options"]["table"] == "tables/s.csv"
    read = {path.resolve() for what, path in spec.input_files()
            if what.endswith("scheduler_options speedup_options table")}
    assert read == {(tmp_path / "tables" / "s.csv").resolve()}  # among the files the campaign reads
    with pytest.raises(CampaignSpecError, match="no such file"):
        load(tmp_path / "expe", text.replace("tables/s.csv", "tables/missing.csv"))
