"""The scheduling environment (Gymnasium >= 1.0): an agent schedules windows of a real log on the embedded engine,
which behaves as Batsim 4.2.1.

:class:`SchedulingEnv` runs each episode's simulation as :func:`batreplay.engine.direct.run_direct` runs a
``batreplay run``, with the scheduler :class:`batreplay.schedulers.agent.Agent`, in a greenlet: when the scheduler
asks its policy for an action, the greenlet hands the observation to :meth:`~SchedulingEnv.step`'s caller and waits
for the action. The decisions, the observation and the mask are the scheduler's own (see
:mod:`batreplay.schedulers.agent` and :mod:`batreplay.schedulers.observation`), so a policy trained here makes the
same decisions as ``batreplay run --scheduler agent``, on either engine.

- **Decision point** (a step): a Batsim message (a submission, a completion; with a dynamic user model, also the
  wake-up a user asked for, before submitting) after which at least one of the K waiting jobs shown fits in the
  free nodes; several steps may share one simulated time (one per job started).
- **Action**: ``Discrete(K + 1)``, start the i-th waiting job shown, or ``K``, wait for the next event; the mask is
  ``info["action_mask"]``, :meth:`~SchedulingEnv.action_masks` (sb3-contrib's ``MaskablePPO`` reads it) and the
  observation's last K + 1 values. Waiting is allowed while a job runs. An action the mask forbids is counted
  (``info["invalid_actions"]``) and replaced by a wait, or, on an idle platform, by the first job shown.
- **Observation**: ``Box(0, 1, (4K + 2R + 2 + K + 1,), float32)``, laid out and scaled as
  :mod:`batreplay.schedulers.observation` says (:attr:`~SchedulingEnv.layout` gives the slices).
- **Reward**: :mod:`batreplay.gym.rewards`. **Termination**: every job of the window ended; **truncation**:
  ``max_steps`` steps (the reward then covers the jobs ended so far).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pandas as pd
from greenlet import GreenletExit, greenlet

from batreplay.engine.direct import run_direct
from batreplay.formats.out_jobs_writer import out_jobs_table, write_out_jobs_text
from batreplay.gym.episodes import EpisodeOptions, EpisodeSource
from batreplay.gym.rewards import RunningMetric, end_reward
from batreplay.schedulers.agent import action_index
from batreplay.schedulers.observation import ObservationLayout


class SchedulingEnv(gymnasium.Env):
    """Learn to schedule a real log (see the module docstring).

    Args:
        workload: an SWF log (or a Batsim JSON workload, or a catalogue name such as ``KTH-SP2-1996-2.1-cln``).
        platform: a SimGrid platform file or a shipped name (``kth-sp2``).
        jobs, start, reward_timing, max_steps: :class:`~batreplay.gym.episodes.EpisodeOptions`.
        reward: a name of :data:`batreplay.gym.rewards.REWARDS`, or ``reward(rows) -> float`` of the episode's
            out_jobs rows (a pandas DataFrame as ``read_out_jobs`` reads it).
        agent: the scheduler's options but ``policy`` (:data:`~batreplay.schedulers.agent.AGENT_OPTIONS`:
            ``jobs_shown``, ``running_shown``, ``order``, ``backfilling``, ``time_scale``).
        run_options: ``batreplay run``'s options by their flat names, checked as a run checks them: the workload's
            conversion (``walltime_factor=2``, ``profile="delay"``...), the user model (``replay="feedback"``,
            ``sessions="arrival:60"``), ``compute_sharing``; not the scheduler's, engine or label.

    Raises:
        ValueError: one line naming what is wrong: an unknown log or platform, a bad option, a window past the
            log's end (:class:`~batreplay.options.OptionError` among others).

    Attributes:
        layout: the observation's :class:`~batreplay.schedulers.observation.ObservationLayout`.
        source: the :class:`~batreplay.gym.episodes.EpisodeSource` (the log, read once; its ``notes``).
    """

    metadata = {"render_modes": []}

    def __init__(self, workload: str | os.PathLike[str], platform: str | os.PathLike[str], *, jobs: int = 1000,
                 start: int | None = None, reward: str | Callable[[pd.DataFrame], float] = "bounded-slowdown",
                 reward_timing: str = "end", max_steps: int | None = None, agent: dict[str, Any] | None = None,
                 **run_options: Any) -> None:
        custom = callable(reward)
        self.options = EpisodeOptions(jobs=jobs, start=start, reward="bounded-slowdown" if custom else reward,
                                      reward_timing=reward_timing, max_steps=max_steps)
        self.reward = reward if custom else self.options.reward
        self.source = EpisodeSource(workload, platform, dict(agent or {}), run_options)
        self.source.check_window(self.options.start or 0, self.options.jobs)
        settings = self.source.agent
        self.layout = ObservationLayout(settings["jobs_shown"], settings["running_shown"],
                                        float(settings["time_scale"]))
        self.observation_space = gymnasium.spaces.Box(0.0, 1.0, shape=(self.layout.size,), dtype=np.float32)
        self.action_space = gymnasium.spaces.Discrete(self.layout.jobs_shown + 1)
        self._notes: list[str] = []
        self._episode: greenlet | None = None
        self._engine = None
        self._scheduler = None
        self._pending: tuple[np.ndarray, np.ndarray] | None = None
        self._window = (0, 0)
        self._steps = 0
        self._seen = 0
        self._phi = 0.0
        self._metric: RunningMetric | None = None

    # -- Gymnasium's API ----------------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode: the window ``options["start"]`` (else the constructor's ``start``, else drawn with
        this environment's seeded generator) of ``options["jobs"]`` jobs (else the constructor's); run the
        engine to the first decision point. Returns the observation and ``info``.

        ``info`` holds, beside what each step's holds, ``notes``: the user model's notes on the window.

        Raises:
            ValueError: an unknown key of ``options``, a bad value, or a window past the log's end.
        """
        super().reset(seed=seed)
        self._abandon()
        self._window = self._choose_window(dict(options or {}))
        engine, decision_process, self._notes = self.source.episode(*self._window, self._ask)
        self._engine, self._decision_process = engine, decision_process
        self._scheduler = getattr(decision_process, "inner", decision_process)
        self._steps, self._seen, self._phi = 0, 0, 0.0
        self._metric = None if callable(self.reward) else RunningMetric(self.reward, self.source.nb_resources)
        self._episode = greenlet(self._simulate)
        self._pending = self._resume()
        if self._pending is None:  # no job to choose: every job of the window was rejected (larger than the platform)
            raise ValueError(f"jobs {self._window[0]} to {sum(self._window) - 1} of {self.source.workload}: no "
                             f"decision to make, every job was rejected (more nodes than the platform's "
                             f"{self.source.nb_resources})")
        return self._observation(), {**self._info(), "notes": self._notes}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply ``action`` (an integer from 0 to K) and run to the next decision point, or to the episode's end.

        Raises:
            ValueError: an action that is not an integer from 0 to K (:func:`~batreplay.schedulers.agent.action_index`).
            RuntimeError: no episode under way (call :meth:`reset`).
        """
        if self._pending is None:
            raise RuntimeError("no episode under way: call reset() first (the last one ended)")
        index = action_index(action, self.layout.jobs_shown + 1)
        self._steps += 1
        self._pending = self._resume(index)
        terminated = self._pending is None
        truncated = not terminated and self.options.max_steps is not None and self._steps >= self.options.max_steps
        reward = self._reward(terminated, truncated)
        observation, info = self._observation(), self._info()  # (a truncated episode's: the state it stopped in)
        if truncated:
            self._abandon()
        return observation, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The action mask now (K + 1 booleans), for sb3-contrib's ``MaskablePPO``; only "wait" once ended."""
        if self._pending is None:
            mask = np.zeros(self.layout.jobs_shown + 1, dtype=bool)
            mask[-1] = True
            return mask
        return self._pending[1].copy()

    def close(self) -> None:
        """End the episode under way, if any."""
        self._abandon()

    # -- the episode's outputs ---------------------------------------------------------------------------------

    def episode_rows(self) -> pd.DataFrame:
        """The out_jobs.csv rows of the jobs ended so far in the last episode, as ``read_out_jobs`` reads them."""
        return out_jobs_table(self._require_engine().record_columns(), source="episode")

    def write_out_jobs(self, path: str | os.PathLike[str]) -> Path:
        """Write the last episode's ``out_jobs.csv`` (every job ended so far) at ``path``, as ``batreplay run``
        writes it (byte for byte Batsim's); returns the path."""
        write_out_jobs_text(self._require_engine().record_columns(), path)
        return Path(path)

    # -- inside -------------------------------------------------------------------------------------------------

    def _choose_window(self, options: dict[str, Any]) -> tuple[int, int]:
        unknown = sorted(set(options) - {"start", "jobs"})
        if unknown:
            raise ValueError(f"reset options: unknown {', '.join(unknown)} (known: start, jobs)")
        jobs = EpisodeOptions(jobs=_plain(options.get("jobs", self.options.jobs))).jobs
        start = _plain(options.get("start", self.options.start))
        if start is None:
            self.source.check_window(0, jobs)
            start = int(self.np_random.integers(0, self.source.size - jobs + 1))
        start = EpisodeOptions(start=start).start
        self.source.check_window(start, jobs)
        return start, jobs

    def _resume(self, *action: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Run the episode's simulation to its next decision (its observation and mask) or its end (None); an
        exception of the simulation ends the episode and propagates."""
        try:
            return self._episode.switch(*action)
        except BaseException:
            self._pending = None
            raise

    def _simulate(self) -> None:
        """The greenlet's body: the whole simulation, as ``batreplay run`` drives it on the embedded engine (the
        direct driver); returns None at its end."""
        run_direct(self._engine, self._decision_process)
        return None

    def _ask(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The Agent's policy: hand the decision to the caller of step() and return its action."""
        return self._episode.parent.switch((observation, mask))

    def _abandon(self) -> None:
        episode = self._episode
        if episode is not None and not episode.dead:
            try:
                episode.throw(GreenletExit)
            except GreenletExit:
                pass
        self._pending = None

    def _observation(self) -> np.ndarray:
        if self._pending is not None:
            return self._pending[0]
        mask = self.action_masks()
        return self.layout.encode((), {}, (), self.source.nb_resources, self.source.nb_resources, 0.0, mask)

    def _info(self) -> dict[str, Any]:
        policy = None if self._scheduler is None else self._scheduler.policy
        return {"action_mask": self.action_masks(), "time": 0.0 if self._engine is None else self._engine.now,
                "waiting": 0 if policy is None else len(policy.queue),
                "running": 0 if policy is None else len(policy.running),
                "invalid_actions": 0 if policy is None else policy.invalid_actions,
                "window": self._window, "steps": self._steps}

    def _reward(self, terminated: bool, truncated: bool) -> float:
        """The step's reward (see :mod:`batreplay.gym.rewards`)."""
        shaped = self.options.reward_timing == "step"
        if not (shaped or terminated or truncated):
            return 0.0
        if terminated:
            value = end_reward(self.reward, self.episode_rows(), self.source.nb_resources,
                               self.source.spec.engine.shares_hosts)
        else:
            value = self._running_value()
        reward = value - self._phi if shaped else value
        self._phi = value
        return float(reward)

    def _running_value(self) -> float:
        """``phi``: the reward's metric over the jobs ended so far."""
        if self._metric is None:
            rows = self.episode_rows()
            return (end_reward(self.reward, rows, self.source.nb_resources, self.source.spec.engine.shares_hosts)
                    if len(rows) else 0.0)
        for job in self._engine.ended_jobs(self._seen):
            self._metric.add(job.subtime, job.start, job.end if job.start is not None else 0.0, job.res)
            self._seen += 1
        return self._metric.value

    def _require_engine(self):
        if self._engine is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self._engine


def _plain(value: Any) -> Any:
    """A numpy integer as a Python int (a window drawn with numpy), anything else as it is."""
    return int(value) if isinstance(value, np.integer) else value
