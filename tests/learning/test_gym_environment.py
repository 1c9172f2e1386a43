"""The Gymnasium environment as a learner uses it: its API and checker, registration, vectorisation, seeding,
option errors at construction, observations, masks, rewards, and the invariants of any policy's episode."""

from __future__ import annotations

import math

import gymnasium
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

import batreplay.gym
from batreplay.analysis.metrics import summarize
from batreplay.formats.out_jobs import read_out_jobs
from batreplay.gym.environment import SchedulingEnv
from batreplay.options import OptionError
from conftest import REPO_ROOT, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def env() -> SchedulingEnv:
    """A 100-job KTH-SP2 environment, read once for the module (each test resets it)."""
    return SchedulingEnv(KTH, "kth-sp2", jobs=100)


@pytest.fixture(scope="module")
def backfilling_env() -> SchedulingEnv:
    """The same, EASY backfilling after the agent's choices."""
    return SchedulingEnv(KTH, "kth-sp2", jobs=100, agent={"backfilling": True})


def test_the_environment_passes_gymnasiums_checker(env):
    check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (4 * 16 + 2 * 16 + 2 + 17,)
    assert env.action_space.n == 17


def test_it_is_registered_and_made_by_its_name():
    made = gymnasium.make(batreplay.gym.ENV_ID, workload=KTH, platform="kth-sp2", jobs=50,
                          agent={"jobs_shown": 4})
    observation, info = made.reset(seed=1)
    assert isinstance(made.unwrapped, SchedulingEnv)
    assert observation.shape == (4 * 4 + 2 * 16 + 2 + 5,)
    assert made.action_space.n == 5
    made.close()


def test_vectorised_environments_step_independent_episodes():
    envs = gymnasium.make_vec(batreplay.gym.ENV_ID, num_envs=2, vectorization_mode="sync", workload=KTH,
                              platform="kth-sp2", jobs=30)
    observations, infos = envs.reset(seed=5)
    assert observations.shape == (2, 115)
    assert infos["window"][0] != infos["window"][1]  # each sub-environment draws its own window
    ended = np.zeros(2, dtype=bool)
    for _ in range(500):
        actions = np.where(infos["action_mask"][:, 0], 0, 16)
        observations, rewards, terminated, truncated, infos = envs.step(actions)
        ended |= terminated
        if ended.all():
            break
    assert ended.all()
    envs.close()


def test_asynchronous_vector_environments_run_in_processes_and_reset_after_an_episode():
    envs = gymnasium.make_vec(batreplay.gym.ENV_ID, num_envs=2, vectorization_mode="async", workload=KTH,
                              platform="kth-sp2", jobs=20)
    _observations, infos = envs.reset(seed=7)
    windows = [tuple(window) for window in infos["window"]]
    ended = np.zeros(2, dtype=int)
    just_ended = np.zeros(2, dtype=bool)
    for _ in range(400):
        actions = np.where(infos["action_mask"][:, 0], 0, 16)
        _observations, _rewards, terminated, truncated, infos = envs.step(actions)
        for index in np.flatnonzero(just_ended):  # the step after an end reset that sub-environment (autoreset)
            assert infos["steps"][index] == 0 and tuple(infos["window"][index]) != windows[index]
        just_ended = terminated | truncated
        ended += just_ended
        if (ended >= 2).all():
            break
    assert (ended >= 2).all()
    envs.close()


def test_reset_gives_the_user_models_notes():
    feedback = SchedulingEnv(KTH, "kth-sp2", jobs=200, replay="feedback")
    _observation, info = feedback.reset(options={"start": 0})
    assert info["notes"] and all(isinstance(line, str) and "\n" not in line for line in info["notes"])
    assert "notes" not in feedback.step(0)[-1]


def test_a_seed_gives_the_same_episode(env):
    first, info = env.reset(seed=11)
    window = info["window"]
    observations = [first]
    for _ in range(20):
        observations.append(env.step(0 if info["action_mask"][0] else 16)[0])
    again, info = env.reset(seed=11)
    assert info["window"] == window
    replayed = [again]
    for _ in range(20):
        replayed.append(env.step(0 if info["action_mask"][0] else 16)[0])
    assert all(np.array_equal(a, b) for a, b in zip(observations, replayed))
    assert env.reset(seed=12)[1]["window"] != window


def test_reset_options_choose_the_window(env):
    _observation, info = env.reset(options={"start": 250, "jobs": 40})
    assert info["window"] == (250, 40)
    with pytest.raises(ValueError, match="unknown length"):
        env.reset(options={"length": 3})
    with pytest.raises(OptionError, match="28,467 jobs to simulate"):
        env.reset(options={"start": 28_450, "jobs": 40})


@pytest.mark.parametrize(("arguments", "message"), [
    ({"workload": "no-such-log.swf"}, "no-such-log.swf"),
    ({"platform": "no-such-platform"}, "platform no-such-platform: no such file"),
    ({"agent": {"jobs_shown": 0}}, "jobs_shown must be an integer >= 1"),
    ({"agent": {"order": "random"}}, "order must be one of"),
    ({"agent": {"policy": "first"}}, "agent's actions are the policy"),
    ({"agent": {"colour": 1}}, "unknown option 'colour'"),
    ({"reward": "makespan"}, "reward"),
    ({"reward_timing": "sometimes"}, "reward_timing"),
    ({"jobs": 0}, "jobs"),
    ({"jobs": 30_000}, "28,467 jobs to simulate"),
    ({"start": 28_460}, "28,467 jobs to simulate"),
    ({"walltime_factor": -1}, "walltime-factor"),
    ({"colour": "red"}, "unknown run option"),
    ({"engine": "batsim"}, "run option engine: not an option of the environment"),
    ({"warm_up": 3600}, "run option warm_up: not an option of the environment"),
    ({"out_dir": "x"}, "run option out_dir: not an option of the environment"),
    ({"replay": "open", "open_jobs": 50}, "replay open: its jobs are drawn from a site model"),
    ({"workload": REPO_ROOT / "tests" / "golden" / "pfs-easy" / "workload.json", "replay": "feedback"},
     "replay feedback: .*needs an SWF log"),
])
def test_bad_options_are_one_line_errors_at_construction(arguments, message):
    given_arguments = {"workload": KTH, "platform": "kth-sp2", "jobs": 100, **arguments}
    with pytest.raises(ValueError, match=message) as error:
        SchedulingEnv(**given_arguments)
    assert "\n" not in str(error.value)


def test_the_observation_shows_the_waiting_jobs_and_the_platform(env):
    observation, info = env.reset(options={"start": 0, "jobs": 100})
    blocks = env.layout.slices()
    job = env.source.document["jobs"][0]
    jobs = observation[blocks["jobs"]].reshape(16, 4)
    assert jobs[0].tolist() == pytest.approx([1.0, job["res"] / 100, job["walltime"] / (job["walltime"] + 3600), 0.0])
    assert not jobs[1:].any()  # one job waits
    assert observation[blocks["platform"]].tolist() == [1.0, 0.0]  # every node free, no more waiting
    assert not observation[blocks["running"]].any()
    mask = observation[blocks["action_mask"]]
    assert mask.tolist() == info["action_mask"].astype(float).tolist()
    assert info["action_mask"].tolist() == [True] + [False] * 16  # no waiting on an idle platform
    observation, *_rest, info = env.step(0)
    running = observation[blocks["running"]].reshape(16, 2)
    assert running[0, 0] == pytest.approx(job["res"] / 100)


def test_an_action_the_mask_forbids_is_replaced_and_counted(env):
    _observation, info = env.reset(options={"start": 0, "jobs": 100})
    assert not info["action_mask"][16]
    _observation, _reward, _terminated, _truncated, info = env.step(16)  # wait on an idle platform
    assert info["invalid_actions"] == 1
    assert info["running"] == 1  # the first job was started instead
    for bad in (17, 0.7, True, "0"):
        with pytest.raises(ValueError, match="is not an integer from 0 to 16"):
            env.step(bad)
    env.step(np.array([0]))  # what a model's predict() gives


@pytest.mark.parametrize(("reward", "metric", "factor"), [("bounded-slowdown", "mean_bounded_slowdown", -1.0),
                                                       ("waiting-time", "mean_waiting_time", -1 / 3600)])
def test_the_end_reward_is_the_metric_of_the_written_out_jobs(tmp_path, reward, metric, factor):
    ended = SchedulingEnv(KTH, "kth-sp2", jobs=100, reward=reward)
    rewards = play_randomly(ended, np.random.default_rng(3), start=400)
    assert rewards[:-1] == [0.0] * (len(rewards) - 1)
    jobs = read_out_jobs(ended.write_out_jobs(tmp_path / "out_jobs.csv"))
    pd.testing.assert_frame_equal(ended.episode_rows(), jobs)  # the rows in memory are the file's, read back
    assert rewards[-1] == pytest.approx(summarize(jobs, nb_resources=100)[metric] * factor, rel=1e-12)
    assert rewards[-1] < 0


@pytest.mark.parametrize(("reward", "metric", "factor"), [("bounded-slowdown", "mean_bounded_slowdown", -1.0),
                                                       ("waiting-time", "mean_waiting_time", -1 / 3600),
                                                       ("utilisation", "utilisation", 1.0)])
def test_shaped_rewards_follow_the_metric_of_the_jobs_ended_so_far(reward, metric, factor):
    shaped = SchedulingEnv(KTH, "kth-sp2", jobs=150, reward=reward, reward_timing="step")
    rng = np.random.default_rng(4)
    _observation, info = shaped.reset(options={"start": 1000})
    rewards, done, given = [], False, 0
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _observation, reward_value, terminated, truncated, info = shaped.step(action)
        rewards.append(reward_value)
        done = terminated or truncated
        rows = shaped.episode_rows()
        if len(rows) and not done:  # phi after this step: the metric over the jobs ended so far
            given += reward_value != 0
            phi = summarize(rows, nb_resources=100)[metric] * factor
            assert math.fsum(rewards) == pytest.approx(phi, rel=1e-6, abs=1e-6)
    assert given > 10  # given along the way
    assert math.fsum(rewards) == pytest.approx(summarize(shaped.episode_rows(), nb_resources=100)[metric] * factor,
                                               rel=1e-12, abs=1e-12)


def test_a_callable_reward_gets_the_out_jobs_rows():
    seen = []

    def reward(rows):
        seen.append(len(rows))
        return float((rows["final_state"] == "COMPLETED_SUCCESSFULLY").sum())

    custom = SchedulingEnv(KTH, "kth-sp2", jobs=60, reward=reward, reward_timing="step")
    rewards = play_randomly(custom, np.random.default_rng(5), start=2000)
    assert seen[-1] == 60 and seen == sorted(seen)
    assert math.fsum(rewards) == pytest.approx(reward(custom.episode_rows()))


def test_max_steps_truncates_the_episode():
    short = SchedulingEnv(KTH, "kth-sp2", jobs=200, max_steps=25)
    _observation, info = short.reset(seed=2)
    for step in range(25):
        _observation, reward, terminated, truncated, info = short.step(0 if info["action_mask"][0] else 16)
    assert truncated and not terminated
    assert info["waiting"] + info["running"] > 0 and _observation[0] == 1.0  # the state it stopped in: a job waits
    with pytest.raises(RuntimeError, match="call reset"):
        short.step(0)


def play_randomly(env: SchedulingEnv, rng: np.random.Generator, start: int, invalid_share: float = 0.0
                  ) -> list[float]:
    """One episode of random actions (allowed ones, or any with probability ``invalid_share``); the rewards."""
    _observation, info = env.reset(options={"start": start})
    rewards, done = [], False
    while not done:
        mask = info["action_mask"]
        if rng.random() < invalid_share:
            action = int(rng.integers(0, len(mask)))
        else:
            action = int(rng.choice(np.flatnonzero(mask)))
        _observation, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        done = terminated or truncated
    return rewards


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), start=st.integers(0, 28_000), invalid_share=st.sampled_from([0.0, 0.3]),
       backfilling=st.booleans())
def test_any_policy_ends_every_job_once_without_overusing_nodes(env, backfilling_env, seed, start, invalid_share,
                                                                backfilling):
    env = backfilling_env if backfilling else env
    times = []
    rng = np.random.default_rng(seed)
    _observation, info = env.reset(options={"start": start})
    done = False
    while not done:
        mask = info["action_mask"]
        action = (int(rng.integers(0, len(mask))) if rng.random() < invalid_share
                  else int(rng.choice(np.flatnonzero(mask))))
        _observation, _reward, terminated, truncated, info = env.step(action)
        times.append(info["time"])
        done = terminated or truncated
    assert terminated and times == sorted(times)  # time never goes back
    jobs = env.episode_rows()
    ids = env.source.document["jobs"][start:start + 100]
    assert sorted(jobs["job_id"].astype(int)) == sorted(int(job["id"]) for job in ids)  # every job ends, once
    ran = jobs[jobs["final_state"] != "REJECTED"]
    events = sorted([(row.starting_time, 1, ProcSet.from_str(row.allocated_resources)) for row in ran.itertuples()]
                    + [(row.finish_time, 0, ProcSet.from_str(row.allocated_resources)) for row in ran.itertuples()],
                    key=lambda event: event[:2])
    busy = ProcSet()
    for _time, starts, nodes in events:  # ends before starts at one instant
        if starts:
            assert not busy & nodes, "a node given to two jobs at once"
            busy |= nodes
        else:
            busy -= nodes
    assert (ran["starting_time"] >= ran["submission_time"]).all()


def test_no_folder_of_the_repository_shadows_the_legacy_gym_package():
    """``import gym`` (which stable-baselines3 tries) must not find a folder of ours: the repository root and tests/
    are on sys.path when the tests or the examples run."""
    for folder in (REPO_ROOT, REPO_ROOT / "tests", REPO_ROOT / "examples"):
        assert not (folder / "gym").exists() and not (folder / "gym.py").exists()
