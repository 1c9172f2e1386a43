"""The environment makes a scheduler's decisions: a policy that always takes the first waiting job writes the
out_jobs.csv of fcfs / easy / sjf / easy-sjf, byte for byte, on the first 3,000 KTH-SP2 jobs and on golden cases
recorded from a real Batsim 4.2.1 with ``easy``."""

from __future__ import annotations

import json

import pytest

from batreplay.gym.environment import SchedulingEnv
from batreplay.run.runner import run
from batreplay.run.spec import RunSpec
from conftest import REPO_ROOT, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
GOLDEN = REPO_ROOT / "tests" / "golden"


def play_first_job(env: SchedulingEnv, **reset_options) -> tuple[int, float]:
    """Play one episode with the policy ``first``: the first waiting job when it fits, else wait; returns the
    number of steps and the last reward."""
    _observation, info = env.reset(seed=0, options=reset_options or None)
    wait = env.layout.jobs_shown
    steps, done, reward = 0, False, 0.0
    while not done:
        _observation, reward, terminated, truncated, info = env.step(0 if info["action_mask"][0] else wait)
        steps += 1
        done = terminated or truncated
        assert not truncated
    return steps, reward


@pytest.mark.parametrize(("scheduler", "agent"), [
    ("easy", {"backfilling": True}),
    ("fcfs", {}),
    ("easy-sjf", {"backfilling": True, "order": "sjf"}),
    ("sjf", {"order": "sjf"}),
])
def test_the_first_job_policy_writes_the_schedulers_out_jobs(tmp_path, scheduler, agent):
    run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler=scheduler, max_jobs=3000, out_dir=tmp_path / "run"))
    env = SchedulingEnv(KTH, "kth-sp2", jobs=3000, start=0, agent=agent)
    steps, _reward = play_first_job(env)
    assert steps >= 3000  # at least one step per job started
    written = env.write_out_jobs(tmp_path / "env.csv")
    assert written.read_bytes() == (tmp_path / "run" / "out_jobs.csv").read_bytes()


@pytest.mark.parametrize("case", ["composed-easy", "pfs-easy", "comm-backbone", "latency-contention"])
def test_the_first_job_policy_with_backfilling_writes_a_real_batsims_easy_out_jobs(tmp_path, case):
    folder = GOLDEN / case
    assert (folder / "scheduler.txt").read_text().split()[0] == "easy"
    jobs = len(json.loads((folder / "workload.json").read_text())["jobs"])
    env = SchedulingEnv(folder / "workload.json", folder / "platform.xml", jobs=jobs, start=0,
                        agent={"backfilling": True})
    play_first_job(env)
    assert env.write_out_jobs(tmp_path / "out_jobs.csv").read_bytes() == (folder / "out_jobs.csv").read_bytes()


def test_a_window_in_the_middle_of_the_log_is_that_windows_run(tmp_path):
    """A window keeps its jobs' recorded submission times: it is the run of a workload holding only those jobs."""
    env = SchedulingEnv(KTH, "kth-sp2", jobs=500, agent={"backfilling": True})
    play_first_job(env, start=10_000)
    document = env.source.document
    window = {**document, "jobs": document["jobs"][10_000:10_500]}
    (tmp_path / "window.json").write_text(json.dumps(window))
    run(RunSpec.build(workload=tmp_path / "window.json", platform="kth-sp2", scheduler="easy",
                      out_dir=tmp_path / "run"))
    assert env.write_out_jobs(tmp_path / "env.csv").read_bytes() == (tmp_path / "run" / "out_jobs.csv").read_bytes()


def test_with_feedback_users_the_first_job_policy_writes_easys_out_jobs(tmp_path):
    """The user model is the run's: the feedback broker around the agent, jobs registered as users submit them."""
    run(RunSpec.build(workload=KTH, platform="kth-sp2", scheduler="easy", max_jobs=2000, replay="feedback",
                      sessions="arrival:60", out_dir=tmp_path / "run"))
    env = SchedulingEnv(KTH, "kth-sp2", jobs=2000, start=0, agent={"backfilling": True}, replay="feedback",
                        sessions="arrival:60")
    play_first_job(env)
    assert env.write_out_jobs(tmp_path / "env.csv").read_bytes() == (tmp_path / "run" / "out_jobs.csv").read_bytes()
    assert ",dyn," in (tmp_path / "env.csv").read_text()  # the jobs came through dynamic registration (workload dyn)
