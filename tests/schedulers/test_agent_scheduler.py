"""The scheduler that runs a policy (``--scheduler agent``): built-in and file policies, the same decisions as the
Gymnasium environment, on the embedded engine (direct driver) and next to a real Batsim 4.2.1 (live comparison)."""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest

from batreplay.gym.environment import SchedulingEnv
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from batreplay.schedulers.agent import action_index, first_fitting_job, first_waiting_job, load_policy
from batreplay.schedulers.observation import ObservationLayout, scaled
from batreplay.schedulers.registry import load_scheduler
from conftest import REPO_ROOT, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
POLICY = REPO_ROOT / "tests" / "learning" / "policies" / "shortest_fitting.py"
CHOICE = f"{POLICY}:choose"


def play(env: SchedulingEnv, policy, start: int) -> None:
    """One episode of ``env`` from ``start`` with ``policy(observation, mask)``."""
    observation, info = env.reset(options={"start": start})
    done = False
    while not done:
        observation, _reward, terminated, truncated, info = env.step(policy(observation, info["action_mask"]))
        done = terminated or truncated


def test_a_policy_file_makes_the_same_decisions_as_a_scheduler_and_in_the_environment(tmp_path):
    run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="agent", max_jobs=2000, out_dir=tmp_path / "run",
                      scheduler_options={"policy": CHOICE, "backfilling": True}))
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["decision_driver"] == "direct"
    env = SchedulingEnv(KTH, "kth-sp2", jobs=2000, agent={"backfilling": True})
    play(env, load_policy(CHOICE), start=0)
    ours = env.write_out_jobs(tmp_path / "env.csv").read_bytes()
    assert ours == (tmp_path / "run" / "out_jobs.csv").read_bytes()
    easy = tmp_path / "easy"
    run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", max_jobs=2000, out_dir=easy))
    assert ours != (easy / "out_jobs.csv").read_bytes()  # the policy decided something else than EASY


@pytest.mark.slow
def test_a_policy_runs_next_to_a_real_batsim_with_the_embedded_engines_out_jobs(real_batsim, tmp_path):
    spec = dict(workload=KTH, platform="kth-sp2", scheduler="agent", max_jobs=3000,
                scheduler_options={"policy": CHOICE, "order": "saf", "backfilling": True, "jobs_shown": 8})
    run(RunSpec.build(out_dir=tmp_path / "embedded", **spec))
    run(RunSpec.build(out_dir=tmp_path / "real", engine="batsim", batsim=real_batsim, **spec))
    assert json.loads((tmp_path / "real" / "run.json").read_text())["decision_driver"] == "zeromq"
    embedded = (tmp_path / "embedded" / "out_jobs.csv").read_bytes()
    assert embedded == (tmp_path / "real" / "out_jobs.csv").read_bytes()  # byte for byte


def test_built_in_policies():
    mask = np.array([False, True, True, False, True])
    assert first_waiting_job(None, mask) == 4 and first_fitting_job(None, mask) == 1
    assert first_waiting_job(None, np.array([True, False, True])) == 0
    assert first_fitting_job(None, np.array([False, False, True])) == 2
    assert load_policy("first") is first_waiting_job and load_policy(first_fitting_job) is first_fitting_job


@pytest.mark.parametrize(("policy", "message"), [
    ("missing.py:choose", "policy file not found: missing.py"),
    (f"{POLICY}:absent", "has no callable named 'absent'"),
    ("no_such_module_xyz:choose", "ModuleNotFoundError"),
    ("last", "must be one of first, first-fit or module:name"),
])
def test_a_policy_that_cannot_be_loaded_is_one_line_naming_the_option(policy, message):
    with pytest.raises(ValueError, match=message) as error:
        load_scheduler("agent", {"policy": policy})
    assert "option policy" in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(("answer", "shown"), [("'soon'", "'soon'"), ("0.7", "0.7"), ("True", "True"), ("17", "17")])
def test_a_policy_answering_no_action_fails_the_run_naming_its_answer(tmp_path, answer, shown):
    bad = tmp_path / "bad.py"
    bad.write_text(f"def choose(observation, mask):\n    return {answer}\n")
    with pytest.raises(Exception, match=f"the policy answered: the action {shown} is not an integer from 0 to 16"):
        run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="agent", max_jobs=50, out_dir=tmp_path / "run",
                          scheduler_options={"policy": f"{bad}:choose"}))
    assert not (tmp_path / "run").exists()


def test_actions_are_integers_or_arrays_of_one():
    assert action_index(np.int64(3), 5) == 3 and action_index(np.array([4]), 5) == 4 and action_index(2, 5) == 2
    for bad in (0.0, True, np.array([1, 2]), "1", None, -1, 5):
        with pytest.raises(ValueError, match="is not an integer from 0 to 4"):
            action_index(bad, 5)


def test_a_policy_file_may_hold_dataclasses_and_an_importable_module_may_be_named(tmp_path):
    policy = tmp_path / "with_dataclass.py"
    policy.write_text("from __future__ import annotations\nfrom dataclasses import dataclass\n\n"
                      "@dataclass\nclass Rule:\n    wait: int\n\n"
                      "def choose(observation, mask):\n    return Rule(len(mask) - 1).wait\n")
    assert load_policy(f"{policy}:choose")(None, np.ones(3, dtype=bool)) == 2
    assert load_policy("batreplay.schedulers.agent:first_fitting_job") is first_fitting_job
    exits = tmp_path / "exits.py"
    exits.write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(ValueError, match=r"option policy .*exits\.py.*line 2"):
        load_policy(f"{exits}:choose")


def test_forbidden_actions_are_counted_and_reported(tmp_path, caplog):
    waiter = tmp_path / "waiter.py"
    waiter.write_text("def choose(observation, mask):\n    return len(mask) - 1\n")  # always wait
    with caplog.at_level(logging.WARNING, logger="batreplay.schedulers.agent"):
        run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="agent", max_jobs=50, out_dir=tmp_path / "run",
                          scheduler_options={"policy": f"{waiter}:choose"}))
    warnings = [record.getMessage() for record in caplog.records if record.name == "batreplay.schedulers.agent"]
    assert len(warnings) == 1 and "mask forbade" in warnings[0]
    with open(tmp_path / "run" / "out_jobs.csv") as lines:
        assert sum(1 for _ in lines) == 51  # every job ran: waits on an idle platform became starts


def test_the_observation_layout_by_hand():
    layout = ObservationLayout(jobs_shown=2, running_shown=1, time_scale=100.0)
    assert layout.size == 2 * 4 + 1 * 2 + 2 + 3
    from batreplay.schedulers.policy import QueuedJob

    queue = [QueuedJob("w0!1", 3, 100.0), QueuedJob("w0!2", 10, None), QueuedJob("w0!3", 1, 5.0)]
    mask = np.array([True, False, True])
    values = layout.encode(queue, {"w0!1": 50.0, "w0!2": 0.0, "w0!3": 0.0}, [(400.0, 0, 5)], free=5, total=10,
                           now=100.0, mask=mask)
    assert values.dtype == np.float32
    assert values.tolist() == pytest.approx([1, 0.3, 0.5, 50 / 150, 1, 1.0, 1.0, 0.5,  # two jobs shown
                                             0.5, 300 / 400,  # the running job: 5 nodes, 300 s to go
                                             0.5, 1 / 3,  # free nodes, one more waiting
                                             1, 0, 1])
    slices = layout.slices()
    assert [slices[name].stop - slices[name].start for name in ("jobs", "running", "platform", "action_mask")] == [
        8, 2, 2, 3]
    assert scaled(-5, 10) == 0.0 and scaled(math.inf, 10) == 1.0 and scaled(10, 10) == 0.5
