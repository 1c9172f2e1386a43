"""The training example end to end (slow): MaskablePPO learns on KTH-SP2 windows, is compared with FCFS, EASY and
EASY-SJF on held-out windows, and the trained model runs as ``--scheduler agent`` with the environment's decisions.

It needs the optional deep-learning stack (torch, stable-baselines3, sb3-contrib), which .ci/run installs for the
slow tests and sets ``BATREPLAY_REQUIRE_RL=1``: without the stack the test is skipped, or fails under that flag.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

from batreplay.gym.environment import SchedulingEnv
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from conftest import REPO_ROOT, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def example():
    """The example module (examples/ is not a package)."""
    if importlib.util.find_spec("sb3_contrib") is None:
        problem = "sb3-contrib is not installed (uv sync --extra rl, or pip: see examples/train_maskable_ppo.py)"
        if os.environ.get("BATREPLAY_REQUIRE_RL", "") not in ("", "0"):
            pytest.fail(f"BATREPLAY_REQUIRE_RL is set but {problem}")
        pytest.skip(problem)
    sys.path.insert(0, str(REPO_ROOT / "examples"))
    try:
        import train_maskable_ppo
    finally:
        sys.path.remove(str(REPO_ROOT / "examples"))
    return train_maskable_ppo


@pytest.mark.slow
def test_the_example_trains_compares_and_its_model_runs_as_a_scheduler(example, tmp_path, monkeypatch):
    out = tmp_path / "ppo"
    frame = example.main(["--workload", str(KTH), "--platform", "kth-sp2", "--out", str(out), "--timesteps", "3000",
                          "--windows", "2", "--jobs", "96", "--jobs-shown", "8"])
    assert sorted(set(frame["scheduler"])) == ["easy", "easy-sjf", "fcfs", "ppo"]
    assert len(frame) == 8 and frame["mean_bounded_slowdown"].ge(1.0).all()
    assert "| mean |" in (out / "comparison.md").read_text()
    agent = json.loads((out / "agent.json").read_text())
    assert agent["policy"] == "examples/ppo_policy.py:act" and agent["jobs_shown"] == 8

    monkeypatch.setenv("BATREPLAY_PPO_MODEL", str(out / "model.zip"))
    monkeypatch.chdir(REPO_ROOT)
    start = int(frame["window_start"].iloc[0])
    window = SchedulingEnv(KTH, "kth-sp2", jobs=96, agent={k: v for k, v in agent.items() if k != "policy"})
    sys.path.insert(0, str(REPO_ROOT / "examples"))
    try:
        import ppo_policy
    finally:
        sys.path.remove(str(REPO_ROOT / "examples"))
    example.play(window, ppo_policy.act, start)
    document = window.source.document
    (tmp_path / "window.json").write_text(json.dumps({**document, "jobs": document["jobs"][start:start + 96]}))
    run(RunSpec.build(workload=tmp_path / "window.json", platform="kth-sp2", scheduler="agent",
                      scheduler_options=agent, out_dir=tmp_path / "run"))
    assert (window.write_out_jobs(tmp_path / "env.csv").read_bytes()
            == (tmp_path / "run" / "out_jobs.csv").read_bytes())
