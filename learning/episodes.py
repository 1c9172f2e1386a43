"""Episodes of the scheduling environment: a log, a platform and a user model read once, and windows of the log's
consecutive jobs, each simulated by the embedded engine with a scheduler whose choices the agent makes.

A window keeps its jobs' recorded submission times (the engine waits for the first one at no cost): its
``out_jobs.csv`` is that of ``batreplay run`` on the same jobs (``--max-jobs N`` for a window from the first job).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batreplay.engine.simulate import embedded_engine
from batreplay.engine.simulator import BatsimEngine
from batreplay.options import OptionError, check_fields, option
from batreplay.platforms.reader import read_platform
from batreplay.replay.protocol import ReplayError
from batreplay.replay.registry import replay_decision_process, user_model
from batreplay.run.runner import RunError, check_master_route, check_times, load_workload, resolve_platform
from batreplay.run.spec import RunSpec
from batreplay.gym.rewards import REWARD_TIMINGS, REWARDS
from batreplay.schedulers.agent import first_waiting_job
from batreplay.schedulers.registry import check_scheduler_options, load_scheduler
from batreplay.workloads.resolve import resolve_workload

#: The registry name of the scheduler an episode runs (:class:`batreplay.schedulers.agent.Agent`).
AGENT = "agent"
#: Run options that say how a run is written, checked or driven, not what it simulates: the environment refuses them.
REFUSED_RUN_OPTIONS = frozenset({"scheduler", "scheduler_options", "engine", "batsim", "batsim_timeout", "label",
                                 "out_dir", "force", "timeout", "warm_up"})


@dataclass(frozen=True)
class EpisodeOptions:
    """The environment's own options (the agent's are the scheduler's,
    :data:`~batreplay.schedulers.agent.AGENT_OPTIONS`; the workload's and the user model's those of a run
    description). Checked at construction, each refusal one line naming the option.

    Raises:
        OptionError: a value an option refuses.
    """

    jobs: int = option(1000, kind=int, at_least=1, command_line=False,
                       help="jobs of an episode: a window of this many consecutive jobs of the log")
    start: int | None = option(None, kind=int, at_least=0, optional=True, command_line=False,
                               help="position in the log (from 0) of every episode's first job; drawn uniformly "
                                    "(seeded by reset) when not given", default_text="drawn")
    reward: str = option("bounded-slowdown", choices=tuple(REWARDS), command_line=False,
                         help="the reward (batreplay.gym.rewards), or a callable of the out_jobs rows")
    reward_timing: str = option("end", choices=REWARD_TIMINGS, command_line=False,
                                help="end: the reward once, at the episode's end; step: shaped over the steps")
    max_steps: int | None = option(None, kind=int, at_least=1, optional=True, command_line=False,
                                   help="truncate an episode after this many steps", default_text="no limit")

    def __post_init__(self) -> None:
        check_fields(self)


class EpisodeSource:
    """A log on a platform, read once, and its windows.

    Args:
        workload: an SWF log, a Batsim JSON workload, or a catalogue name of the Parallel Workloads Archive.
        platform: a SimGrid platform file or a shipped platform name (``kth-sp2``).
        agent: the agent's options (:data:`~batreplay.schedulers.agent.AGENT_OPTIONS` but ``policy``).
        run_options: ``batreplay run``'s options by their flat names (:meth:`batreplay.run.spec.RunSpec.build`:
            ``walltime_factor``, ``profile``, ``replay``, ``sessions``, ``compute_sharing``...), checked by the run
            description; the engine is the embedded one.

    Raises:
        ValueError (OptionError, RunSpecError, PlatformError among them): an unknown log or platform, a bad option
            (one line naming it).
    """

    def __init__(self, workload: str | Path, platform: str | Path, agent: dict[str, Any],
                 run_options: dict[str, Any]) -> None:
        if "policy" in agent:
            raise OptionError("agent option policy: in the environment, the agent's actions are the policy")
        refused = sorted(set(run_options) & REFUSED_RUN_OPTIONS)
        if refused:
            raise OptionError(f"run option {refused[0]}: not an option of the environment, which runs the agent "
                              "(its options: agent=) on the embedded engine, in memory, without metrics window")
        checked = check_scheduler_options(AGENT, agent)
        #: The agent's options with their defaults, but ``policy`` (the environment's caller chooses).
        self.agent = {key: value for key, value in checked.items() if key != "policy"}
        try:
            self.workload = resolve_workload(workload)
            self.spec = RunSpec.build(workload=self.workload, platform=platform, scheduler=AGENT, out_dir="episode",
                                      scheduler_options=checked, **run_options)
            self.platform_file = resolve_platform(platform)
            self.platform = read_platform(self.platform_file)
            check_master_route(self.spec, self.platform_file, self.platform)
            self.document, self.job_table, self.notes = load_workload(self.spec, nb_res=self.platform.nb_compute)
            check_times(self.spec, self.platform_file, self.platform, self.document)
        except (FileNotFoundError, RunError) as err:  # (the others are ValueErrors already)
            raise OptionError(str(err)) from None
        self.size = len(self.document["jobs"])
        self._check_user_model()

    def _check_user_model(self) -> None:
        """Refuse now what the user model would refuse at the first episode: a site model's replay (its jobs are
        drawn, there is no log to cut into windows), a dynamic model without the SWF log's users.

        Raises:
            OptionError: naming the user model.
        """
        model = self.spec.replay.model
        if user_model(model).source == "site-model":
            raise OptionError(f"replay {model}: its jobs are drawn from a site model; the environment replays "
                              "windows of a log")
        try:
            self.episode(0, 1, first_waiting_job)  # (built, not run)
        except ReplayError as err:
            raise OptionError(f"replay {model}: {err}") from None

    @property
    def nb_resources(self) -> int:
        """Compute nodes of the platform."""
        return self.platform.nb_compute

    def check_window(self, start: int, jobs: int) -> None:
        """Raise OptionError when jobs ``[start, start + jobs)`` are not all in the log."""
        if start + jobs > self.size:
            raise OptionError(f"option jobs {jobs} from start {start}: {self.workload} has {self.size:,} jobs to "
                              "simulate")

    def episode(self, start: int, jobs: int, policy: Any) -> tuple[BatsimEngine, Any, list[str]]:
        """The engine (first message not yet taken), the decision process of jobs ``[start, start + jobs)``, the
        agent's choices made by ``policy(observation, mask)``, and the user model's notes on the window (one line
        each)."""
        self.check_window(start, jobs)
        document = self.document
        window = {**document, "jobs": document["jobs"][start:start + jobs]}  # (the engine reads the profiles used)
        table = None if self.job_table is None else self.job_table.iloc[start:start + jobs].reset_index(drop=True)
        scheduler = load_scheduler(AGENT, {**self.agent, "policy": policy})
        decision_process, notes = replay_decision_process(self.spec.replay, window, table, scheduler,
                                                           slots=sum(host.slots for host in self.platform.hosts))
        dynamic = decision_process is not scheduler
        simulated = {"nb_res": window["nb_res"], "jobs": [], "profiles": {}} if dynamic else window
        return embedded_engine(self.platform, simulated, self.spec.engine, dynamic), decision_process, notes

