"""The embedded engine: Batsim's side of the protocol for rigid jobs that compute, read and write or send bytes,
in-process.

:class:`BatsimEngine` answers the question "what would Batsim 4.2.1 send to the decision process next?" without
SimGrid, by assembling the engine's parts: the clock and SimGrid's step arithmetic (:mod:`.kernel`), Batsim's
server, its mailbox and actors (:mod:`.server`), the protocol handlers (:mod:`.handlers`, :mod:`.execution`) and
the job records (:mod:`.records`). It imports those engine modules, and batreplay.formats through them. It is
driven by two calls, mirroring one ZeroMQ request/reply round (:meth:`BatsimEngine.next_events` is
:meth:`~BatsimEngine.next_request` with the events kept typed, for the direct driver of :mod:`.direct`):

>>> engine = BatsimEngine(hosts, {"w0": workload})      # doctest: +SKIP
>>> request = engine.next_request()                       # a Batsim message: {"now": ..., "events": [...]}
>>> engine.apply_reply({"now": request["now"], "events": [...]})
... repeat until next_request() returns None (after SIMULATION_ENDS was answered).

Which events share a message depends on sub-microsecond timing: every inter-actor message of Batsim is a 1-byte
transfer (8 ns), and which messages are still queued when the server looks at its mailbox decides the grouping
(:mod:`.server`); hence the engine replays SimGrid's own floating-point arithmetic (:mod:`.kernel`). Why floats
matter: two jobs started by one reply, with equal durations, start one message apart (8 ns); when the first one
ends, its JOB_COMPLETED transfer (8 ns) races with the second job's remaining sleep (8 ns as well, up to the
rounding accumulated while subtracting every step's ``delta`` from a duration of thousands of seconds). If that
sleep comes out shorter, even by 1e-13 s, the transfer has work left far above 1e-14, so the second executor
wakes one step earlier, queues its message, and Batsim sends both completions together (golden ``kth2000`` at
t = 272065 and 462798); if it comes out equal or longer, it ends in the transfer's step (the 1e-9 s tolerance),
after the server's check, and the completions go out in two messages (goldens ``simultaneous``, ``dynamic``,
``coincide``). A tick-counting model cannot tell these apart; this one reproduces every golden recording message
for message.

Times reported to the decision process and written to the output files are this clock as Batsim prints it,
with six decimals (:func:`printed_time`): the scheduler reads the very numbers a real Batsim would send,
including the microseconds that SimGrid's internal messages add up over long chains of events (golden
``kth2000``: a job starting at 272440.000001). Durations and progress are computed from the unrounded clock,
as Batsim does.

Scope: ``delay``, ``parallel_homogeneous``, ``parallel_homogeneous_total`` and ``parallel`` profiles
without communication, ``composed`` profiles of them (:class:`.execution.Steps`), return codes; walltime kills;
compute sharing (:mod:`.sharing`, ``EngineOptions.compute_sharing``);
EXECUTE_JOB, REJECT_JOB, CALL_ME_LATER, KILL_JOB,
REGISTER_PROFILE / REGISTER_JOB (with or without acknowledgement), SET_JOB_METADATA and NOTIFY
``registration_finished`` / ``continue_registration``. Anything else raises :class:`EngineError` naming
real Batsim as the way to run it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from batreplay.engine.events import SIMULATION_ENDS, Event, wire_message
from batreplay.engine.execution import Machine
from batreplay.engine.handlers import DECISION_TYPES, Handlers
from batreplay.engine.kernel import Kernel, printed_time
from batreplay.engine.options import EngineError, EngineOptions
from batreplay.engine.profiles import profiles_in_use, validate_profiles
from batreplay.engine.transfers import Transfers
from batreplay.platforms.model import UNTYPED
from batreplay.platforms.routing import Network
from batreplay.engine.records import Job, job_columns, job_records
from batreplay.formats.out_jobs_writer import JobRecord
from batreplay.engine.server import Server, simulation_begins_event

__all__ = ["BatsimEngine", "EngineError", "EngineOptions", "Job", "printed_time", "DEFAULT_MESSAGE_BANDWIDTH"]

#: Bandwidth (bytes/s) of the links carrying Batsim's 1-byte inter-actor messages on the usual platforms.
DEFAULT_MESSAGE_BANDWIDTH = 125e6


class BatsimEngine:
    """In-process stand-in for Batsim 4.2.1 (rigid jobs).

    Args:
        hosts: compute hosts as ``(name, speed)`` pairs in Batsim's resource-id order (lexicographic host
            name order; speed in flop/s).
        workloads: static workloads by name (``w0``, ``w1``, ... in ``-w`` order), each a Batsim workload
            JSON document (``{"jobs": [...], "profiles": {...}}``).
        workload_files: the file name Batsim would report for each workload in SIMULATION_BEGINS.
        options: protocol options (dynamic jobs, acknowledgement, profile reuse).
        message_bandwidth: bytes/s of the links carrying Batsim's 1-byte internal messages (default 125e6,
            the links of the golden platforms and of every platform ``batreplay platform`` writes); it only
            sets how long those messages take (8 ns), hence which same-instant events share a message.
        cores: cores of each host, in resource-id order (SimGrid's ``core`` attribute; default 1 each); only
            compute sharing (``options.compute_sharing``) uses them.
        host_properties: each host's ``(properties, zone_properties)`` from the platform file, sent in
            SIMULATION_BEGINS as Batsim sends them (node types, job slots...); default none.
        storage: each storage host's ``(name, properties, zone_properties)``, in resource-id order (ids after the
            compute hosts'; :attr:`batreplay.platforms.model.Platform.storage_resources`); listed in
            SIMULATION_BEGINS.
        network: the platform's routes (:attr:`batreplay.platforms.model.Platform.network`), for jobs that move bytes
            (``parallel_homogeneous_pfs``, ``parallel`` with communication): hosts and links in one solver
            (:mod:`.transfers`); None: such jobs are refused.
        master_host: the master host's name, where Batsim's messages go (their routes are checked, and they cross
            their links in the solver when the run moves bytes or a route is not at ``message_bandwidth``); used with
            ``network``.

    Attributes:
        records: the out_jobs.csv rows (:class:`batreplay.formats.out_jobs_writer.JobRecord`) of the jobs ended so far
            (a property that builds them all at each access; :meth:`record_columns` for a run's output).
        jobs: every job (:class:`~batreplay.engine.records.Job`) by Batsim id, ``workload!name``.
        nb_hosts: number of compute hosts.

    Raises:
        InvalidProfileError / UnsupportedProfileError: a profile Batsim refuses or the engine cannot run.
        EngineError: malformed workload (duplicate job id, unknown profile, ...), or a platform on which Batsim's
            messages cannot be timed (:meth:`.transfers.Transfers.check_messages`).
    """

    def __init__(
        self,
        hosts: Sequence[tuple[str, float]],
        workloads: Mapping[str, Mapping],
        workload_files: Mapping[str, str] | None = None,
        options: EngineOptions | None = None,
        message_bandwidth: float = DEFAULT_MESSAGE_BANDWIDTH,
        cores: Sequence[int] | None = None,
        host_properties: Sequence[tuple[Mapping, Mapping]] | None = None,
        storage: Sequence[tuple[str, Mapping, Mapping]] = (),
        network: Network | None = None,
        master_host: str = "master_host",
    ) -> None:
        self.options = options or EngineOptions()
        self.host_names = [name for name, _ in hosts]
        self.nb_hosts = len(hosts)
        self.kernel = Kernel()
        transfers = None
        if network is not None:
            transfers = Transfers(self.host_names + [name for name, _, _ in storage],
                                  [speed for _, speed in hosts] + [1.0] * len(storage),  # (storage hosts never compute)
                                  list(cores or [1] * len(hosts)) + [1] * len(storage), network, master_host,
                                  nb_compute=len(hosts),
                                  node_types=[props.get("node_type") or UNTYPED for props, _ in host_properties]
                                  if host_properties else None)
            problem = transfers.check_messages(self.host_names, message_bandwidth)
            if problem is not None:
                raise EngineError(f"the embedded engine cannot time Batsim's messages on this platform: {problem}; "
                                  "run it with a real Batsim: batreplay run --engine batsim")
        machine = Machine([speed for _, speed in hosts], cores, sharing=self.options.compute_sharing,
                          speedup_model=self.options.speedup_model, transfers=transfers)
        self.handlers = Handlers(self.kernel, machine, self.options, len(workloads), self.host_names)
        self.server = Server(self.kernel, message_bandwidth, self.handlers.handle, self.handlers.finished,
                             carry=None if transfers is None else transfers.carry)
        self.handlers.server = self.server
        self.jobs = self.handlers.jobs
        self.profiles = self.handlers.profiles
        self._awaiting_reply = False

        files = dict(workload_files or {})
        static_jobs: dict[str, list[Job]] = {}
        for wname, document in workloads.items():
            profiles = document.get("profiles", {})
            validate_profiles(profiles)
            self.profiles[wname] = dict(profiles)  # the profiles themselves are read, never changed
            static_jobs[wname] = [self.handlers.new_job(wname, j, origin="workload") for j in document["jobs"]]
            # Batsim drops the profiles no job of the file uses, once the file is checked: SIMULATION_BEGINS
            # lists only the others, and no later job can use them (src/workload.cpp, golden sharing-group)
            used = profiles_in_use(profiles, {job.profile_name for job in static_jobs[wname]})
            for job in static_jobs[wname]:
                self.handlers.check_speedup_model(job)  # before anything runs
            self.profiles[wname] = {name: profile for name, profile in profiles.items() if name in used}
            for pname, profile in self.profiles[wname].items():  # (those no job can use are not played)
                self.handlers.check_transfers(pname, profile)
            files.setdefault(wname, f"{wname}.json")

        # Batsim sends SIMULATION_BEGINS before anything else happens.
        self.server.buffer.append(simulation_begins_event(self.options, self.host_names, files, self.profiles,
                                                          host_properties, storage))
        for wname, jobs in static_jobs.items():
            # Batsim submits by submission time, then by job id as a C++ string (bytes), not in file order
            # (src/jobs.cpp, job_comparator_subtime_number; golden sharing-group)
            jobs.sort(key=lambda j: (j.subtime, j.full_id.encode()))
            self.server.start_submitter(wname, jobs)
        self.server.flush()

    def io_columns(self) -> dict[str, list] | None:
        """The read and write rates (bytes/s) of each node type's hosts over time
        (:meth:`batreplay.engine.io_trace.IoTrace.columns`), or None when no job read or wrote on a storage host
        (or the platform's links are not played)."""
        transfers = self.handlers.machine.transfers
        if transfers is None or not transfers.io_trace.times:
            return None
        return transfers.io_trace.columns()

    @property
    def records(self) -> list[JobRecord]:
        """The out_jobs.csv rows (:class:`batreplay.formats.out_jobs_writer.JobRecord`) of the jobs ended so far, in the
        order Batsim writes them (built when asked)."""
        return job_records(self.handlers.ended)

    def ended_jobs(self, first: int = 0) -> list[Job]:
        """The jobs ended so far (completed, killed or rejected), in the order Batsim writes them, from position
        ``first`` on (``len(ended_jobs())`` is how many ended)."""
        return [job for job, _metadata in self.handlers.ended[first:]]

    def record_columns(self) -> dict[str, Sequence]:
        """:attr:`records` as columns, field -> one value per job (see
        :func:`batreplay.engine.records.job_columns`): no object per job."""
        return job_columns(self.handlers.ended)

    def forget_jobs(self) -> None:
        """Let go of every job, once their records were taken: the memory they hold is freed at once, before the
        caller writes the outputs (the engine can no longer answer after this)."""
        self.handlers.jobs.clear()
        self.handlers.ended.clear()

    @property
    def now(self) -> float:
        """Current simulated time in seconds, as Batsim prints it."""
        return self.kernel.reported

    @property
    def clock(self) -> float:
        """Current simulated time in seconds, unrounded (SimGrid's clock)."""
        return self.kernel.clock

    def next_request(self) -> dict | None:
        """Run the simulation until Batsim would send a message; return it as Batsim's JSON objects,
        ``{"now": s, "events": [...]}`` (``None`` once finished).

        Raises:
            EngineError: called twice without :meth:`apply_reply`, or the simulation is stuck (nothing left
                to happen while jobs are still pending: a decision process that never starts a job).
        """
        request = self.next_events()
        return None if request is None else wire_message(*request)

    def next_events(self) -> tuple[float, list[Event]] | None:
        """:meth:`next_request` with the events kept typed: ``(now, events)`` (see :mod:`.events`), or None once
        finished.

        Raises:
            EngineError: as :meth:`next_request`.
        """
        if self._awaiting_reply:
            raise EngineError("next_request() called before the previous request was answered")
        server = self.server
        if server.end_acknowledged:
            return None
        server.run()
        if server.pending is None:
            pending = [j.full_id for j in self.jobs.values() if j.state in ("SUBMITTED", "RUNNING")][:5]
            raise EngineError(
                "deadlock: nothing more can happen but the simulation is not finished "
                f"(jobs still pending, e.g. {pending}; registration finished: {self.handlers.registration_finished})"
            )
        self._awaiting_reply = True
        return server.pending

    def apply_reply(self, reply: Mapping) -> None:
        """Inject the decision process's reply to the last request.

        The decisions reach Batsim's server one by one, each as one inter-actor message, then SCHED_READY.

        Raises:
            EngineError: no request outstanding, events not sorted by timestamp, or an event the engine does
                not support.
        """
        if not self._awaiting_reply:
            raise EngineError("apply_reply() without an outstanding request")
        self._awaiting_reply = False
        server = self.server
        (_now, sent), server.pending = server.pending, None
        if sent and sent[-1].type == SIMULATION_ENDS:
            server.end_acknowledged = True
            server.ready = True
            return
        now = self.kernel.reported
        events = list(reply.get("events", []))
        previous = -float("inf")
        for event in events:
            stamp = float(event.get("timestamp", now))
            if stamp < previous:
                raise EngineError(f"reply events are not sorted by timestamp ({stamp} after {previous})")
            previous = stamp
            if event.get("type") not in DECISION_TYPES:
                raise EngineError(
                    f"event type {event.get('type')!r} is not supported by the embedded engine "
                    "(supported: " + ", ".join(sorted(DECISION_TYPES)) + "); run with a real Batsim: "
                    "batreplay run --engine batsim"
                )
        server.inject_decisions(events, float(reply.get("now", now)))
