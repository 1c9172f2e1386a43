"""A scheduler whose choices come from a policy, ``policy(observation, mask) -> action``: a trained model, or a
rule; the decisions of the Gymnasium environment (:mod:`batreplay.gym`), written once.

At each decision (once per Batsim message, after its submissions and completions), at time ``now``:

1. While at least one of the first K waiting jobs (K = ``jobs_shown``, in the queue order ``order``) fits in the
   free nodes, the policy is asked. It sees the observation of :mod:`batreplay.schedulers.observation` and the
   action mask (K + 1 booleans: ``mask[i]``, the i-th waiting job fits now; ``mask[K]``, "wait", allowed while a
   job runs), and answers an action: ``i < K`` starts the i-th waiting job now, on the lowest free node ids; ``K``
   waits for the next event. Waiting is refused on an idle platform: no event but a later submission could end
   the wait, and with none to come the simulation could never end (every waiting job fits an idle platform, as
   larger ones are rejected at submission). An action the mask forbids (a job that does not fit, an empty row, a
   wait on an idle platform) is counted (:attr:`AgentPolicy.invalid_actions`, reported at the end of a run) and
   replaced by a wait, or on an idle platform by the first job shown.
2. Once the policy waits (or no shown job fits), with ``backfilling`` on, EASY backfills the rest
   (:meth:`~batreplay.schedulers.easy_core.EasyCore.reserve_and_backfill`): the first waiting job in queue order
   gets a reservation, and the jobs behind it start now when they do not delay it (Lifka 1995; Mu'alem and
   Feitelson 2001). SchedGym (Zhang et al. 2020, RLScheduler) backfills too, but there the agent may choose a job
   that does not fit yet, which then gets the reservation; here the agent chooses among the jobs that fit now,
   and the reservation always goes to the head of the queue, as in EASY.

Hence the policy ``first`` (the first waiting job when it fits, else wait) makes exactly the decisions of ``fcfs``
without backfilling and of ``easy`` with it, and of ``sjf`` / ``easy-sjf`` with the queue order ``sjf``; tests
compare the ``out_jobs.csv`` files byte for byte.

Policies (option ``policy``): ``first``, ``first-fit`` (the first shown job that fits, else wait), or a callable
named ``module:name`` (importable) or ``path/to/file.py:name``; it gets the observation (a float32 array) and the
mask (a bool array) and returns an integer (a numpy integer or a 0-d array too).
"""

from __future__ import annotations

import importlib
import logging
import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from procset import ProcSet

from batreplay.schedulers.adapter import PolicyScheduler
from batreplay.schedulers.easy_core import EasyCore
from batreplay.schedulers.observation import ObservationLayout
from batreplay.schedulers.policy import Start
from batreplay.schedulers.python_files import import_python_file
from batreplay.schedulers.queue_order import ORDERS

logger = logging.getLogger(__name__)

#: A policy: ``policy(observation, mask) -> action`` (see the module docstring).
Policy = Callable[[np.ndarray, np.ndarray], Any]


def first_waiting_job(observation: np.ndarray, mask: np.ndarray) -> int:
    """The policy ``first``: the first waiting job when it fits now, else wait (FCFS; EASY with backfilling)."""
    return 0 if mask[0] else len(mask) - 1


def first_fitting_job(observation: np.ndarray, mask: np.ndarray) -> int:
    """The policy ``first-fit``: the first shown waiting job that fits now, else wait."""
    return int(np.argmax(mask[:-1])) if mask[:-1].any() else len(mask) - 1


#: The policies named by the option ``policy`` without a file.
BUILT_IN_POLICIES: dict[str, Policy] = {"first": first_waiting_job, "first-fit": first_fitting_job}

#: The agent's options, ``{name: (default, doc)}``: the scheduler's, and the Gymnasium environment's observation and
#: actions (the environment takes the same keys, checked by :meth:`Agent.validate_options`).
AGENT_OPTIONS: dict[str, tuple[Any, str]] = {
    "policy": ("first", "the policy: first, first-fit, or a callable policy(observation, mask) -> action named "
                        "module:name or path/to/file.py:name"),
    "jobs_shown": (16, "K, the waiting jobs the policy sees and may start (an integer >= 1)"),
    "running_shown": (16, "R, the running jobs the observation shows, soonest expected end first (integer >= 0)"),
    "order": ("fcfs", f"the queue order of the waiting jobs, one of {', '.join(ORDERS)}"),
    "backfilling": (False, "after the policy waits, EASY backfills the other waiting jobs around the first one"),
    "time_scale": (3600.0, "T, seconds: a duration t is shown as t / (t + T)"),
}


def check_agent_options(options: dict[str, Any]) -> None:
    """Raise ValueError naming the option when a value of :data:`AGENT_OPTIONS` is bad (``policy`` is only checked
    for its form here; :func:`load_policy` imports it)."""
    for name in ("jobs_shown", "running_shown"):
        value, least = options[name], 1 if name == "jobs_shown" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"option {name} must be an integer >= {least}, got {value!r}")
    if options["order"] not in ORDERS:
        raise ValueError(f"option order must be one of {', '.join(ORDERS)}, got {options['order']!r}")
    if not isinstance(options["backfilling"], bool):
        raise ValueError(f"option backfilling must be true or false, got {options['backfilling']!r}")
    scale = options["time_scale"]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (0 < scale < math.inf):
        raise ValueError(f"option time_scale must be a number of seconds > 0, got {scale!r}")
    policy = options["policy"]
    if not callable(policy) and not (isinstance(policy, str) and (policy in BUILT_IN_POLICIES or ":" in policy)):
        raise ValueError(f"option policy must be one of {', '.join(BUILT_IN_POLICIES)} or module:name or "
                         f"file.py:name, got {policy!r}")


def load_policy(name: str | Policy) -> Policy:
    """The callable the option ``policy`` names (a callable is returned as it is).

    Raises:
        ValueError: an unknown module or file, a module or file that fails to import (the message names the file
            and the line), a missing name, or a name that is not callable; one line naming the option.
    """
    if callable(name):
        return name
    if name in BUILT_IN_POLICIES:
        return BUILT_IN_POLICIES[name]
    source, _, attribute = name.rpartition(":")
    try:
        if source.endswith(".py"):
            module = import_python_file(source, "policy")
        else:
            module = importlib.import_module(source)
    except (FileNotFoundError, ValueError) as error:  # (SchedulerLoadError, a ValueError: file and line named)
        raise ValueError(f"option policy {name!r}: {error}") from None
    except (Exception, SystemExit) as error:  # an importable module failed: say how
        raise ValueError(f"option policy {name!r}: {type(error).__name__}: {error}") from None
    policy = getattr(module, attribute, None)
    if not callable(policy):
        raise ValueError(f"option policy {name!r}: {source} has no callable named {attribute!r}")
    return policy


def action_index(action: Any, actions: int) -> int:
    """``action`` as an index from 0 to ``actions - 1``: a Python or numpy integer, or an array of one (what
    ``model.predict`` returns); booleans and fractional numbers are refused.

    Raises:
        ValueError: anything else, naming the action.
    """
    value = np.asarray(action)
    if value.size != 1 or value.dtype.kind not in "iu":
        raise ValueError(f"the action {action!r} is not an integer from 0 to {actions - 1}")
    index = int(value.reshape(()))
    if not 0 <= index < actions:
        raise ValueError(f"the action {index} is not an integer from 0 to {actions - 1}")
    return index


class AgentPolicy(EasyCore):
    """The decisions of the module docstring, on whole nodes (lowest free ids first).

    Args:
        resources: the platform's compute resources (ProcSet of ids, or a count of nodes).
        chooser: the policy, ``chooser(observation, mask) -> action``.
        jobs_shown, running_shown, order, backfilling, time_scale: the options of :data:`AGENT_OPTIONS`.

    Attributes:
        layout: the :class:`~batreplay.schedulers.observation.ObservationLayout`.
        submitted_at: submission time (s) of each waiting job, by id (the scheduler fills it in).
        choices: the policy's answers so far; invalid_actions: those the mask forbade, each replaced by a wait (or
            by the first job shown, on an idle platform).
    """

    name = "agent"

    def __init__(self, resources: ProcSet | int, *, chooser: Policy, jobs_shown: int = 16, running_shown: int = 16,
                 order: str = "fcfs", backfilling: bool = False, time_scale: float = 3600.0):
        super().__init__(resources, order=order)
        self.chooser = chooser
        self.backfilling = backfilling
        self.layout = ObservationLayout(jobs_shown, running_shown, float(time_scale))
        self.submitted_at: dict[str, float] = {}
        self.choices = 0
        self.invalid_actions = 0

    def mask(self) -> np.ndarray:
        """The action mask now: K + 1 booleans, the i-th waiting job fits in the free nodes, then "wait" (while a
        job runs)."""
        shown = self.layout.jobs_shown
        free = self.pool.nb_free
        mask = np.zeros(shown + 1, dtype=bool)
        for position, job in enumerate(self._queue.jobs[:shown]):
            mask[position] = job.requested_resources <= free
        mask[shown] = len(self.running) > 0
        return mask

    def observe(self, now: float, mask: np.ndarray) -> np.ndarray:
        """The observation at ``now`` (s) with ``mask`` (see :mod:`batreplay.schedulers.observation`)."""
        return self.layout.encode(self._queue.jobs, self.submitted_at, self.running.ends(), self.pool.nb_free,
                                  self.nb_resources, now, mask)

    def decide(self, now: float) -> list[Start]:
        """Ask the policy while a shown job fits, start what it chooses, then backfill (option); the jobs started."""
        queue = self._queue.jobs
        started: list[Start] = []
        while True:
            mask = self.mask()
            if not mask[:-1].any():
                break
            position = self._position(self.chooser(self.observe(now, mask), mask), mask)
            if position is None:
                break
            job = queue[position]
            started.append((job, self._start(job, now)))
            self._queue.remove_positions([position])
        self.reserve_and_backfill(now, started, self.backfilling)
        for job, _allocation in started:
            del self.submitted_at[job.id]
        return started

    def _position(self, action: Any, mask: np.ndarray) -> int | None:
        """The queue position ``action`` starts, or None for a wait (an action the mask forbids is counted and
        replaced by a wait, or by the first job when waiting is forbidden too).

        Raises:
            ValueError: ``action`` is not an integer from 0 to K.
        """
        self.choices += 1
        try:
            value = action_index(action, len(mask))
        except ValueError as error:
            raise ValueError(f"the policy answered: {error}") from None
        if not mask[value]:
            self.invalid_actions += 1
            value = len(mask) - 1 if mask[-1] else 0
        return None if value == len(mask) - 1 else value


class Agent(PolicyScheduler):
    """A scheduler whose choices come from a policy (see the module docstring); ``batreplay run --scheduler agent
    --scheduler-options '{"policy": "my_policy.py:act"}'``, on either engine.

    Options: :data:`AGENT_OPTIONS` (checked by the registry, the policy loaded when the scheduler is built).

    Raises:
        ValueError: the policy cannot be loaded (one line naming the option).
    """

    OPTIONS: ClassVar[dict[str, tuple[Any, str]]] = dict(AGENT_OPTIONS)

    def __init__(self, options: dict[str, Any] | None = None):
        super().__init__(options)
        merged = {**{key: default for key, (default, _doc) in AGENT_OPTIONS.items()}, **self.options}
        check_agent_options(merged)
        self.settings = merged
        self.chooser = load_policy(merged["policy"])

    @classmethod
    def validate_options(cls, options: dict[str, Any]) -> None:
        """Raise ValueError naming the option when a value is bad (see :func:`check_agent_options`)."""
        check_agent_options(options)

    def make_policy(self, resources: ProcSet) -> AgentPolicy:
        """An :class:`AgentPolicy` with this scheduler's policy and options."""
        settings = self.settings
        return AgentPolicy(resources, chooser=self.chooser, jobs_shown=settings["jobs_shown"],
                           running_shown=settings["running_shown"], order=settings["order"],
                           backfilling=settings["backfilling"], time_scale=settings["time_scale"])

    def onJobSubmission(self, job) -> None:
        self._ensure_policy().submitted_at[job.id] = job.submit_time
        super().onJobSubmission(job)
        if job.id not in self._jobs:  # rejected at once
            del self.policy.submitted_at[job.id]

    def onSimulationEnds(self) -> None:
        policy = self.policy
        if policy is not None and policy.invalid_actions:
            logger.warning("the policy gave %d actions of %d that the mask forbade; each was replaced (a wait, or the "
                           "first job on an idle platform)", policy.invalid_actions, policy.choices)
