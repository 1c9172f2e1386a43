"""The feedback broker: a decision process that owns the users and wraps any pybatsim scheduler.

The broker sits between Batsim (or the embedded engine) and an inner scheduler::

    Batsim <-> FeedbackBroker(users = a UserModel, inner = Easy / Fcfs / a user's BatsimScheduler)

- it *registers* each job when its user submits it: REGISTER_PROFILE (one profile per job, so Batsim's
  garbage collection of dynamic profiles never bites) and REGISTER_JOB with ``subtime = now``;
- it wakes itself up with CALL_ME_LATER at the next planned submission;
- Batsim acknowledges each registration with a JOB_SUBMITTED, which the broker passes to the inner
  scheduler, as it passes every completion, kill and notification;
- completions (and rejections made by the inner scheduler) are fed back to the users, which may free new
  sessions;
- once every user has submitted everything, it sends NOTIFY ``registration_finished`` so that Batsim can end.

The broker depends only on :class:`batreplay.replay.protocol.UserModel` (e.g.
:class:`batreplay.replay.feedback.ThinkTimeUsers`, Madon, Da Costa, Pierson 2024, Algorithm 1).

It needs Batsim's ``--enable-dynamic-jobs --acknowledge-dynamic-jobs`` (the embedded engine is started with
the same options by the runner) and says so when they are missing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from batsim.batsim import BatsimScheduler

from batreplay.replay.protocol import UserModel

LOGGER = logging.getLogger(__name__)
#: How early a requested call may arrive: at least Batsim's shortest sleep (1e-5 s), and this share of the time, for
#: SimGrid's clock rounds each step of a sleep at the clock's magnitude (a call asked for at t = 1.5e8 s has been seen
#: to arrive 1.1e-5 s early; 1e-9 of the time leaves room for a million rounded steps).
CALL_SLACK = 1e-5
CALL_SLACK_RELATIVE = 1e-9


class _AcknowledgementEcho(logging.Filter):
    """Drops pybatsim's warning that a job it registered was submitted again: with
    ``--acknowledge-dynamic-jobs`` every registered job comes back as a JOB_SUBMITTED, by design (pybatsim
    3.2.1 logs one warning per job of a feedback replay, "... was alredy in the job list ..."), and its
    warning that dynamic registration is enabled (the broker sends ``registration_finished`` itself); neither
    is news to the user, and they came before any error line of the command."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        return "was alredy in the job list" not in text and "Dynamic registration of jobs is ENABLED" not in text


_ECHO_FILTER = _AcknowledgementEcho()

#: Name of the dynamic workload the broker registers jobs into (job ids are ``dyn!<SWF job number>``).
DYNAMIC_WORKLOAD = "dyn"
REQUIRED_BATSIM_FLAGS = "--enable-dynamic-jobs --acknowledge-dynamic-jobs"


class BrokerConfigurationError(RuntimeError):
    """Batsim was not started with the options the broker needs."""


class FeedbackBroker(BatsimScheduler):
    """Users with feedback in front of an inner scheduler.

    Args:
        inner: the scheduler that decides where and when jobs run (any ``BatsimScheduler``).
        users: the user model that decides when jobs are submitted (:class:`~batreplay.replay.protocol.UserModel`).
        jobs: per SWF job number, the job's request: ``{"res": nodes, "walltime": s, "profile": {...}}``
            (a Batsim profile document).
    """

    def __init__(self, inner: BatsimScheduler, users: UserModel, jobs: Mapping[int, Mapping]) -> None:
        super().__init__({})
        logging.getLogger("batsim.batsim").addFilter(_ECHO_FILTER)  # idempotent: the same filter object
        self.inner = inner
        self.users = users
        self.job_requests = jobs
        self.rejected: list[str] = []
        self._calls: set[float] = set()
        self._finished_sent = False

    # ------------------------------------------------------------------ wiring
    def onSimulationBegins(self) -> None:
        # pybatsim hands over ``bs`` just before the first message, and calls onAfterBatsimInit after it.
        self.inner.bs = self.bs
        reject = self.bs.reject_jobs_by_id

        def reject_and_tell_users(job_ids):
            reject(job_ids)
            for job_id in job_ids:
                self.rejected.append(job_id)
                self._terminated(job_id)

        self.bs.reject_jobs_by_id = reject_and_tell_users
        if not (self.bs.dynamic_job_registration_enabled and self.bs.ack_of_dynamic_jobs):
            raise BrokerConfigurationError(
                "the feedback broker registers jobs dynamically: start Batsim with " + REQUIRED_BATSIM_FLAGS
            )
        self.inner.onSimulationBegins()

    def onAfterBatsimInit(self) -> None:
        self.inner.onAfterBatsimInit()

    # ------------------------------------------------------------------ events
    def onJobSubmission(self, job) -> None:
        self.inner.onJobSubmission(job)

    def onJobCompletion(self, job) -> None:
        self._terminated(job.id)
        self.inner.onJobCompletion(job)

    def onJobsKilled(self, jobs) -> None:
        self.inner.onJobsKilled(jobs)

    def onRequestedCall(self) -> None:
        # a call requested for t arrives at t up to SimGrid's clock rounding (it may print as t - 1e-6, or earlier
        # late in a long simulation): this is the earliest call requested up to the slack after now (a job not yet
        # due at it is asked for again)
        now = self.bs.time()
        slack = max(CALL_SLACK, CALL_SLACK_RELATIVE * abs(now))
        served = [at for at in self._calls if at <= now + slack]
        if served:
            self._calls.discard(min(served))
        if type(self.inner).onRequestedCall is not BatsimScheduler.onRequestedCall:
            self.inner.onRequestedCall()

    def onNoMoreJobsInWorkloads(self) -> None:
        self.inner.onNoMoreJobsInWorkloads()

    def onBeforeEvents(self) -> None:
        self.inner.onBeforeEvents()

    def onNoMoreEvents(self) -> None:
        self.inner.onNoMoreEvents()
        self._submit_due()

    def onSimulationEnds(self) -> None:
        self.inner.onSimulationEnds()

    def onDeadlock(self) -> None:
        self.inner.onDeadlock()

    # ------------------------------------------------------------------ users
    def _terminated(self, full_id: str) -> None:
        workload, _, name = full_id.partition("!")
        if workload == DYNAMIC_WORKLOAD:
            self.users.job_terminated(int(name), self.bs.time())

    def _submit_due(self) -> None:
        now = self.bs.time()
        for job_id in self.users.pop_due(now):
            request = self.job_requests[job_id]
            profile_name = f"p{job_id}"
            self.bs.register_profiles(DYNAMIC_WORKLOAD, {profile_name: dict(request["profile"])})
            self.bs.register_job(f"{DYNAMIC_WORKLOAD}!{job_id}", int(request["res"]), float(request["walltime"]),
                                 profile_name, subtime=now)
        upcoming = self.users.next_submission_time()
        if upcoming is not None and upcoming > now and upcoming not in self._calls:
            self._calls.add(upcoming)
            self.bs.wake_me_up_at(upcoming)
        if self.users.all_submitted and not self._finished_sent:
            self._finished_sent = True
            self.bs.notify_registration_finished()
