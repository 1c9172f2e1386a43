"""The direct driver: the built-in decision processes on the embedded engine without pybatsim's message layer.

A decision process normally runs inside pybatsim's ``Batsim`` object (:mod:`.inprocess`): each message becomes
JSON-like dicts, pybatsim logs it as text, builds a ``Job`` object per submission from its JSON, and the reply's
allocations travel as interval strings that the engine parses back. For the project's own decision processes,
which use a known part of pybatsim's ``bs`` API, :class:`DirectBatsim` plays that part on the engine's typed events
(:mod:`.events`): the same hooks are called in the same order with the same values, allocations stay ProcSets, and
no text is formatted. The outputs are the same, byte for byte (tests/engine/test_direct_driver.py checks it on the
golden cases and on whole logs).

Which decision processes qualify (:func:`runs_direct`): instances of exactly the registry's scheduler classes
(:data:`batreplay.schedulers.registry.SCHEDULERS`, all :class:`~batreplay.schedulers.adapter.PolicyScheduler`),
and the feedback broker around one of them. The test is the class object itself, not its module's name, so that a
build that names modules differently (compiled, vendored) keeps the fast path. A scheduler file of a user, or any
subclass of ours (which may override any hook and use any of pybatsim's API), runs through pybatsim. Which path a
run took is recorded (:attr:`batreplay.engine.simulate.Simulation.driver`, ``run.json``'s ``decision_driver``).
This module imports the engine's simulator and events, pybatsim's ``Job`` (its states) and batreplay.schedulers /
batreplay.replay (to recognise their classes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from batsim.batsim import Job as PybatsimJob

from batreplay.engine.events import (JOB_COMPLETED, JOB_SUBMITTED, NOTIFY, REQUESTED_CALL, SIMULATION_BEGINS,
                                     SIMULATION_ENDS, wire_message)
from batreplay.engine.kernel import printed_time
from batreplay.engine.simulator import BatsimEngine
from batreplay.replay.broker import FeedbackBroker
from batreplay.schedulers.failures import decision_process_guard
from batreplay.schedulers.registry import SCHEDULERS

_STATES = PybatsimJob.State
#: The classes the direct driver drives: the registry's own (all PolicyScheduler), by identity.
_BUILT_IN_CLASSES = frozenset(SCHEDULERS.values())

#: The NOTIFY types pybatsim hands to the scheduler, and the hook it calls for each.
_NOTIFY_HOOKS = {"no_more_static_job_to_submit": "onNoMoreJobsInWorkloads",
                 "no_more_external_event_to_occur": "onNoMoreExternalEvents"}


def runs_direct(decision_process: Any) -> bool:
    """True when ``decision_process`` is one of batreplay's own (an instance of exactly a class of the scheduler
    registry, or a :class:`FeedbackBroker` of exactly that class around one), which :class:`DirectBatsim` can
    drive; False for anything else (a user's scheduler, or a subclass of ours, runs through pybatsim)."""
    if type(decision_process) is FeedbackBroker:
        return runs_direct(decision_process.inner)
    return type(decision_process) in _BUILT_IN_CLASSES


class DirectJob:
    """What a decision process knows of a job: the attributes of pybatsim's ``Job`` that schedulers read.

    Attributes:
        id: Batsim's id, ``workload!name``; submit_time, requested_time: seconds (requested_time -1 without a
            walltime, as pybatsim gives it; floats printed as Batsim prints them, six decimals); requested_resources:
            nodes; profile: the profile's name; job_state: a ``batsim.batsim.Job.State``, set as pybatsim sets it
            (on submission, completion, registration: pybatsim's execute and reject calls leave it as it is);
        allocation: the ProcSet it runs on (set by the scheduler; the engine keeps that very object until the job
            ends: do not change it in place); finish_time: seconds, once completed; return_code, metadata: as
            pybatsim sets them; json_dict: the job's JSON object as Batsim sends it (built when read).
    """

    __slots__ = ("id", "submit_time", "requested_time", "requested_resources", "profile", "job_state",
                 "allocation", "finish_time", "return_code", "metadata", "_source")

    def __init__(self, job_id: str, submit_time: float, requested_time: float, requested_resources: int,
                 profile: str, state: Any, source: Any = None) -> None:
        self._source = source  # the engine's Job, or the JSON object of a registration
        self.id = job_id
        self.submit_time = submit_time
        self.requested_time = requested_time
        self.requested_resources = requested_resources
        self.profile = profile
        self.job_state = state
        self.allocation = None
        self.finish_time = None
        self.return_code = None
        self.metadata = None

    @property
    def json_dict(self) -> dict:
        """The job's JSON object (``id``, ``subtime``, ``walltime``, ``res``, ``profile`` and any other field of the
        workload), as pybatsim keeps it."""
        source = self._source
        return source.wire_description() if hasattr(source, "wire_description") else dict(source or {})

    @property
    def workload(self) -> str:
        """The workload name, the part of :attr:`id` before ``!``."""
        return self.id.split("!", 1)[0]

    def __repr__(self) -> str:
        return f"DirectJob({self.id}, res={self.requested_resources}, state={self.job_state.name})"


class DirectBatsim:
    """pybatsim's ``bs`` object, as far as batreplay's decision processes use it, driving a :class:`BatsimEngine`.

    Args:
        engine: the embedded engine (its first message, SIMULATION_BEGINS, not yet taken).
        scheduler: a decision process for which :func:`runs_direct` is True; its ``bs`` is set to this object.
        on_progress: called after each message as ``on_progress(now, jobs_ended)``: the simulated time (s) and
            how many jobs the message said were completed.
        on_request: called with each message as Batsim's JSON objects (``{"now", "events"}``) before the decision
            process sees it; building them costs time: for checks and transcripts only.
        deadline: a wall-clock limit (:class:`batreplay.deadline.Deadline`), checked before each message.

    Attributes:
        messages: Batsim messages answered so far; scheduler_seconds: wall-clock seconds spent in the decision
            process; compute_resources (by id), nb_compute_resources, profiles, dynamic_job_registration_enabled,
            ack_of_dynamic_jobs: what pybatsim offers under these names; jobs: the jobs submitted and not yet
            ended, by id (pybatsim keeps every job: ended ones are let go here, to save memory). There is no
            ``kill_jobs``: no decision process of batreplay kills a job.
    """

    def __init__(self, engine: BatsimEngine, scheduler: Any,
                 on_progress: Callable[[float, int], None] | None = None, deadline=None,
                 on_request: Callable[[dict], None] | None = None) -> None:
        self.engine = engine
        self.scheduler = scheduler
        self.on_progress = on_progress
        self.on_request = on_request
        self.deadline = deadline
        self.messages = 0
        self.scheduler_seconds = 0.0
        self.jobs: dict[str, DirectJob] = {}
        self.profiles: dict[str, dict] = {}
        self.compute_resources: dict[int, dict] = {}
        self.nb_compute_resources = 0
        self.dynamic_job_registration_enabled = False
        self.ack_of_dynamic_jobs = False
        self.running_simulation = False
        self._now = 0.0
        self._out: list[dict] = []
        scheduler.bs = self

    # -------------------------------------------------------------- the calls decision processes make
    def time(self) -> float:
        """The current simulated time (s), as the last message gave it."""
        return self._now

    def _decide(self, kind: str, data: dict) -> None:
        self._out.append({"timestamp": self._now, "type": kind, "data": data})

    def execute_jobs(self, jobs: Iterable[DirectJob]) -> None:
        """EXECUTE_JOB for each job on its ``allocation`` (a ProcSet, handed to the engine as it is)."""
        for job in jobs:
            if job.allocation is None:
                raise ValueError(f"execute_jobs: job {job.id} has no allocation")
            self._decide("EXECUTE_JOB", {"job_id": job.id, "alloc": job.allocation})

    def reject_jobs(self, jobs: Iterable[DirectJob]) -> None:
        """REJECT_JOB for each job (at least one)."""
        self.reject_jobs_by_id([job.id for job in jobs])

    def reject_jobs_by_id(self, job_ids: list[str]) -> None:
        """REJECT_JOB for each job id (at least one)."""
        if not job_ids:
            raise ValueError("reject_jobs_by_id: the list of jobs to reject is empty")
        for job_id in job_ids:
            self._decide("REJECT_JOB", {"job_id": job_id})
            del self.jobs[job_id]

    def wake_me_up_at(self, at: float) -> None:
        """CALL_ME_LATER at ``at`` (s)."""
        self._decide("CALL_ME_LATER", {"timestamp": at})

    def notify_registration_finished(self) -> None:
        """NOTIFY ``registration_finished``: no more REGISTER_JOB will come."""
        self._decide("NOTIFY", {"type": "registration_finished"})

    def register_profiles(self, workload_name: str, profiles: Mapping[str, dict]) -> None:
        """REGISTER_PROFILE for each ``{name: profile}`` of workload ``workload_name``."""
        known = self.profiles.setdefault(workload_name, {})
        for name, profile in profiles.items():
            self._decide("REGISTER_PROFILE", {"workload_name": workload_name, "profile_name": name,
                                              "profile": profile})
            known[name] = profile

    def register_job(self, job_id: str, res: int, walltime: float, profile_name: str,
                     subtime: float | None = None) -> DirectJob:
        """REGISTER_JOB ``job_id`` (``workload!name``) of ``res`` nodes, ``walltime`` s and a registered profile,
        submitted at ``subtime`` (default: now). Raises ValueError: the profile was not registered."""
        subtime = self._now if subtime is None else subtime
        workload = job_id.split("!", 1)[0]
        if profile_name not in self.profiles.get(workload, {}):
            raise ValueError(f"register_job {job_id}: profile {profile_name!r} of workload {workload!r} was never "
                             "registered (register_profiles first)")
        description = {"profile": profile_name, "id": job_id, "res": res, "walltime": walltime, "subtime": subtime}
        self._decide("REGISTER_JOB", {"job_id": job_id, "job": description})
        job = DirectJob(job_id, subtime, walltime, res, profile_name, _STATES.IN_SUBMISSON, description)
        self.jobs[job_id] = job
        return job

    # -------------------------------------------------------------- the loop
    def run(self) -> None:
        """Answer the engine's messages until the simulation ends (SIMULATION_ENDS answered)."""
        engine, scheduler = self.engine, self.scheduler
        clock = time.perf_counter
        first = True
        while True:
            if self.deadline is not None:
                self.deadline.check()
            request = engine.next_events()
            if request is None:
                return
            self.messages += 1
            now, events = request
            if self.on_request is not None:
                self.on_request(wire_message(now, events))
            started = clock()
            ended = self._handle(now, events)
            reply = self._out
            if len(reply) > 1:
                reply.sort(key=_timestamp)  # stable, as pybatsim's
            self.scheduler_seconds += clock() - started
            engine.apply_reply({"now": now, "events": reply})
            if first:
                first = False
                scheduler.onAfterBatsimInit()
            if self.on_progress is not None:
                self.on_progress(now, ended)
            if not self.running_simulation:
                return

    def _handle(self, now: float, events: list) -> int:
        """Call the scheduler's hooks for the events of one message; returns the number of JOB_COMPLETED."""
        scheduler = self.scheduler
        jobs = self.jobs
        self._now = now
        self._out = []
        completed = 0
        scheduler.onBeforeEvents()
        for timestamp, kind, payload in events:
            if kind == JOB_SUBMITTED:
                job = DirectJob(payload.full_id, printed_time(payload.subtime), printed_time(payload.walltime),
                                payload.res, payload.profile_name,
                                _STATES.SUBMITTED, payload)
                jobs[job.id] = job
                scheduler.onJobSubmission(job)
            elif kind == JOB_COMPLETED:
                completed += 1
                job = jobs.pop(payload.full_id)  # nothing refers to an ended job any more: let it go
                job.finish_time = timestamp
                job.job_state = _STATES[payload.state]
                job.return_code = payload.return_code
                scheduler.onJobCompletion(job)
            elif kind == REQUESTED_CALL:
                scheduler.onRequestedCall()
            elif kind == NOTIFY:
                hook = _NOTIFY_HOOKS.get(payload["type"])
                if hook is None:
                    raise ValueError(f"unknown NOTIFY type {payload['type']!r}")
                getattr(scheduler, hook)()
            elif kind == SIMULATION_BEGINS:
                self._begin(payload)
            elif kind == SIMULATION_ENDS:
                self.running_simulation = False
                scheduler.onSimulationEnds()
            else:  # JOB_KILLED answers a KILL_JOB, which no decision process of batreplay sends
                raise ValueError(f"unexpected event {kind} for a decision process of batreplay")
        scheduler.onNoMoreEvents()
        return completed

    def _begin(self, data: Mapping) -> None:
        if self.running_simulation:
            raise ValueError("a second SIMULATION_BEGINS")
        self.running_simulation = True
        config = data["config"]
        self.nb_compute_resources = data["nb_compute_resources"]
        self.compute_resources = {resource["id"]: resource for resource in data["compute_resources"]}
        self.dynamic_job_registration_enabled = config["dynamic-jobs-enabled"]
        self.ack_of_dynamic_jobs = config["dynamic-jobs-acknowledged"]
        self.profiles = {workload: dict(profiles) for workload, profiles in data["profiles"].items()}
        self.scheduler.onSimulationBegins()


def _timestamp(event: dict) -> float:
    return event["timestamp"]


def run_direct(engine: BatsimEngine, scheduler: Any, on_progress: Callable[[float, int], None] | None = None,
               deadline=None, on_request: Callable[[dict], None] | None = None) -> DirectBatsim:
    """Simulate until the end with ``scheduler`` (one for which :func:`runs_direct` is True) deciding directly on
    ``engine``; returns the driver (its ``messages`` and ``scheduler_seconds`` describe the run).

    Raises:
        ValueError: ``scheduler`` is not one of batreplay's own decision processes.
        EngineError: as :func:`batreplay.engine.inprocess.run_scheduler`; WallClockTimeout: ``deadline`` expired.
        DecisionProcessError: the scheduler raised or exited (see :mod:`batreplay.schedulers.failures`).
    """
    if not runs_direct(scheduler):
        raise ValueError(f"{type(scheduler).__name__} is not one of batreplay's decision processes: run it through "
                         "pybatsim (batreplay.engine.inprocess.run_scheduler)")
    driver = DirectBatsim(engine, scheduler, on_progress, deadline, on_request)
    with decision_process_guard():
        driver.run()
    return driver
