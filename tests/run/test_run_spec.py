"""The one run description (:mod:`batreplay.run.spec`): built from flat options, serialised, read back, and the
same one behind the command line and campaign instances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batreplay.run.spec import FLAT_FIELDS, RunSpec, RunSpecError, part_defaults, run_option
from batreplay.workloads.loading import PROFILE_TYPES

flat_options = st.fixed_dictionaries({
    "workload": st.sampled_from(["../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz", "w.json"]),
    "platform": st.sampled_from(["kth-sp2", "platforms/x.xml"]),
    "scheduler": st.sampled_from(["easy", "fcfs", "conservative", "my/sched.py"]),
    "out_dir": st.sampled_from(["runs/a", "/tmp/b"]),
}, optional={
    "profile": st.sampled_from(PROFILE_TYPES),
    "recorded_speed": st.floats(min_value=1.0, max_value=1e12),
    "max_jobs": st.none() | st.integers(min_value=1, max_value=10**6),
    "walltime_factor": st.none() | st.floats(min_value=0.5, max_value=10.0),
    "zero_runtime": st.sampled_from(["drop", "min"]),
    "res_source": st.sampled_from(["allocated", "requested"]),
    "scheduler_options": st.dictionaries(st.sampled_from(["a", "b"]), st.integers() | st.text(max_size=3)),
    "replay": st.sampled_from(["rigid", "feedback"]),
    "sessions": st.sampled_from(["arrival:60", "a0", "l30", "m60"]),
    "engine": st.sampled_from(["embedded", "batsim"]),
    "batsim_timeout": st.floats(min_value=1.0, max_value=1e4),
    "compute_sharing": st.booleans(),
    "force": st.booleans(),
    "timeout": st.none() | st.floats(min_value=0.1, max_value=1e5),
    "label": st.none() | st.text(st.characters(categories=("L", "N", "P", "S", "Zs")), min_size=1,
                                 max_size=120).map(str.strip).filter(bool),
})


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # no dependence on the machine's speed
@given(flat_options)
def test_serialised_form_reads_back_to_the_same_run(options):
    if options.get("replay", "rigid") == "rigid":
        options.pop("sessions", None)  # refused with a model that uses no sessions (tested below)
    spec = RunSpec.build(**options)
    document = json.loads(json.dumps(spec.to_dict()))  # JSON types only
    assert RunSpec.from_dict(document) == spec
    for key, value in options.items():
        if key == "sessions" and not spec.replay.applies_sessions:
            assert "sessions" not in document  # a rigid replay records no sessions
            continue
        declaration = run_option(key)
        if not declaration.is_recorded(value, "off"):  # declared recorded="when-set", and off
            assert key not in document, key
            assert declaration.recorded == "when-set" and value in (None, False, {})
            continue
        expected = str(Path(value)) if key in ("workload", "out_dir") else value
        assert document[key] == expected, key


def test_defaults_live_in_the_parts():
    spec = RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out")
    defaults = part_defaults()
    assert defaults["profile"] == spec.conversion.profile == "parallel_homogeneous"
    assert defaults["sessions"] is spec.replay.sessions is None  # rigid: none; feedback: arrival:60
    assert spec.replace(replay="feedback").replay.sessions == "arrival:60"
    assert defaults["replay"] == spec.replay.model == "rigid"
    assert defaults["engine"] == spec.engine.name == "embedded"
    assert defaults["compute_sharing"] is spec.engine.compute_sharing is False
    # what does not apply is not recorded: the sessions of a rigid replay, compute sharing when off, no speedup model
    # (site models' replays only; a warm-up when one is given)
    closed = {"population", "closed_jobs", "closed_duration", "open_jobs", "open_duration", "model_seed", "warm_up"}
    assert set(spec.to_dict()) == {"workload", "platform", "out_dir", "force", "timeout", *FLAT_FIELDS} - {
        "sessions", "compute_sharing", "speedup_model", "speedup_options", "demand_rounds", "io_share",
        "reference_io_rate", "overheads", "overhead_seed"} - closed
    feedback = spec.replace(replay="feedback", compute_sharing=True, speedup_model="random",
                            speedup_options={"seed": 2}, zero_runtime="min", res_source="requested")
    rounds = {"demand_rounds", "io_share", "reference_io_rate", "overheads", "overhead_seed"}  # (rigid replay only)
    assert set(feedback.to_dict()) == {"workload", "platform", "out_dir", "force", "timeout", *FLAT_FIELDS} - rounds - (
        closed)
    closed_run = spec.replace(replay="closed", closed_jobs=5, closed_duration=9.0, model_seed=1, warm_up=60)
    assert closed - {"open_jobs", "open_duration"} <= set(closed_run.to_dict())
    assert {"open_jobs", "model_seed"} <= set(spec.replace(replay="open", open_jobs=5, model_seed=1).to_dict())
    # another model drops the options it does not read (as the sessions), unless they are given again
    opened = closed_run.replace(replay="open", open_jobs=5)
    assert (opened.replay.model, opened.replay.open_jobs, opened.replay.model_seed, opened.replay.closed_jobs) == (
        "open", 5, 1, None)
    assert closed_run.replace(replay="rigid").replay == spec.replay
    with pytest.raises(RunSpecError, match="--closed-jobs: an option of --replay closed"):
        closed_run.replace(replay="open", open_jobs=5, closed_jobs=3)
    assert {"demand_rounds", "io_share", "reference_io_rate"} <= set(spec.replace(demand_rounds=2).to_dict())
    assert {"overheads", "overhead_seed"} <= set(spec.replace(overheads=10.0).to_dict())
    again = RunSpec.from_dict(feedback.to_dict()).engine
    assert (again.compute_sharing, again.speedup_model, again.speedup_options) == (True, "random", {"seed": 2})


def test_speedup_models_are_for_the_embedded_engine_only():
    with pytest.raises(RunSpecError, match="extension of the embedded engine"):
        RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out", engine="batsim",
                      speedup_model="none")
    with pytest.raises(RunSpecError, match=r"speedup_model \(--speedup-model\) 'fast': expected one of none"):
        RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out", speedup_model="fast")
    with pytest.raises(RunSpecError, match="without a speedup model"):
        RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out",
                      speedup_options={"seed": 1})


def test_a_rigid_replay_records_no_sessions_and_refuses_them():
    """Issue 25, item 5: sessions given to a model that uses none were silently ignored and not recorded."""
    for given in ("last:30", "garbage:::", "arrival:60"):
        with pytest.raises(RunSpecError, match=rf"--sessions '{given}': the user model 'rigid' \(--replay\) uses no "
                                               "sessions; leave --sessions out"):
            RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out", sessions=given)
    rigid = RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out")
    assert "sessions" not in rigid.to_dict()
    feedback = rigid.replace(replay="feedback", sessions="last:30")
    assert feedback.to_dict()["sessions"] == "last:30"
    assert feedback.replace(replay="rigid") == rigid  # the sessions it no longer uses are dropped
    with pytest.raises(RunSpecError, match="--sessions"):
        feedback.replace(replay="feedback", sessions="garbage:::")


def test_zero_runtime_is_a_run_option_checked_by_its_part():
    spec = RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out", zero_runtime="min")
    assert spec.conversion.zero_runtime == "min" and spec.to_dict()["zero_runtime"] == "min"
    assert part_defaults()["zero_runtime"] == "drop"
    with pytest.raises(RunSpecError, match="--zero-runtime"):
        spec.replace(zero_runtime="keep")


@pytest.mark.parametrize(("options", "named"), [
    ({"max_jobs": 0}, "--max-jobs"),
    ({"profile": "linear"}, "--profile"),
    ({"replay": "eager"}, "eager"),
    ({"engine": "simgrid"}, "simgrid"),
    ({"timeout": -1}, "--timeout"),
    ({"walltime_factr": 2}, "walltime_factr"),
])
def test_bad_values_are_refused_naming_the_option(options, named):
    with pytest.raises(RunSpecError, match=named):
        RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out", **options)


def test_replace_changes_only_what_it_names():
    spec = RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out", replay="feedback",
                         sessions="a0")
    other = spec.replace(max_jobs=10)
    assert other.conversion.max_jobs == 10 and other.replay == spec.replay and other.scheduler == spec.scheduler


def test_a_campaign_instance_runs_the_run_its_parameters_describe(tmp_path):
    """The campaign worker builds its RunSpec from the instance's parameters: every run option a campaign sets
    reaches the run, named as in the serialised form."""
    from conftest import REPO_ROOT

    from batreplay.campaign.spec import load_campaign
    from batreplay.campaign.worker import run_spec_of, task_for

    campaign = load_campaign(REPO_ROOT / "expe" / "quick.toml", output_root=tmp_path)
    recorded = [i for i in campaign.instances() if i.experiment.variant.is_recorded]
    assert {i.replay.label for i in recorded} == {"rigid", "a60"}
    for instance in recorded:
        spec = run_spec_of(task_for(instance, campaign)).to_dict()
        shared = set(instance.params) & set(FLAT_FIELDS)
        assert shared >= {"profile", "recorded_speed", "max_jobs", "walltime_factor", "scheduler",
                          "scheduler_options", "replay", "sessions", "engine"}
        for key in shared - {"sessions"}:
            assert spec[key] == instance.params[key], key
        if instance.replay.label == "rigid":
            assert "sessions" not in spec
        else:
            assert spec["sessions"] == (instance.params["sessions"] or part_defaults()["sessions"])
        assert spec["out_dir"] == str(tmp_path / instance.id) and spec["force"] is True


def test_job_slots_need_compute_sharing():
    with pytest.raises(RunSpecError, match="scheduler option slots.*needs compute sharing"):
        RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out",
                      scheduler_options={"slots": True})
    spec = RunSpec.build(workload="w.swf", platform="kth-sp2", scheduler="easy", out_dir="out",
                         scheduler_options={"slots": True}, compute_sharing=True)
    assert spec.scheduler.options == {"slots": True}
