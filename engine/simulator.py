"""The embedded engine: Batsim's side of the protocol for rigid, compute-only jobs, in-process.

The engine answers the question "what would Batsim 4.2.1 send to the decision process next?" without
SimGrid. It is driven by two calls, mirroring one ZeroMQ request/reply round:

>>> engine = BatsimEngine(hosts, {"w0": workload})      # doctest: +SKIP
>>> request = engine.next_request()                       # a Batsim message: {"now": ..., "events": [...]}
>>> engine.apply_reply({"now": request["now"], "events": [...]})
... repeat until next_request() returns None (after SIMULATION_ENDS was answered).

How events are grouped into messages
------------------------------------
Batsim's server is one SimGrid actor that receives inter-actor messages one at a time from a mailbox and
collects protocol events in a buffer. It sends the buffer to the decision process only when (a) no request
is outstanding, (b) its mailbox is empty and (c) the buffer is not empty. Every inter-actor message is a
1-byte transfer over the platform's links, so it takes a tiny but non-zero simulated time; the actors that
produce messages (static job submitters, job executors, waiters behind CALL_ME_LATER, killers, and the
request-reply actor that injects the scheduler's decisions one by one, then SCHED_READY) therefore reach
the server in a definite order even at one instant. Which messages are still queued when the server looks
at its mailbox decides the grouping, and that order depends on sub-microsecond timing, down to floating-point
rounding. The engine therefore replays SimGrid's own time arithmetic, as Batsim 4.2.1 configures it
(``host/model:ptask_L07``, SimGrid 3.32), with Python floats (IEEE doubles, as in SimGrid):

- *Activities.* A job of profile ``delay`` (or one stopped by its walltime), a waiter and a sleeping
  submitter or request-reply actor are *sleeps* (a remaining duration in seconds). A message is a
  *transfer*: 1 unit of work progressing at ``message_bandwidth`` units/s (1 byte on 125 MB/s links: 8 ns).
  A parallel-task job is a *computation*: 1 unit of work progressing at ``min(speed / flop)`` over its
  hosts. Only one transfer runs at a time: a sender's message starts moving when the server takes it.
- *Steps (full update, as ptask_L07 does).* The clock jumps by ``delta``, the smallest time left over all
  activities (a sleep's remaining duration; ``remaining work / rate`` otherwise). Every activity then loses
  ``delta`` (sleeps) or ``rate * delta`` (work), computed in floating point, and every activity whose rest
  falls below SimGrid's precision ends in that step: ``1e-9`` s for sleeps (``precision/timing``) but
  ``1e-14`` work units for transfers and computations (``precision/work-amount`` times the timing one).
- *Lazily.* Only activities expected to end within 1 ms of the earliest one are updated at each step; the
  others replay the steps they missed (same order, same rounding; numpy's sequential ``subtract.accumulate``
  for long stretches) when they come near the front: the same numbers as a full update at every step, at a
  cost that does not grow with the number of running jobs.
- *Within a step* the server first handles the message whose transfer ended, and checks its mailbox, before
  the sends of the actors woken in the same step reach the mailbox (SimGrid runs all woken actors, then
  handles their requests); those sends queue in the order the actors' activities were started, ahead of
  the sends of actors that only run later in the step: the request-reply actor the server creates to send
  a message (its decisions reach the mailbox after a job's JOB_COMPLETED sent in the same step), a killer.
- Actors read SimGrid's clock as Batsim does: a submitter sleeps ``next subtime - clock read after its
  previous wake-up`` (so it wakes late by the duration of the send in between) and submits the job it slept
  for whatever the clock reads when it wakes; a waiter sleeps
  ``max(target - clock, 1e-5)``; the request-reply actor sleeps until a decision's timestamp when it is still
  ahead of the clock (Batsim's ``send_message_at_time``, also used for SCHED_READY at the reply's ``now``).

Why floats matter: two jobs started by one reply, with equal durations, start one message apart (8 ns);
when the first one ends, its JOB_COMPLETED transfer (8 ns) races with the second job's remaining sleep
(8 ns as well, up to the rounding accumulated while subtracting every step's ``delta`` from a duration of
thousands of seconds). If that sleep comes out shorter, even by 1e-13 s, the transfer has work left far
above 1e-14, so the second executor wakes one step earlier, queues its message, and Batsim sends both
completions together (golden ``kth2000`` at t = 272065 and 462798); if it comes out equal or longer, it
ends in the transfer's step (the 1e-9 s tolerance), after the server's check, and the completions go out
in two messages (goldens ``simultaneous``, ``dynamic``, ``coincide``). A tick-counting model cannot tell
these apart; this one reproduces every golden recording message for message.

Times reported to the decision process and written to the output files are this clock as Batsim prints it,
with six decimals (:func:`printed_time`): the scheduler reads the very numbers a real Batsim would send,
including the microseconds that SimGrid's internal messages add up over long chains of events (golden
``kth2000``: a job starting at 272440.000001). Durations and progress are computed from the unrounded clock,
as Batsim does.

Scope: ``delay``, ``parallel_homogeneous``, ``parallel_homogeneous_total`` and ``parallel`` profiles
without communication; walltime kills; EXECUTE_JOB, REJECT_JOB, CALL_ME_LATER, KILL_JOB,
REGISTER_PROFILE / REGISTER_JOB (with or without acknowledgement), SET_JOB_METADATA and NOTIFY
``registration_finished`` / ``continue_registration``. Anything else raises :class:`EngineError` naming
real Batsim as the way to run it.
"""

from __future__ import annotations

import copy
import heapq
import itertools
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from procset import ProcSet

from batreplay.engine.profiles import execution_time, validate_profile
from batreplay.formats.out_jobs import BATSIM_VERSION, JobRecord



def printed_time(value: float) -> float:
    """``value`` as Batsim writes it (``%f``: six decimals) and the decision process reads it back; Batsim
    formats every time (and a killed job's progress) this way in its messages and output files."""
    return float("%.6f" % value)


class EngineError(RuntimeError):
    """The decision process asked for something Batsim would refuse, or the engine does not support."""


# Inter-actor message kinds (what reaches the server's mailbox).
_HELLO, _SUBMIT, _BYE, _COMPLETED, _WAITING_DONE, _READY, _DECISION, _KILLING_DONE = range(8)
# Order of the work done at one simulation step: a finished transfer is handled before new sends.
_PRIO_DELIVERY, _PRIO_SEND = 0, 1
# SimGrid's numerical precisions (``precision/timing`` and ``precision/work-amount`` x timing): a sleep whose
# remaining duration falls below the first, or a transfer/computation whose remaining work falls below the
# second, is over.
_TIMING_PRECISION = 1e-9
_WORK_PRECISION = 1e-5 * 1e-9
#: Activities expected to end within this many seconds of the earliest one are updated at each step (see
#: ``BatsimEngine._advance``); rounding keeps expected ends within far less than this of the exact ones.
_LOOKAHEAD = 1e-3
#: A parallel task whose duration is within this fraction (of 1 + walltime, in seconds) of its walltime races
#: its timeout with SimGrid's arithmetic; beyond it, the outcome is decided at start (see ``_start_job``).
_RACE_BAND = 1e-6
_SUCCESS, _WALLTIME_REACHED = "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"
#: Up to this many missed steps are replayed in Python, more with numpy.
_SCALAR_REPLAY = 24
#: Bandwidth (bytes/s) of the links carrying Batsim's 1-byte inter-actor messages on the usual platforms.
DEFAULT_MESSAGE_BANDWIDTH = 125e6


@dataclass
class EngineOptions:
    """Batsim command-line options that change the protocol (see Batsim's ``docs/cli.rst``).

    Attributes:
        dynamic_jobs: ``--enable-dynamic-jobs``: REGISTER_JOB allowed; the simulation never ends before
            NOTIFY ``registration_finished``.
        acknowledge_dynamic_jobs: ``--acknowledge-dynamic-jobs``: each REGISTER_JOB is echoed as a
            JOB_SUBMITTED in the next message.
        profile_reuse: ``--enable-profile-reuse``: registered profiles stay usable after their jobs end.
    """

    dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    profile_reuse: bool = False


@dataclass
class Job:
    """One job as the engine tracks it (times in seconds, ``res`` in nodes)."""

    workload: str
    name: str
    description: dict
    profile_name: str
    subtime: float
    walltime: float
    res: int
    order: int
    state: str = "SUBMITTED"
    start: float | None = None
    runtime: float | None = None
    end: float | None = None  # the clock when it completed or was killed (unrounded, as SimGrid's)
    timeout: Any = None  # the walltime sleep racing a parallel task whose duration is close to its walltime
    allocation: ProcSet | None = None
    kill_requested: bool = False
    metadata: str = ""
    completion_token: int | None = None
    activity: Any = None

    @property
    def full_id(self) -> str:
        """Batsim's job id, ``workload!name``."""
        return f"{self.workload}!{self.name}"


class _Activity:
    """A SimGrid action that takes simulated time: a sleep (``rate == 0``: ``remaining`` seconds) or a
    transfer/computation (``remaining`` work at ``rate`` work units per second).

    ``remaining`` is exact as of step ``synced`` (the number of clock steps taken when it was last brought
    up to date)."""

    __slots__ = ("remaining", "rate", "prio", "seq", "action", "argument", "alive", "synced")

    def __init__(self, remaining: float, rate: float, prio: int, seq: int,
                 action: Callable[..., None], argument: Any, synced: int) -> None:
        self.remaining = remaining
        self.rate = rate
        self.prio = prio
        self.seq = seq
        self.action = action
        self.argument = argument
        self.alive = True
        self.synced = synced

    def time_left(self) -> float:
        """Seconds until it ends if nothing changes (as SimGrid computes it)."""
        if self.rate:
            return self.remaining / self.rate if self.remaining > 0 else 0.0
        return self.remaining


@dataclass
class _Message:
    kind: int
    payload: Any = None
    on_received: Callable[[], None] | None = None


@dataclass
class _Server:
    ready: bool = False
    busy: bool = False
    mailbox: deque = field(default_factory=deque)
    buffer: list = field(default_factory=list)
    end_sent: bool = False
    end_acknowledged: bool = False


def _allocation_string(alloc: ProcSet) -> str:
    """Batsim's textual interval set: ``"0-3 7"``."""
    return str(alloc)


class BatsimEngine:
    """In-process stand-in for Batsim 4.2.1 (compute-only rigid jobs).

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

    Raises:
        InvalidProfileError / UnsupportedProfileError: a profile Batsim refuses or the engine cannot run.
        EngineError: malformed workload (duplicate job id, unknown profile, ...).
    """

    def __init__(
        self,
        hosts: Sequence[tuple[str, float]],
        workloads: Mapping[str, Mapping],
        workload_files: Mapping[str, str] | None = None,
        options: EngineOptions | None = None,
        message_bandwidth: float = DEFAULT_MESSAGE_BANDWIDTH,
    ) -> None:
        self.options = options or EngineOptions()
        self.host_names = [name for name, _ in hosts]
        self.host_speeds = [float(speed) for _, speed in hosts]
        self.nb_hosts = len(hosts)
        self._busy = bytearray(len(hosts))  # 1 where a host computes a job
        self.jobs: dict[str, Job] = {}
        self.profiles: dict[str, dict[str, dict]] = {}
        self.records: list[JobRecord] = []
        self._ready: list = []
        self._activities: list = []  # heap of (expected end on the clock, seq, activity); lazy deletion
        self._deltas = np.empty(4096)  # the clock steps taken, from step number self._delta_base on
        self._delta_base = 0
        self._nb_steps = 0
        self._seq = itertools.count()
        self._server = _Server()
        self._clock = 0.0
        self._reported = 0.0  # the clock as Batsim prints it (printed_time)
        self._message_rate = float(message_bandwidth)
        self._pending_request: dict | None = None
        self._awaiting_reply = False
        self._job_order = itertools.count()
        self.nb_submitted = 0
        self.nb_completed = 0
        self.nb_running = 0
        self.nb_waiters = 0
        self.nb_killers = 0
        self.registration_finished = False
        self._static_workloads = dict(workloads)
        self._submitters_expected = len(workloads)
        self._submitters_done = 0

        files = dict(workload_files or {})
        static_jobs: dict[str, list[Job]] = {}
        for wname, document in workloads.items():
            profiles = document.get("profiles", {})
            for pname, profile in profiles.items():
                validate_profile(pname, profile)
            self.profiles[wname] = {name: dict(p) for name, p in profiles.items()}
            static_jobs[wname] = [self._job_from_json(wname, j, origin="workload") for j in document["jobs"]]
            files.setdefault(wname, f"{wname}.json")
        self._workload_files = files

        # Batsim sends SIMULATION_BEGINS before anything else happens.
        self._server.buffer.append(self._simulation_begins_event())
        for wname, jobs in static_jobs.items():
            jobs.sort(key=lambda j: (j.subtime, j.order))
            self._start_submitter(wname, jobs)
        self._flush()

    # ------------------------------------------------------------------ workload helpers
    def _job_from_json(self, wname: str, description: Mapping, origin: str) -> Job:
        try:
            raw_id = str(description["id"])
            name = raw_id.split("!", 1)[1] if "!" in raw_id else raw_id
            profile_name = str(description["profile"])
            res = int(description["res"])
            subtime = float(description["subtime"])
        except KeyError as missing:
            raise EngineError(f"{origin}: job {description.get('id', '?')!r} lacks the field {missing}") from None
        walltime = float(description.get("walltime", -1))
        if profile_name not in self.profiles.get(wname, {}):
            raise EngineError(f"{origin}: job '{wname}!{name}' uses the unknown profile '{profile_name}'")
        if res <= 0:
            raise EngineError(f"{origin}: job '{wname}!{name}' requests {res} resources (must be > 0)")
        full_id = f"{wname}!{name}"
        if full_id in self.jobs:
            raise EngineError(f"{origin}: job id '{full_id}' is not unique")
        job_json = dict(description)
        job_json["id"] = full_id
        job = Job(wname, name, job_json, profile_name, subtime, walltime, res, next(self._job_order))
        job.state = "NOT_SUBMITTED"
        self.jobs[full_id] = job
        return job

    def _simulation_begins_event(self) -> dict:
        config = {
            "redis-enabled": False,
            "redis-hostname": "127.0.0.1",
            "redis-port": 6379,
            "redis-prefix": "default",
            "profiles-forwarded-on-submission": False,
            "dynamic-jobs-enabled": self.options.dynamic_jobs,
            "dynamic-jobs-acknowledged": self.options.acknowledge_dynamic_jobs,
            "profile-reuse-enabled": self.options.profile_reuse,
            "sched-config": "",
            "forward-unknown-events": False,
        }
        resources = [
            {"id": i, "name": name, "state": "idle", "properties": {"role": ""}, "zone_properties": {}}
            for i, name in enumerate(self.host_names)
        ]
        return {
            "timestamp": 0.0,
            "type": "SIMULATION_BEGINS",
            "data": {
                "nb_resources": self.nb_hosts,
                "nb_compute_resources": self.nb_hosts,
                "nb_storage_resources": 0,
                "allow_compute_sharing": False,
                "allow_storage_sharing": True,
                "config": config,
                "compute_resources": resources,
                "storage_resources": [],
                "workloads": dict(self._workload_files),
                "profiles": copy.deepcopy(self.profiles),
            },
        }

    # ------------------------------------------------------------------ discrete-event core
    def _schedule(self, prio: int, action: Callable[..., None], argument: Any = None) -> None:
        """Run ``action(argument)`` (or ``action()`` when ``argument`` is None) at the current step."""
        heapq.heappush(self._ready, (prio, next(self._seq), action, argument))

    def _start_activity(self, remaining: float, rate: float, prio: int,
                        action: Callable[..., None], argument: Any = None) -> _Activity:
        """Start a timed SimGrid action; ``action(argument)`` runs at the step where it ends."""
        seq = next(self._seq)
        activity = _Activity(remaining, rate, prio, seq, action, argument, self._nb_steps)
        # heap key: the clock value at which it is expected to end
        heapq.heappush(self._activities, (self._clock + activity.time_left(), seq, activity))
        return activity

    def _sleep(self, duration: float, action: Callable[..., None], argument: Any = None) -> _Activity | None:
        """``sleep_for(duration)`` of an actor, then ``action``: a no-op sleep when ``duration <= 0``."""
        if not duration > 0:
            self._schedule(_PRIO_SEND, action, argument)
            return None
        return self._start_activity(duration, 0.0, _PRIO_SEND, action, argument)

    def _cancel(self, activity: _Activity | None) -> None:
        if activity is not None:
            activity.alive = False  # its heap entry is dropped when it comes up

    def _bring_up_to_date(self, activity: _Activity) -> None:
        """Apply to ``activity`` the clock steps taken since it was last updated, one by one and rounded as
        SimGrid rounds them (``remaining -= delta`` for a sleep, ``remaining -= rate * delta`` for work)."""
        first = activity.synced - self._delta_base
        last = self._nb_steps - self._delta_base
        count = last - first
        if count <= 0:
            return
        deltas = self._deltas
        remaining = activity.remaining
        rate = activity.rate
        if count <= _SCALAR_REPLAY:
            if rate:
                for index in range(first, last):
                    remaining -= rate * float(deltas[index])
            else:
                for index in range(first, last):
                    remaining -= float(deltas[index])
        else:  # the same sequence of rounded subtractions, in numpy (accumulate is sequential)
            steps = np.empty(count + 1)
            steps[0] = remaining
            if rate:
                np.multiply(deltas[first:last], rate, out=steps[1:])
            else:
                steps[1:] = deltas[first:last]
            remaining = float(np.subtract.accumulate(steps)[-1])
        activity.remaining = remaining
        activity.synced = self._nb_steps

    def _record_step(self, delta: float) -> None:
        """Append one clock step to the history that lagging activities replay."""
        index = self._nb_steps - self._delta_base
        if index == len(self._deltas):
            oldest = min((entry[2].synced for entry in self._activities if entry[2].alive), default=self._nb_steps)
            drop = oldest - self._delta_base
            if drop > 0:
                self._deltas[:index - drop] = self._deltas[drop:index]
                self._delta_base = oldest
                index -= drop
            if index > len(self._deltas) // 2:
                grown = np.empty(2 * len(self._deltas))
                grown[:index] = self._deltas[:index]
                self._deltas = grown
        self._deltas[index] = delta
        self._nb_steps += 1

    def _advance(self) -> bool:
        """One SimGrid step (ptask_L07 host model, full update): the clock jumps to the earliest end of an
        activity; every activity then loses that duration (sleeps) or the work done meanwhile (transfers,
        computations) and ends when what remains is below SimGrid's precision.

        Only the activities expected to end within :data:`_LOOKAHEAD` seconds of the earliest one are
        updated at the step; the others replay the steps they missed, in the same order and with the same
        rounding, when they come near the front. Their expected ends are exact up to rounding (far below
        the lookahead), so an activity left aside can neither be the earliest nor end at this step: the
        result is SimGrid's full update, computed lazily."""
        heap = self._activities
        while heap and not heap[0][2].alive:
            heapq.heappop(heap)
        if not heap:
            return False
        key, _seq, first = heapq.heappop(heap)
        if first.synced != self._nb_steps:
            self._bring_up_to_date(first)
        horizon = key + _LOOKAHEAD
        if not heap or heap[0][0] > horizon:  # the usual case: one activity ends alone, all of it is spent
            delta = first.time_left()
            self._clock += delta
            self._record_step(delta)
            first.remaining = 0.0
            first.alive = False
            first.synced = self._nb_steps
            self._reported = printed_time(self._clock)
            heapq.heappush(self._ready, (first.prio, first.seq, first.action, first.argument))
            return True
        front = [first]
        while heap and heap[0][0] <= horizon:
            activity = heapq.heappop(heap)[2]
            if activity.alive:
                self._bring_up_to_date(activity)
                front.append(activity)
        delta = min([activity.time_left() for activity in front])
        self._clock += delta
        self._record_step(delta)
        steps = self._nb_steps
        ended = []
        for activity in front:
            if activity.rate:
                activity.remaining -= activity.rate * delta
                done = activity.remaining < _WORK_PRECISION
            else:
                activity.remaining -= delta
                done = activity.remaining < _TIMING_PRECISION
            activity.synced = steps
            if done:
                activity.remaining = 0.0
                activity.alive = False
                ended.append(activity)
            else:
                heapq.heappush(heap, (self._clock + activity.time_left(), activity.seq, activity))
        self._reported = printed_time(self._clock)
        for activity in ended:
            heapq.heappush(self._ready, (activity.prio, activity.seq, activity.action, activity.argument))
        return True

    def _send(self, message: _Message) -> None:
        """An actor sends ``message`` to the server now (blocking until received)."""
        self._schedule(_PRIO_SEND, self._arrive, message)

    def _arrive(self, message: _Message) -> None:
        self._server.mailbox.append(message)
        if not self._server.busy:
            self._start_transfer()

    def _start_transfer(self) -> None:
        server = self._server
        message = server.mailbox.popleft()
        server.busy = True
        self._start_activity(1.0, self._message_rate, _PRIO_DELIVERY, self._deliver, message)

    def _deliver(self, message: _Message) -> None:
        server = self._server
        server.busy = False
        self._handle(message)
        if message.on_received is not None:
            message.on_received()
        self._maybe_flush()
        if server.mailbox and not server.busy:
            self._start_transfer()

    def _maybe_flush(self) -> None:
        server = self._server
        if not server.ready or server.mailbox or server.end_acknowledged:
            return
        if server.buffer:
            self._flush()
        elif self._simulation_finished() and not server.end_sent:
            server.buffer.append({"timestamp": self._reported, "type": "SIMULATION_ENDS", "data": {}})
            self._flush()
            server.end_sent = True

    def _flush(self) -> None:
        server = self._server
        self._pending_request = {"now": self._reported, "events": server.buffer}
        server.buffer = []
        server.ready = False

    def _simulation_finished(self) -> bool:
        return (
            self._submitters_done == self._submitters_expected
            and (not self.options.dynamic_jobs or self.registration_finished)
            and self.nb_completed == self.nb_submitted
            and self.nb_running == 0
            and self.nb_waiters == 0
            and self.nb_killers == 0
        )

    def _run(self) -> None:
        ready = self._ready
        while self._pending_request is None:
            if ready:
                _prio, _seq, action, argument = heapq.heappop(ready)
                if argument is None:
                    action()
                else:
                    action(argument)
            elif not self._advance():
                break

    # ------------------------------------------------------------------ public driving API
    @property
    def now(self) -> float:
        """Current simulated time in seconds."""
        return self._reported

    def next_request(self) -> dict | None:
        """Run the simulation until Batsim would send a message; return it (``None`` once finished).

        Raises:
            EngineError: called twice without :meth:`apply_reply`, or the simulation is stuck (nothing left
                to happen while jobs are still pending: a decision process that never starts a job).
        """
        if self._awaiting_reply:
            raise EngineError("next_request() called before the previous request was answered")
        if self._server.end_acknowledged:
            return None
        self._run()
        if self._pending_request is None:
            pending = [j.full_id for j in self.jobs.values() if j.state in ("SUBMITTED", "RUNNING")][:5]
            raise EngineError(
                "deadlock: nothing more can happen but the simulation is not finished "
                f"(jobs still pending, e.g. {pending}; registration finished: {self.registration_finished})"
            )
        self._awaiting_reply = True
        return self._pending_request

    def apply_reply(self, reply: Mapping) -> None:
        """Inject the decision process's reply to the last request.

        The decisions reach Batsim's server one by one, each as one inter-actor message, then SCHED_READY.

        Raises:
            EngineError: no request outstanding, or an event the engine does not support.
        """
        if not self._awaiting_reply:
            raise EngineError("apply_reply() without an outstanding request")
        self._awaiting_reply = False
        request = self._pending_request
        self._pending_request = None
        if request["events"] and request["events"][-1]["type"] == "SIMULATION_ENDS":
            self._server.end_acknowledged = True
            self._server.ready = True
            return
        events = list(reply.get("events", []))
        previous = -float("inf")
        for event in events:
            stamp = float(event.get("timestamp", self._reported))
            if stamp < previous:
                raise EngineError(f"reply events are not sorted by timestamp ({stamp} after {previous})")
            previous = stamp
            if event.get("type") not in _DECISION_TYPES:
                raise EngineError(
                    f"event type {event.get('type')!r} is not supported by the embedded engine "
                    "(supported: " + ", ".join(sorted(_DECISION_TYPES)) + "); run with a real Batsim: "
                    "batreplay run --engine batsim"
                )
        self._inject_decisions(events, float(reply.get("now", self._reported)))

    def _at_time(self, stamp: float, message: _Message) -> None:
        """Batsim's ``send_message_at_time``: sleep until ``stamp`` if it is still ahead of the clock, then send."""
        if stamp > self._clock:
            self._sleep(stamp - self._clock, self._arrive, message)
            return
        self._send(message)

    def _inject_decisions(self, events: list[dict], reply_now: float) -> None:
        """The request-reply actor: one blocking send per decision (at its timestamp), then SCHED_READY."""
        if not events:
            self._at_time(reply_now, _Message(_READY))
            return
        event, rest = events[0], events[1:]
        stamp = float(event.get("timestamp", self._reported))
        self._at_time(stamp, _Message(_DECISION, event, lambda: self._inject_decisions(rest, reply_now)))

    # ------------------------------------------------------------------ actors
    def _start_submitter(self, wname: str, jobs: list[Job]) -> None:
        """Static job submitter: HELLO, then one JOB_SUBMITTED per distinct submission time, then BYE.

        Like Batsim's, it reads the clock after HELLO and after each wake-up; for the next job not yet due
        it sends the jobs gathered so far, then sleeps for ``subtime - clock read``: it wakes up late by the
        duration of that send (or, after many steps, early by up to SimGrid's 1e-9 s timing precision), and
        takes that job without comparing its submission time with the clock again.
        """
        state = {"index": 0, "date": 0.0, "batch": []}

        def proceed() -> None:
            index = state["index"]
            while index < len(jobs):
                job = jobs[index]
                if job.subtime > state["date"]:
                    state["index"] = index
                    batch, state["batch"] = state["batch"], []
                    # Batsim keeps both times as long doubles and casts their difference to double
                    duration = float(np.longdouble(job.subtime) - np.longdouble(state["date"]))
                    if batch:
                        self._arrive(_Message(_SUBMIT, batch, lambda: self._sleep(duration, woken)))
                    else:
                        self._sleep(duration, woken)
                    return
                state["batch"].append(job)
                index += 1
            state["index"] = index
            batch, state["batch"] = state["batch"], []
            if batch:
                self._arrive(_Message(_SUBMIT, batch, lambda: self._send(_Message(_BYE, wname))))
            else:
                self._arrive(_Message(_BYE, wname))

        def woken() -> None:
            # Batsim does not compare the job it slept for with the clock again: the clock may read a hair
            # before its submission time (the sleep ended within SimGrid's 1e-9 s timing precision, in the step
            # of another activity) and the job is still submitted now, with no second sleep.
            state["date"] = self._clock
            state["batch"].append(jobs[state["index"]])
            state["index"] += 1
            proceed()

        def hello_received() -> None:
            state["date"] = self._clock
            self._schedule(_PRIO_SEND, proceed)

        self._send(_Message(_HELLO, wname, hello_received))

    def _start_job(self, job: Job, alloc: ProcSet) -> None:
        duration = self._duration(job, alloc)
        job.state = "RUNNING"
        job.start = self._clock
        job.allocation = alloc
        self._mark(alloc, 1)
        self.nb_running += 1
        rate = self._work_rate(job, alloc)
        walltime = job.walltime
        token = next(self._seq)
        job.completion_token = token

        def finish(final: str) -> None:
            if job.completion_token != token:  # killed meanwhile, or the other side of the race won
                return
            job.completion_token = None
            # When the walltime sleep wins the race, Batsim does not cancel the parallel task: it goes on (to no
            # one) until the executor actor exits, once its JOB_COMPLETED is received, and SimGrid cancels the
            # activities it left. If the task ends meanwhile, its end is one more step of the clock (KTH-SP2
            # job 5464, 2.5 ns after its walltime).
            leftover = job.activity if final == _WALLTIME_REACHED and job.timeout is not None else None
            if leftover is None:
                self._cancel(job.activity)
            self._cancel(job.timeout)
            job.activity = job.timeout = None
            job.state = final
            job.end = self._clock
            job.runtime = self._clock - job.start
            self._release(job)
            # The executor puts its message as soon as it is woken, like a submitter or a waiter: in SimGrid
            # it reaches the mailbox before the decisions of a request-reply actor created in the same step
            # (or its next decision, when that actor's previous message ended in this step).
            self._arrive(_Message(_COMPLETED, job, None if leftover is None else lambda: self._cancel(leftover)))

        # Batsim 4.2.1 sleeps a delay job only while its delay is strictly below the walltime; otherwise it
        # sleeps until the walltime and reports it reached. A parallel task, though, is waited for with a
        # timeout of the walltime (SimGrid's wait_for: a second action, a sleep, beside the computation): the
        # first to end decides, and when both end in the same step the task wins (SimGrid handles the ended
        # actions of the ptask_L07 model in the order they were started). Far from the walltime the outcome
        # is certain and one action suffices; near it the engine runs both, with SimGrid's arithmetic (and a
        # task that loses keeps running until its executor exits: see ``finish``; beyond the band it would
        # end long after that).
        band = _RACE_BAND * (1.0 + walltime)
        if rate and (walltime < 0 or duration < walltime - band):
            job.activity = self._start_activity(1.0, rate, _PRIO_SEND, finish, _SUCCESS)
        elif rate and duration <= walltime + band:
            job.activity = self._start_activity(1.0, rate, _PRIO_SEND, finish, _SUCCESS)
            job.timeout = self._sleep(walltime, finish, _WALLTIME_REACHED)
        elif not rate and (walltime < 0 or duration < walltime):
            job.activity = self._sleep(duration, finish, _SUCCESS)
        else:
            job.activity = self._sleep(walltime, finish, _WALLTIME_REACHED)

    def _work_rate(self, job: Job, alloc: ProcSet) -> float:
        """0 for a sleep (``delay``), else the progress rate of the job's parallel task (SimGrid's ptask_L07:
        1 unit of work done at the pace of the slowest host, ``speed / flop``)."""
        profile = self._profile_of(job)
        kind = profile["type"]
        if kind == "delay":
            return 0.0
        speeds = [self.host_speeds[i] for i in alloc]
        if kind == "parallel_homogeneous":
            flops = [float(profile["cpu"])] * len(speeds)
        elif kind == "parallel_homogeneous_total":
            flops = [float(profile["cpu"]) / len(speeds)] * len(speeds)
        else:
            flops = [float(c) for c in profile["cpu"]]
        rates = [speed / flop for speed, flop in zip(speeds, flops) if flop > 0]
        return min(rates) if rates else float("inf")

    def _duration(self, job: Job, alloc: ProcSet) -> float:
        profile = self._profile_of(job)
        if profile["type"] == "delay":
            return float(profile["delay"])
        return execution_time(profile, [self.host_speeds[i] for i in alloc])

    def _mark(self, alloc: ProcSet, value: int) -> None:
        for first, last in alloc.intervals():
            self._busy[first:last + 1] = bytes([value]) * (last - first + 1)

    def _release(self, job: Job) -> None:
        self._mark(job.allocation, 0)

    def _profile_of(self, job: Job) -> dict:
        try:
            return self.profiles[job.workload][job.profile_name]
        except KeyError:
            raise EngineError(f"job '{job.full_id}' uses the unknown profile '{job.profile_name}'") from None

    # ------------------------------------------------------------------ server handlers
    def _append(self, kind: str, data: dict) -> None:
        self._server.buffer.append({"timestamp": self._reported, "type": kind, "data": data})

    def _handle(self, message: _Message) -> None:
        kind = message.kind
        if kind == _DECISION:
            self._handle_decision(message.payload)
        elif kind == _SUBMIT:
            for job in message.payload:
                job.state = "SUBMITTED"
                self.nb_submitted += 1
                self._append("JOB_SUBMITTED", {"job_id": job.full_id, "job": job.description})
        elif kind == _COMPLETED:
            job = message.payload
            self.nb_running -= 1
            self.nb_completed += 1
            self._append(
                "JOB_COMPLETED",
                {
                    "job_id": job.full_id,
                    "job_state": job.state,
                    "return_code": 0 if job.state == "COMPLETED_SUCCESSFULLY" else -1,
                    "alloc": _allocation_string(job.allocation),
                },
            )
            self._record(job)
        elif kind == _WAITING_DONE:
            self.nb_waiters -= 1
            self._append("REQUESTED_CALL", {})
        elif kind == _READY:
            self._server.ready = True
        elif kind == _BYE:
            self._submitters_done += 1
            if self._submitters_done == self._submitters_expected:
                self._append("NOTIFY", {"type": "no_more_static_job_to_submit"})
        elif kind == _KILLING_DONE:
            self._handle_killing_done(message.payload)
        # _HELLO: nothing to do

    def _handle_decision(self, event: Mapping) -> None:
        kind = event["type"]
        data = event.get("data", {})
        if kind == "EXECUTE_JOB":
            self._on_execute(data)
        elif kind == "REJECT_JOB":
            job = self._job(data.get("job_id"), kind)
            if job.state != "SUBMITTED":
                raise EngineError(f"REJECT_JOB: job '{job.full_id}' is {job.state}, only a submitted job can be rejected")
            job.state = "REJECTED"
            self.nb_completed += 1
            self._record(job)
        elif kind == "CALL_ME_LATER":
            target = float(data["timestamp"])
            if not target > self._clock:
                raise EngineError(
                    f"CALL_ME_LATER at {target} is not strictly later than the current time {self._clock} "
                    "(Batsim aborts the simulation on this)"
                )
            self.nb_waiters += 1
            clock = self._clock
            if clock < target:
                self._sleep(max(target - clock, 1e-5), self._arrive, _Message(_WAITING_DONE))
            else:
                self._send(_Message(_WAITING_DONE))
        elif kind == "KILL_JOB":
            self._on_kill(data)
        elif kind == "REGISTER_PROFILE":
            self._on_register_profile(data)
        elif kind == "REGISTER_JOB":
            self._on_register_job(data)
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

    def _on_execute(self, data: Mapping) -> None:
        job = self._job(data.get("job_id"), "EXECUTE_JOB")
        if job.state != "SUBMITTED":
            raise EngineError(f"EXECUTE_JOB: job '{job.full_id}' is {job.state}, not SUBMITTED")
        try:
            alloc = ProcSet.from_str(str(data["alloc"]))
        except (KeyError, ValueError) as err:
            raise EngineError(f"EXECUTE_JOB '{job.full_id}': bad allocation {data.get('alloc')!r} ({err})") from None
        if "mapping" in data or "additional_io_job" in data or "storage_mapping" in data:
            raise EngineError(
                f"EXECUTE_JOB '{job.full_id}': custom mappings and I/O jobs need a real Batsim "
                "(batreplay run --engine batsim)"
            )
        if len(alloc) == 0 or alloc.max >= self.nb_hosts or alloc.min < 0:
            raise EngineError(f"EXECUTE_JOB '{job.full_id}': allocation {alloc} outside resources 0-{self.nb_hosts - 1}")
        profile = self._profile_of(job)
        if profile["type"] != "parallel_homogeneous_total" and len(alloc) != job.res:
            raise EngineError(
                f"EXECUTE_JOB '{job.full_id}': the job requests {job.res} resources but {len(alloc)} were "
                f"allocated ({alloc})"
            )
        busy = self._busy
        clash = ProcSet(*(i for a, b in alloc.intervals() if any(busy[a:b + 1]) for i in range(a, b + 1) if busy[i]))
        if clash:
            raise EngineError(
                f"EXECUTE_JOB '{job.full_id}': resources {clash} are already computing another job "
                "(compute sharing is disabled)"
            )
        self._start_job(job, alloc)

    def _on_kill(self, data: Mapping) -> None:
        job_ids = [str(j) for j in data.get("job_ids", [])]
        if not job_ids:
            raise EngineError("KILL_JOB without job_ids")
        to_kill = []
        for job_id in job_ids:
            job = self._job(job_id, "KILL_JOB")
            if job.kill_requested:
                continue
            if job.state not in ("RUNNING",) and not job.state.startswith("COMPLETED"):
                raise EngineError(f"KILL_JOB: job '{job_id}' is neither running nor completed ({job.state})")
            job.kill_requested = True
            to_kill.append(job)
        if not to_kill:
            return
        progress = {}
        killed = []
        for job in to_kill:
            if job.state == "RUNNING":
                elapsed = self._clock - job.start
                total = self._duration(job, job.allocation)
                progress[job.full_id] = {"profile_name": job.profile_name, "progress": printed_time(elapsed / total)}
                job.completion_token = None
                self._cancel(job.activity)
                self._cancel(job.timeout)
                job.activity = job.timeout = None
                job.state = "COMPLETED_KILLED"
                job.end = self._clock
                job.runtime = elapsed
                self._release(job)
                killed.append(job)
        self.nb_killers += 1
        self._send(_Message(_KILLING_DONE, (to_kill, killed, progress)))

    def _handle_killing_done(self, payload: tuple) -> None:
        requested, killed, progress = payload
        for job in killed:
            self.nb_running -= 1
            self.nb_completed += 1
            self._append(
                "JOB_COMPLETED",
                {"job_id": job.full_id, "job_state": job.state, "return_code": -1,
                 "alloc": _allocation_string(job.allocation)},
            )
            self._record(job)
        self._append("JOB_KILLED", {"job_ids": [j.full_id for j in requested], "job_progress": progress})
        self.nb_killers -= 1

    def _on_register_profile(self, data: Mapping) -> None:
        if not self.options.dynamic_jobs:
            raise EngineError("REGISTER_PROFILE needs dynamic jobs (Batsim's --enable-dynamic-jobs)")
        wname, pname, profile = str(data["workload_name"]), str(data["profile_name"]), dict(data["profile"])
        validate_profile(pname, profile)
        workload = self.profiles.setdefault(wname, {})
        if pname in workload:
            raise EngineError(f"REGISTER_PROFILE: profile '{pname}' of workload '{wname}' is already registered")
        workload[pname] = profile

    def _on_register_job(self, data: Mapping) -> None:
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
        job = self._job_from_json(wname, description, origin="REGISTER_JOB")
        job.description = dict(data["job"])
        job.state = "SUBMITTED"
        self.nb_submitted += 1
        if self.options.acknowledge_dynamic_jobs:
            self._append("JOB_SUBMITTED", {"job_id": job.full_id, "job": job.description})

    # ------------------------------------------------------------------ outputs
    def _record(self, job: Job) -> None:
        ran = job.start is not None
        times = _batsim_job_times(job.subtime, job.start, job.end) if ran else _NO_TIMES
        self.records.append(
            JobRecord(
                job_id=job.name,
                workload_name=job.workload,
                profile=job.profile_name,
                submission_time=job.subtime,
                requested_number_of_resources=job.res,
                requested_time=job.walltime,
                success=1 if job.state == "COMPLETED_SUCCESSFULLY" else 0,
                final_state=job.state,
                allocated_resources=_allocation_string(job.allocation) if ran else "",
                metadata=job.metadata,
                **times,
            )
        )


_NO_TIMES = dict.fromkeys(("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
                           "stretch"))


def _batsim_job_times(subtime: float, start: float, end: float) -> dict[str, float]:
    """The time columns of a job's out_jobs.csv row, computed as Batsim 4.2.1 computes them: its job keeps
    submission, start and run time as C ``long double`` (x87 80-bit extended precision, numpy's ``longdouble``
    on x86-64 Linux) taken from SimGrid's ``double`` clock; each column is a long-double expression cast to
    ``double`` and printed with six decimals. Deriving them from the printed values instead can move the last
    printed digit (the stretch of job 1885 of golden case ``kth2000``: 1855.476191, not 1855.476190)."""
    submitted, started = np.longdouble(subtime), np.longdouble(start)
    runtime = np.longdouble(end) - started
    if runtime == 0:  # Batsim gives an instantaneous job a run time of 1e-5 s
        runtime = np.longdouble("1e-5")
    finished = started + runtime
    return {
        "starting_time": printed_time(float(started)),
        "execution_time": printed_time(float(runtime)),
        "finish_time": printed_time(float(finished)),
        "waiting_time": printed_time(float(started - submitted)),
        "turnaround_time": printed_time(float(finished - submitted)),
        "stretch": printed_time(float((finished - submitted) / runtime)),
    }


_DECISION_TYPES = frozenset(
    {
        "EXECUTE_JOB",
        "REJECT_JOB",
        "CALL_ME_LATER",
        "KILL_JOB",
        "REGISTER_PROFILE",
        "REGISTER_JOB",
        "SET_JOB_METADATA",
        "NOTIFY",
    }
)
