"""Thin pybatsim adapter around a :class:`~batreplay.schedulers.policy.SchedulingPolicy`.

:class:`PolicyScheduler` is a pybatsim 3.2.1 ``BatsimScheduler``. It only translates events:

- JOB_SUBMITTED (static or dynamically registered jobs alike, ids such as ``w0!3`` or ``dyn!12``) ->
  ``policy.submit``; a job the platform can never run is rejected at once (REJECT_JOB), with a logged warning;
- JOB_COMPLETED (every final state) and JOB_KILLED -> ``policy.complete``. Batsim answers a kill with a
  JOB_COMPLETED (``COMPLETED_KILLED``) *and* a JOB_KILLED in the same message, in either order; the resources
  are freed by whichever comes first and the second is absorbed;
- REQUESTED_CALL and NOTIFY events are accepted and ignored (a wrapping broker may have asked for them);
- once per Batsim message, in ``onNoMoreEvents``, ``policy.decide(bs.time())`` and EXECUTE_JOB for the chosen
  jobs. The policy only changes state through submit/complete between two decisions, so deciding once after
  the whole batch gives the result of a decision taken after the last event of the message.

A broker may also drive an instance directly: set ``scheduler.bs``, then call ``onSimulationBegins`` (or not:
the policy is then built at the first event), the job hooks, and ``onNoMoreEvents``. Of ``bs`` the adapter only
uses ``time()``, ``execute_jobs(jobs)`` (each job's ``allocation`` set to a ProcSet), ``reject_jobs(jobs)``,
``compute_resources`` (a mapping keyed by resource id) and ``nb_compute_resources``; it never asks to be woken up.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from batsim.batsim import BatsimScheduler, Job
from procset import ProcSet

from batreplay.schedulers.node_selection import check_placement_options, slot_pool_of, uses_slot_pool
from batreplay.schedulers.policy import QueuedJob, Rejection, SchedulingPolicy

logger = logging.getLogger(__name__)

_KILLED_STATE = "COMPLETED_KILLED"


def queued_job_of(job: Job, with_description: bool = False) -> QueuedJob:
    """The policy's view of a pybatsim job: id, requested resources, walltime (``requested_time``, s; a
    negative value, pybatsim's mark of a missing walltime, becomes ``None``) and, with ``with_description``, its
    JSON object (``json_dict``; left out by default: the embedded engine builds it on demand)."""
    description = job.json_dict if with_description else None
    return QueuedJob(job.id, job.requested_resources, job.requested_time, description)


def _state_name(job: Job) -> str:
    state = getattr(job, "job_state", None)
    return getattr(state, "name", str(state))


class PolicyScheduler(BatsimScheduler):
    """A pybatsim scheduler whose decisions come from a policy object.

    Subclasses set :attr:`policy_class`, or override :meth:`make_policy` (to give the policy arguments, such as a
    queue order). ``options`` (the pybatsim launcher's dict) is kept as
    ``self.options``; only :meth:`make_policy` overrides read it.

    Attributes:
        policy: the policy, built from ``bs.compute_resources`` at SIMULATION_BEGINS (``None`` before).
        unknown_completions: ids of terminated jobs this scheduler never started (a broker forwarding
            foreign jobs, or a protocol anomaly); each is logged as a warning.
    """

    policy_class: ClassVar[type[SchedulingPolicy]]
    #: The policy reads each job's JSON object (:attr:`QueuedJob.description`), e.g. to predict speedups.
    needs_description: ClassVar[bool] = False

    def __init__(self, options: dict[str, Any] | None = None):
        super().__init__({} if options is None else options)
        self.policy: SchedulingPolicy | None = None
        self.unknown_completions: list[str] = []
        self._jobs: dict[str, Job] = {}  # waiting jobs, by id, to hand the very objects back to pybatsim
        self._freed_by_kill: set[str] = set()  # JOB_KILLED seen first, JOB_COMPLETED still to absorb
        self._completed_killed: set[str] = set()  # JOB_COMPLETED(killed) seen first, JOB_KILLED to absorb

    # -- public helpers -------------------------------------------------------------------------------------

    @property
    def rejections(self) -> list[Rejection]:
        """Jobs rejected at submission, as ``(job id, reason)``, in rejection order."""
        return [] if self.policy is None else self.policy.rejections

    def make_policy(self, resources: ProcSet) -> SchedulingPolicy:
        """A new policy for the platform's compute ``resources``: ``policy_class(resources)``."""
        return self.policy_class(resources)

    def _ensure_policy(self) -> SchedulingPolicy:
        if self.policy is None:
            ids = list(self.bs.compute_resources)
            if not ids:
                raise ValueError("the platform has no compute resources")
            resources = ProcSet(*ids)
            if len(resources) != self.bs.nb_compute_resources:
                raise ValueError(
                    f"nb_compute_resources = {self.bs.nb_compute_resources} but {len(resources)} distinct compute "
                    "resource ids were given"
                )
            self.policy = self.make_policy(resources)
            if uses_slot_pool(self.options):  # another node selection, or job slots (schedulers/node_selection.py)
                self.policy.use_pool(slot_pool_of(self.bs.compute_resources, self.options))
        return self.policy

    @classmethod
    def validate_options(cls, options: dict[str, Any]) -> None:
        """Raise ValueError naming the option when a placement option (node_selection, slots, seed) is bad."""
        check_placement_options(options)

    def check_workload(self, jobs: list[dict[str, Any]]) -> list[str]:
        """Check the options against the jobs to simulate (their Batsim JSON objects), before the simulation;
        return notes for the user (none here: subclasses that read job fields override it).

        Raises:
            ValueError: options that no job of the workload can satisfy (the message names the option).
        """
        return []

    # -- pybatsim hooks -------------------------------------------------------------------------------------

    def onSimulationBegins(self) -> None:
        self.policy = None
        self.unknown_completions = []
        self._jobs.clear()
        self._freed_by_kill.clear()
        self._completed_killed.clear()
        self._ensure_policy()

    def onJobSubmission(self, job: Job) -> None:
        policy = self._ensure_policy()
        rejection = policy.submit(queued_job_of(job, self.needs_description))
        if rejection is None:
            self._jobs[job.id] = job
        else:
            logger.warning("rejecting job %s: %s", rejection.job_id, rejection.reason)
            self.bs.reject_jobs([job])

    def onJobCompletion(self, job: Job) -> None:
        policy = self._ensure_policy()
        if job.id in self._freed_by_kill:
            self._freed_by_kill.discard(job.id)
            return
        if policy.complete(job.id):
            if _state_name(job) == _KILLED_STATE:
                self._completed_killed.add(job.id)
            return
        self.unknown_completions.append(job.id)
        logger.warning("completion of job %s, which this scheduler did not start: ignored", job.id)

    def onJobsKilled(self, jobs: list[Job]) -> None:
        policy = self._ensure_policy()
        for job in jobs:
            if job.id in self._completed_killed:
                self._completed_killed.discard(job.id)
            elif policy.complete(job.id):
                self._freed_by_kill.add(job.id)
            else:
                # The kill raced a normal completion: the job had already terminated and been released.
                logger.debug("JOB_KILLED for job %s, which is not running: nothing to free", job.id)

    def onRequestedCall(self) -> None:
        """Nothing to do: these policies only act on submissions and completions."""

    def onNoMoreJobsInWorkloads(self) -> None:
        """Nothing to do (NOTIFY ``no_more_static_job_to_submit``)."""

    def onNoMoreExternalEvents(self) -> None:
        """Nothing to do (NOTIFY ``no_more_external_event_to_occur``)."""

    def onNotifyGenericEvent(self, event_data: dict) -> None:
        """Unknown NOTIFY events are ignored."""
        logger.debug("ignoring NOTIFY %s", event_data)

    def onNoMoreEvents(self) -> None:
        """Decide once for the whole message and send EXECUTE_JOB for the chosen jobs."""
        if self.policy is None:
            return
        starts = self.policy.decide(self.bs.time())
        if not starts:
            return
        jobs = []
        for queued, allocation in starts:
            job = self._jobs.pop(queued.id)
            job.allocation = allocation
            jobs.append(job)
        self.bs.execute_jobs(jobs)
