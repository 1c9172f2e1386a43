"""Train a learning scheduler on a real log and compare it with FCFS, EASY and EASY-SJF on held-out windows.

The agent is sb3-contrib's ``MaskablePPO`` (PPO that samples only the actions the mask allows) on
``batreplay/Scheduling-v0``. Training episodes are windows drawn from the first part of the log
(``--train-share``); the comparison uses windows from the rest, never seen in training, each scheduled by the
trained policy (deterministic) and by FCFS, EASY and EASY-SJF. The baselines run in the same environment with the
policy ``first`` (the first waiting job when it fits), which makes exactly the decisions of ``--scheduler fcfs``,
``easy`` and ``easy-sjf`` (tests/learning/test_gym_semantics.py compares their out_jobs.csv byte for byte).

Needs the deep-learning stack, an optional extra (never a core dependency): ``uv sync --extra rl`` (PyTorch from
PyPI, a CUDA build of about 3 GB on Linux), or, into the project's environment, PyTorch's CPU build and the two
libraries with pip. Then:

    uv run python examples/train_maskable_ppo.py --workload ../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz \
        --platform kth-sp2 --out runs/ppo-kth

writes into ``--out``: ``model.zip`` (the policy), ``agent.json`` (the scheduler options it was trained with),
``comparison.csv`` (one row per held-out window and scheduler) and ``comparison.md`` (the table, with means), and
prints the ``batreplay run`` command that runs the trained policy as a scheduler (``examples/ppo_policy.py``), on
the embedded engine or, with ``--engine batsim``, next to a real Batsim.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import gymnasium
import numpy as np
import pandas as pd

from batreplay.analysis.metrics import summarize
from batreplay.gym.environment import SchedulingEnv
from batreplay.schedulers.agent import first_waiting_job

#: The baselines: name -> the agent's options with which the policy ``first`` is that scheduler.
BASELINES = {"fcfs": {}, "easy": {"backfilling": True}, "easy-sjf": {"backfilling": True, "order": "sjf"}}


class TrainingWindows(gymnasium.Wrapper):
    """Episodes whose windows start in ``[0, last_start]`` (the training part of the log), drawn with a generator
    seeded by ``seed`` (and anew by a reset's seed)."""

    def __init__(self, env: SchedulingEnv, last_start: int, seed: int) -> None:
        super().__init__(env)
        self.last_start = last_start
        self.rng = np.random.default_rng(seed)

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        start = int(self.rng.integers(0, self.last_start + 1))
        return self.env.reset(seed=seed, options={"start": start})

    def action_masks(self) -> np.ndarray:
        """The mask, for MaskablePPO."""
        return self.env.unwrapped.action_masks()


def play(env: SchedulingEnv, choose, start: int) -> dict[str, float]:
    """One episode from ``start`` with ``choose(observation, mask)``; its mean bounded slowdown, mean waiting time
    (s) and utilisation, from its out_jobs rows."""
    observation, info = env.reset(options={"start": start})
    done = False
    while not done:
        observation, _reward, terminated, truncated, info = env.step(choose(observation, info["action_mask"]))
        done = terminated or truncated
    metrics = summarize(env.episode_rows(), nb_resources=env.source.nb_resources)
    return {name: float(metrics[name]) for name in ("mean_bounded_slowdown", "mean_waiting_time", "utilisation")}


def held_out_starts(size: int, jobs: int, first: int, count: int) -> list[int]:
    """``count`` window starts spread evenly over ``[first, size - jobs]``."""
    return [int(value) for value in np.linspace(first, size - jobs, count)]


def compare(args: argparse.Namespace, agent: dict, model, starts: list[int]) -> pd.DataFrame:
    """The table of every held-out window under the trained policy and the baselines."""
    rows = []
    env = SchedulingEnv(args.workload, args.platform, jobs=args.jobs, agent=agent)
    for start in starts:
        trained = play(env, lambda observation, mask: int(model.predict(observation, action_masks=mask,
                                                                        deterministic=True)[0]), start)
        rows.append({"window_start": start, "scheduler": "ppo", **trained})
    for name, options in BASELINES.items():
        baseline = SchedulingEnv(args.workload, args.platform, jobs=args.jobs,
                                 agent={**{key: agent[key] for key in ("jobs_shown", "running_shown")}, **options})
        for start in starts:
            rows.append({"window_start": start, "scheduler": name, **play(baseline, first_waiting_job, start)})
    return pd.DataFrame(rows)


def table(frame: pd.DataFrame) -> str:
    """The comparison as Markdown: mean bounded slowdown per window and scheduler, then the means."""
    pivot = frame.pivot(index="window_start", columns="scheduler", values="mean_bounded_slowdown")
    pivot = pivot[["ppo", *BASELINES]]
    lines = ["| window start (job) | " + " | ".join(pivot.columns) + " |", "|---" * (len(pivot.columns) + 1) + "|"]
    for start, values in pivot.iterrows():
        lines.append(f"| {start:,} | " + " | ".join(f"{value:.2f}" for value in values) + " |")
    lines.append("| mean | " + " | ".join(f"{value:.2f}" for value in pivot.mean()) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Train, compare, write the outputs (see the module docstring); returns the comparison table."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", required=True, help="an SWF log (or a catalogue name)")
    parser.add_argument("--platform", default="kth-sp2")
    parser.add_argument("--out", required=True, type=Path, help="a new folder for the outputs")
    parser.add_argument("--jobs", type=int, default=256, help="jobs of a window (default 256)")
    parser.add_argument("--timesteps", type=int, default=50_000, help="environment steps of training")
    parser.add_argument("--train-share", type=float, default=0.7, help="share of the log training windows start in")
    parser.add_argument("--windows", type=int, default=10, help="held-out windows compared")
    parser.add_argument("--jobs-shown", type=int, default=16)
    parser.add_argument("--no-backfilling", dest="backfilling", action="store_false",
                        help="no EASY backfilling after the agent's choices (it backfills by default)")
    parser.add_argument("--reward-timing", choices=("end", "step"), default="step",
                        help="the bounded-slowdown reward at the episode's end, or shaped over its steps (default)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 0 < args.train_share < 1 or args.windows < 1:
        parser.error("--train-share must be between 0 and 1 and --windows at least 1")
    args.out.mkdir(parents=True, exist_ok=False)
    agent = {"jobs_shown": args.jobs_shown, "running_shown": args.jobs_shown, "backfilling": args.backfilling}
    env = SchedulingEnv(args.workload, args.platform, jobs=args.jobs, agent=agent, reward_timing=args.reward_timing)
    last_start = int(env.source.size * args.train_share) - args.jobs
    if last_start < 0 or last_start + 2 * args.jobs > env.source.size:
        parser.error(f"--jobs {args.jobs} and --train-share {args.train_share}: a window of training jobs and one of "
                     f"held-out jobs do not both fit in the log's {env.source.size:,} jobs")
    # rewards scaled by a running estimate of the returns' spread (bounded slowdowns span 1 to thousands)
    windows = DummyVecEnv([lambda: TrainingWindows(env, last_start, args.seed)])
    training = VecNormalize(windows, norm_obs=False, norm_reward=True)
    model = MaskablePPO("MlpPolicy", training, seed=args.seed, n_steps=1024, batch_size=256, verbose=0)
    began = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    trained_seconds = time.perf_counter() - began
    model.save(args.out / "model.zip")
    (args.out / "agent.json").write_text(json.dumps({**env.source.agent, "policy": "examples/ppo_policy.py:act"}))
    starts = held_out_starts(env.source.size, args.jobs, last_start + args.jobs, args.windows)
    frame = compare(args, env.source.agent, model, starts)
    frame.to_csv(args.out / "comparison.csv", index=False)
    (args.out / "comparison.md").write_text(table(frame))
    print(f"trained {args.timesteps:,} steps in {trained_seconds:.0f} s; mean bounded slowdown on {len(starts)} "
          f"held-out windows of {args.jobs} jobs:\n{table(frame)}")
    options = json.dumps({**agent, "policy": "examples/ppo_policy.py:act"})
    print(f"as a scheduler: BATREPLAY_PPO_MODEL={args.out / 'model.zip'} uv run batreplay run --workload "
          f"{args.workload} --platform {args.platform} --scheduler agent --scheduler-options '{options}' --out RUN_DIR")
    return frame


if __name__ == "__main__":
    main()
