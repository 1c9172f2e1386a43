"""The protocol handlers: what Batsim's server does with each message it takes from its mailbox.

:class:`Handlers` owns the jobs, the profiles, the finished jobs' out_jobs rows and the counters that say when the
simulation is over. It handles the actors' messages (submissions, completions, waiters, kills) and the decision
process's events (EXECUTE_JOB, REJECT_JOB, KILL_JOB, CALL_ME_LATER, REGISTER_PROFILE / REGISTER_JOB,
SET_JOB_METADATA, NOTIFY), checking each as Batsim 4.2.1 does; anything else raises
:class:`~batreplay.engine.options.EngineError` naming real Batsim as the way to run it. It imports the engine's
kernel, events, server, execution, records, options and profiles, and procset.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

from procset import ProcSet

from batreplay.engine import events
from batreplay.engine import server as msg
from batreplay.engine.coscheduling import CoScheduledHosts
from batreplay.engine.execution import Machine, fraction_done, start_job
from batreplay.engine.kernel import PRIO_NEW_ACTOR, Kernel, printed_time
from batreplay.engine.options import EngineError, EngineOptions
from batreplay.engine.profiles import COMPOSED, UnsupportedProfileError, leaves_of, may_take_other_sizes, validate_profile
from batreplay.engine.records import Job, allocation_string, job_from_json
from batreplay.engine.server import Message, Server
from batreplay.engine.transfers import moves_bytes, stop_shared_task

#: The decision process's events the embedded engine plays.
DECISION_TYPES = frozenset({"EXECUTE_JOB", "REJECT_JOB", "CALL_ME_LATER", "KILL_JOB", "REGISTER_PROFILE",
                            "REGISTER_JOB", "SET_JOB_METADATA", "NOTIFY"})


class Handlers:
    """Batsim's job bookkeeping and protocol checks (attach the :class:`Server` as ``server`` before use).

    Attributes:
        jobs: every job by Batsim id (``workload!name``); profiles: by workload, then profile name.
        ended: the jobs ended so far (completed, killed or rejected), with their metadata then, in the order
            Batsim writes them in out_jobs.csv (see :func:`~batreplay.engine.records.job_records`).
    """

    def __init__(self, kernel: Kernel, machine: Machine, options: EngineOptions, nb_submitters: int,
                 host_names: list[str]) -> None:
        self.kernel = kernel
        self.host_names = host_names  # the compute hosts' names, by resource id
        self.machine = machine
        self.options = options
        self.server: Server | None = None
        self.jobs: dict[str, Job] = {}
        self.profiles: dict[str, dict[str, dict]] = {}
        self.ended: list[tuple[Job, str]] = []
        self._steps: dict[tuple[str, str], list] = {}  # the steps of each composed profile run so far
        self._job_order = itertools.count()
        self.nb_submitted = self.nb_completed = self.nb_running = self.nb_waiters = self.nb_killers = 0
        self.registration_finished = False
        self.submitters_expected = nb_submitters
        self.submitters_done = 0

    def new_job(self, wname: str, description: Mapping, origin: str) -> Job:
        """A job of workload ``wname`` from its JSON description (see
        :func:`~batreplay.engine.records.job_from_json`)."""
        return job_from_json(self.jobs, self.profiles, wname, description, origin, next(self._job_order))

    def check_speedup_model(self, job: Job) -> None:
        """Under co-scheduling, make sure the speedup model can rate ``job``.

        Raises:
            EngineError: it cannot (e.g. the job has no class of the speedup table).
        """
        model = self.options.speedup_model
        if model is not None:
            from batreplay.platforms.speedup import SpeedupModelError

            try:
                model.check_job(job.wire_description())
            except SpeedupModelError as err:
                raise EngineError(str(err)) from None

    def finished(self) -> bool:
        """True once every submitter said BYE, registration is over and no job, waiter or killer remains."""
        return (
            self.submitters_done == self.submitters_expected
            and (not self.options.dynamic_jobs or self.registration_finished)
            and self.nb_completed == self.nb_submitted
            and self.nb_running == 0
            and self.nb_waiters == 0
            and self.nb_killers == 0
        )

    # -------------------------------------------------------------- actors' messages
    def handle(self, message: Message) -> None:
        """What the server does with ``message`` (it is then received)."""
        kind = message.kind
        if kind == msg.DECISION:
            self._decision(message.payload)
        elif kind == msg.COMPLETED:
            self.nb_running -= 1
            self._completed(message.payload)
        elif kind == msg.READY:
            self.server.ready = True
        elif kind == msg.SUBMIT:
            for job in message.payload:
                job.state = "SUBMITTED"
                self.nb_submitted += 1
                self.server.append(events.JOB_SUBMITTED, job)
        elif kind == msg.WAITING_DONE:
            self.nb_waiters -= 1
            self.server.append(events.REQUESTED_CALL, None)
        elif kind == msg.BYE:
            self.submitters_done += 1
            if self.submitters_done == self.submitters_expected:
                self.server.append(events.NOTIFY, {"type": "no_more_static_job_to_submit"})
        elif kind == msg.KILLING_DONE:
            self._killing_done(*message.payload)
        # HELLO: nothing to do

    def _completed(self, job: Job) -> None:
        job.allocated_resources = allocation_string(job.allocation)
        job.allocation = None
        self.nb_completed += 1
        self.server.append(events.JOB_COMPLETED, job)
        self.ended.append((job, job.metadata))

    def _killing_done(self, requested: list[Job], killed: list[Job], progress: dict) -> None:
        for job in killed:
            self.nb_running -= 1
            self._completed(job)
        self.server.append(events.JOB_KILLED, {"job_ids": [j.full_id for j in requested], "job_progress": progress})
        self.nb_killers -= 1

    # -------------------------------------------------------------- the decision process's events
    def _decision(self, event: Mapping) -> None:
        kind = event["type"]
        data = event.get("data", {})
        if kind == "EXECUTE_JOB":
            self._execute(data)
        elif kind == "REJECT_JOB":
            job = self._job(data.get("job_id"), kind)
            if job.state != "SUBMITTED":
                raise EngineError(f"REJECT_JOB: job '{job.full_id}' is {job.state}, only a submitted job can be "
                                  "rejected")
            job.state = "REJECTED"
            self.nb_completed += 1
            self.ended.append((job, job.metadata))
        elif kind == "CALL_ME_LATER":
            self._call_me_later(float(data["timestamp"]))
        elif kind == "KILL_JOB":
            self._kill(data)
        elif kind == "REGISTER_PROFILE":
            self._register_profile(data)
        elif kind == "REGISTER_JOB":
            self._register_job(data)
        elif kind == "SET_JOB_METADATA":
            self._job(data.get("job_id"), kind).metadata = str(data.get("metadata", ""))
        elif kind == "NOTIFY":
            what = data.get("type")
            if what == "registration_finished":
                self.registration_finished = True
            elif what == "continue_registration":
                self.registration_finished = False
            else:
                raise EngineError(f"NOTIFY of type {what!r} is not supported by the embedded engine")

    def _job(self, job_id: Any, context: str) -> Job:
        job = self.jobs.get(str(job_id))
        if job is None or job.state == "NOT_SUBMITTED":
            raise EngineError(f"{context}: unknown or not yet submitted job {job_id!r}")
        return job

    def profile_of(self, job: Job) -> dict:
        """The profile ``job`` runs. Raises EngineError: the profile is unknown (no longer registered)."""
        try:
            return self.profiles[job.workload][job.profile_name]
        except KeyError:
            raise EngineError(f"job '{job.full_id}' uses the unknown profile '{job.profile_name}'") from None

    def _execute(self, data: Mapping) -> None:
        job = self._job(data.get("job_id"), "EXECUTE_JOB")
        if job.state != "SUBMITTED":
            raise EngineError(f"EXECUTE_JOB: job '{job.full_id}' is {job.state}, not SUBMITTED")
        alloc = data.get("alloc")
        if not isinstance(alloc, ProcSet):  # Batsim's text form (the direct driver hands over the ProcSet itself)
            try:
                alloc = ProcSet.from_str(str(data["alloc"]))
            except (KeyError, ValueError) as err:
                raise EngineError(
                    f"EXECUTE_JOB '{job.full_id}': bad allocation {data.get('alloc')!r} ({err})") from None
        if "additional_io_job" in data:
            raise EngineError(
                f"EXECUTE_JOB '{job.full_id}': additional I/O jobs need a real Batsim (batreplay run --engine batsim)")
        if "storage_mapping" in data:
            job.storage_mapping = self._storage_mapping(job, data["storage_mapping"])
        nb_hosts = len(self.machine.speeds)
        intervals = list(alloc.intervals())  # (first, last) pairs, increasing: one pass instead of len, min and max
        size = 0
        for first, last in intervals:
            size += last - first + 1
        if size == 0 or intervals[-1][1] >= nb_hosts or intervals[0][0] < 0:
            raise EngineError(f"EXECUTE_JOB '{job.full_id}': allocation {alloc} outside resources 0-{nb_hosts - 1}")
        profile = self.profile_of(job)
        if "mapping" in data:
            job.executors = self._executors(job, data["mapping"], alloc, size)
            size = len(job.executors)  # (Batsim then checks the executors, not the allocation)
        if size != job.res and not may_take_other_sizes(self.profiles[job.workload], job.profile_name):
            raise EngineError(
                f"EXECUTE_JOB '{job.full_id}': the job requests {job.res} resources but "
                + (f"its mapping has {size} executors" if job.executors else f"{size} were allocated ({alloc})"))
        clash = self.machine.clash(alloc) if self.machine.shared is None else None
        if clash is not None:
            raise EngineError(
                f"EXECUTE_JOB '{job.full_id}': resources {clash} are already computing another job "
                "(compute sharing is disabled)"
            )
        steps = None
        if profile["type"] == COMPOSED:  # (composed profiles come from workload files only: never changed)
            key = (job.workload, job.profile_name)
            steps = self._steps.get(key) or self._steps.setdefault(key, leaves_of(self.profiles[job.workload],
                                                                                  job.profile_name))
            for step in steps:  # Batsim aborts when a parallel step's cpu vector is not one value per host
                if step.profile["type"] == "parallel" and len(step.profile["cpu"]) != size:
                    raise EngineError(f"EXECUTE_JOB '{job.full_id}': step '{step.name}' of its composed profile has "
                                      f"{len(step.profile['cpu'])} cpu values but {size} "
                                      + ("executors" if job.executors else "hosts were allocated"))
        start_job(self.kernel, self.server, self.machine, job, profile, alloc, steps)
        self.nb_running += 1

    def _executors(self, job: Job, mapping: Any, alloc: ProcSet, size: int) -> list[int]:
        """The host of each executor of ``job`` from an EXECUTE_JOB's ``mapping`` (executor -> index within the
        allocation), as Batsim 4.2.1 reads it: keys and values are 32-bit integers or strings read as C++'s
        ``std::stoi`` reads them (leading blanks, a sign, the leading digits: ``"1.5"`` is 1), a later key naming the
        same executor wins, and the executors must be numbered from 0 without gaps. A mapping that puts several
        executors on one host is refused for a job that moves bytes (those of the executors of one host are not
        played).

        Raises:
            EngineError: naming the job and what is wrong, as Batsim aborts."""
        try:
            if not isinstance(mapping, Mapping) or not mapping:
                raise ValueError("it must be a non-empty object")
            read: dict[int, int] = {}
            for executor, index in mapping.items():
                read[_stoi(executor)] = _stoi(index)
            pairs = sorted(read.items())
        except ValueError as err:
            raise EngineError(f"EXECUTE_JOB '{job.full_id}': bad mapping {mapping!r} ({err})") from None
        hosts = list(alloc)
        for expected, (executor, index) in enumerate(pairs):
            if executor != expected:
                raise EngineError(f"EXECUTE_JOB '{job.full_id}': mapping {mapping!r} gives no resource to executor "
                                  f"{expected}")
            if not 0 <= index < size:
                raise EngineError(f"EXECUTE_JOB '{job.full_id}': mapping {mapping!r} gives executor {executor} the "
                                  f"resource {index} of an allocation of {size}")
        executors = [hosts[index] for _, index in pairs]
        transfers = self.machine.transfers
        if len(set(executors)) < len(executors) and (
                isinstance(self.machine.shared, CoScheduledHosts) or transfers is not None and any(
                    transfers.moves_bytes(step.profile) for step in leaves_of(self.profiles[job.workload],
                                                                               job.profile_name))):
            raise EngineError(f"EXECUTE_JOB '{job.full_id}': a mapping with several executors on one host is not "
                              "played for jobs that move bytes or co-scheduled jobs (run with --engine batsim)")
        return executors

    def _storage_mapping(self, job: Job, mapping: Any) -> dict[str, int]:
        """An EXECUTE_JOB's ``storage_mapping`` (storage label -> resource id), checked as Batsim 4.2.1 checks it (a
        non-empty object of 32-bit integers; null too is refused; whether an id is a storage host's is checked when a
        job uses it, :meth:`batreplay.engine.transfers.Transfers.hosts_of`).

        Raises:
            EngineError: naming the job and the mapping."""
        if not isinstance(mapping, Mapping) or not mapping or not all(
                isinstance(label, str) and type(host) is int and _is_int32(host)
                for label, host in mapping.items()):
            raise EngineError(f"EXECUTE_JOB '{job.full_id}': storage_mapping {mapping!r} must be a non-empty object "
                              "of storage labels and resource ids (integers)")
        return dict(mapping)

    def _call_me_later(self, target: float) -> None:
        kernel = self.kernel
        if not target > kernel.clock:
            raise EngineError(
                f"CALL_ME_LATER at {target} is not strictly later than the current time {kernel.clock} "
                "(Batsim aborts the simulation on this)"
            )
        self.nb_waiters += 1
        # a waiter sleeps max(target - clock, 1e-5) s, then sends its message
        kernel.sleep(max(target - kernel.clock, 1e-5), self.server.arrive, Message(msg.WAITING_DONE))

    def _kill(self, data: Mapping) -> None:
        job_ids = [str(j) for j in data.get("job_ids", [])]
        if not job_ids:
            raise EngineError("KILL_JOB without job_ids")
        to_kill = []
        for job_id in job_ids:
            job = self._job(job_id, "KILL_JOB")
            if job.kill_requested:
                continue
            if job.state != "RUNNING" and not job.state.startswith("COMPLETED"):
                raise EngineError(f"KILL_JOB: job '{job_id}' is neither running nor completed ({job.state})")
            job.kill_requested = True
            to_kill.append(job)
        if not to_kill:
            return
        kernel = self.kernel
        progress = {}
        killed = []
        for job in to_kill:
            if job.state == "RUNNING":
                progress[job.full_id] = self._progress(job)
                # Batsim cancels the parallel task of the step the job is at, whose executor then ends with code -2;
                # a sleep (delay step) is not cancelled: the executor is killed and the code stays -1
                step = self.profile_of(job) if job.steps is None else job.steps.current.profile
                job.return_code = -1 if step["type"] == "delay" else -2
                if job.task is not None:
                    stop_shared_task(kernel, job.task)
                    job.task = None
                job.completion_token = None
                job.steps = None
                kernel.cancel(job.activity)
                kernel.cancel(job.timeout)
                job.activity = job.timeout = None
                job.state = "COMPLETED_KILLED"
                job.end = kernel.clock
                self.machine.mark(job.allocation, 0)
                killed.append(job)
        self.nb_killers += 1
        # the killer is an actor Batsim creates now: it sends after the actors already woken in this step (the
        # request-reply actor's next decision or SCHED_READY), not before
        self.kernel.schedule(PRIO_NEW_ACTOR, self.server.arrive, Message(msg.KILLING_DONE, (to_kill, killed, progress)))

    def check_transfers(self, name: str, profile: Mapping) -> None:
        """Refuse a profile that moves bytes (``parallel_homogeneous_pfs``, ``data_staging``, ``parallel`` with a
        communication matrix, ``parallel_homogeneous`` with ``com``) where the engine cannot play it; otherwise every message of the run
        joins the links (:meth:`.transfers.Transfers.check`).

        Raises:
            UnsupportedProfileError: the platform's routes are unknown or cannot be played (see
                :meth:`.transfers.Transfers.check`), or jobs are co-scheduled (a speedup model)."""
        if not moves_bytes(profile):
            return
        transfers = self.machine.transfers
        if transfers is None:
            reason = "the platform's routes are unknown (it was not read from a SimGrid file)"
        elif self.options.speedup_model is not None:
            reason = "jobs are co-scheduled (a speedup model rates jobs, not links)"
        else:
            reason = transfers.check(profile, self.host_names)
        if reason is not None:
            raise UnsupportedProfileError(f"profile '{name}' ({profile.get('type')}) moves bytes, which the embedded "
                                          f"engine does not play here: {reason}. Run it with a real Batsim: "
                                          "batreplay run --engine batsim")

    def _progress(self, job: Job) -> dict:
        """Batsim's progress tree of running ``job`` (a KILL_JOB reply's ``job_progress`` entry): the fraction of
        its profile done, or for a composed profile, the step it is at (:meth:`.execution.Steps.progress`)."""
        if job.steps is not None:
            return job.steps.progress()
        done = fraction_done(self.kernel, self.machine, job, self.profile_of(job), job.start)
        return {"profile_name": job.profile_name, "progress": printed_time(done)}

    def _register_profile(self, data: Mapping) -> None:
        if not self.options.dynamic_jobs:
            raise EngineError("REGISTER_PROFILE needs dynamic jobs (Batsim's --enable-dynamic-jobs)")
        wname, pname, profile = str(data["workload_name"]), str(data["profile_name"]), dict(data["profile"])
        validate_profile(pname, profile)
        self.check_transfers(pname, profile)
        if profile.get("type") == COMPOSED:
            raise UnsupportedProfileError(
                f"REGISTER_PROFILE: profile '{pname}' is composed; Batsim 4.2.1 never links a registered composed "
                "profile to its steps (only those of workload files) and would crash when a job runs it")
        workload = self.profiles.setdefault(wname, {})
        if pname in workload:
            raise EngineError(f"REGISTER_PROFILE: profile '{pname}' of workload '{wname}' is already registered")
        workload[pname] = profile

    def _register_job(self, data: Mapping) -> None:
        if not self.options.dynamic_jobs:
            raise EngineError("REGISTER_JOB needs dynamic jobs (Batsim's --enable-dynamic-jobs)")
        description = dict(data["job"])
        job_id = str(data.get("job_id", description.get("id")))
        if "!" not in job_id:
            raise EngineError(f"REGISTER_JOB: job id {job_id!r} must be 'workload!name'")
        wname = job_id.split("!", 1)[0]
        if wname not in self.profiles:
            raise EngineError(f"REGISTER_JOB '{job_id}': workload '{wname}' has no registered profile")
        if "subtime" not in description:
            raise EngineError(f"REGISTER_JOB '{job_id}': the job needs a 'subtime' field")
        description["id"] = job_id
        job = self.new_job(wname, description, origin="REGISTER_JOB")
        job.description = dict(data["job"])
        job.registered = True
        self.check_speedup_model(job)
        job.state = "SUBMITTED"
        self.nb_submitted += 1
        if self.options.acknowledge_dynamic_jobs:
            self.server.append(events.JOB_SUBMITTED, job)


_STOI_PREFIX = re.compile(r"\s*([+-]?\d+)")


def _stoi(value: Any) -> int:
    """A key or value of an EXECUTE_JOB ``mapping`` as Batsim 4.2.1 reads it: a JSON integer of 32 bits, or a string
    read by ``std::stoi`` (leading blanks, an optional sign, then at least one digit; what follows is ignored).

    Raises:
        ValueError: anything else, or a number beyond 32 bits (Batsim aborts)."""
    if type(value) is int:
        number = value
    else:
        match = _STOI_PREFIX.match(value) if isinstance(value, str) else None
        if match is None:
            raise ValueError(f"{value!r} is not an integer nor a string that starts with one")
        number = int(match.group(1))
    if not _is_int32(number):
        raise ValueError(f"{value!r} is beyond 32-bit integers")
    return number


def _is_int32(number: int) -> bool:
    """Whether ``number`` fits in a C++ ``int`` of 32 bits, as Batsim 4.2.1 reads mapping ids."""
    return -2**31 <= number < 2**31
