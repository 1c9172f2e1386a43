"""Batsim's server side: the mailbox, how protocol events are grouped into messages, and the actors that feed it.

Batsim's server is one SimGrid actor that receives inter-actor messages one at a time from a mailbox and collects
protocol events in a buffer; it sends the buffer to the decision process only when (a) no request is outstanding,
(b) its mailbox is empty and (c) the buffer is not empty. Every inter-actor message is a 1-byte transfer (a
:class:`~batreplay.engine.kernel.Kernel` activity), and only one runs at a time: a sender's message starts moving
when the server takes it. :class:`Server` plays this, with the static job submitters and the request-reply actor
that injects the decision process's reply; what each message means is the handlers' business (a callback). It
imports the engine's kernel, events, records and options.

- *Within a step* the server first handles the message whose transfer ended, and checks its mailbox, before the
  sends of the actors woken in the same step reach the mailbox (SimGrid runs all woken actors, then handles their
  requests); those sends queue in the order the actors' activities were started, ahead of the sends of actors
  that only run later in the step: the request-reply actor the server creates to send a message (its decisions
  reach the mailbox after a job's JOB_COMPLETED sent in the same step), a killer (after the request-reply
  actor's next decision: :data:`~batreplay.engine.kernel.PRIO_NEW_ACTOR`).
- Actors read SimGrid's clock as Batsim does: a submitter sleeps ``next subtime - clock read after its previous
  wake-up`` (so it wakes late by the duration of the send in between) and submits the job it slept for whatever
  the clock reads when it wakes; the request-reply actor sleeps until a decision's timestamp when it is still
  ahead of the clock (Batsim's ``send_message_at_time``, also used for SCHED_READY at the reply's ``now``).
- Every event carries the clock as Batsim prints it (:attr:`Kernel.reported
  <batreplay.engine.kernel.Kernel>`, six decimals).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from batreplay.engine.events import SIMULATION_BEGINS, SIMULATION_ENDS, Event
from batreplay.engine.kernel import PRIO_DELIVERY, PRIO_SEND, Kernel, long_double_difference
from batreplay.engine.options import EngineOptions
from batreplay.engine.records import Job

# Inter-actor message kinds (what reaches the server's mailbox).
HELLO, SUBMIT, BYE, COMPLETED, WAITING_DONE, READY, DECISION, KILLING_DONE = range(8)


@dataclass(slots=True)
class Message:
    """One inter-actor message: its kind, what it carries, and what its sender does once it is received."""

    kind: int
    payload: Any = None
    on_received: Callable[[], None] | None = None


class Server:
    """Batsim's server actor on ``kernel``: mailbox, one transfer at a time, event buffer, flushes.

    Args:
        kernel: the clock and activities.
        message_rate: bytes/s of the links carrying the 1-byte inter-actor messages.
        handle: called with each message the server takes from its mailbox (the protocol handlers).
        finished: True once nothing more can happen (then SIMULATION_ENDS is sent).
        carry: starts a message on links shared with jobs' transfers and returns True, or returns False for a
            message timed alone at ``message_rate`` (:meth:`batreplay.engine.transfers.Transfers.carry`).

    Attributes:
        buffer: the protocol events (:class:`~batreplay.engine.events.Event`) collected for the next request.
        pending: the request ready for the decision process, ``(now, events)`` (events:
            :class:`~batreplay.engine.events.Event`), or None.
    """

    def __init__(self, kernel: Kernel, message_rate: float, handle: Callable[[Message], None],
                 finished: Callable[[], bool],
                 carry: Callable[[Kernel, Message, Callable[[Message], None]], bool] | None = None) -> None:
        self.kernel = kernel
        self.carry = carry
        self.message_rate = float(message_rate)
        self.handle = handle
        self.finished = finished
        self.ready = False  # SCHED_READY received: the decision process waits for the next request
        self.busy = False  # a message is in transfer
        self.mailbox: deque[Message] = deque()
        self.buffer: list[Event] = []
        self.end_sent = False
        self.end_acknowledged = False
        self.pending: tuple[float, list[Event]] | None = None

    # -------------------------------------------------------------- events and requests
    def append(self, kind: str, payload: Any) -> None:
        """Add a protocol event of type ``kind`` about ``payload`` (see :mod:`batreplay.engine.events`), stamped
        with the printed clock, to the next request."""
        self.buffer.append(Event(self.kernel.reported, kind, payload))

    def flush(self) -> None:
        """Make the buffer the next request, ``(now, events)`` (the decision process is then awaited)."""
        self.pending = (self.kernel.reported, self.buffer)
        self.buffer = []
        self.ready = False

    def maybe_flush(self) -> None:
        """Flush if Batsim would: the decision process is ready and the mailbox is empty; SIMULATION_ENDS
        once there is nothing left to say and the simulation is over."""
        if not self.ready or self.mailbox or self.end_acknowledged:
            return
        if self.buffer:
            self.flush()
        elif not self.end_sent and self.finished():
            self.append(SIMULATION_ENDS, None)
            self.flush()
            self.end_sent = True

    def run(self) -> None:
        """Run the simulation until a request is pending, or nothing more can happen."""
        kernel = self.kernel
        ready = kernel.ready
        advance = kernel.advance
        while self.pending is None:
            if ready:
                _prio, _seq, action, argument = heapq.heappop(ready)
            else:
                ended = advance()
                if ended is True:
                    continue
                if ended is None:
                    break
                action, argument = ended
            if argument is None:
                action()
            else:
                action(argument)

    # -------------------------------------------------------------- mailbox
    def send(self, message: Message) -> None:
        """An actor sends ``message`` to the server now (blocking until received)."""
        self.kernel.schedule(PRIO_SEND, self.arrive, message)

    def arrive(self, message: Message) -> None:
        """``message`` reaches the mailbox; its transfer starts if none is running."""
        self.mailbox.append(message)
        if not self.busy:
            self._start_transfer()

    def _start_transfer(self) -> None:
        message = self.mailbox.popleft()
        self.busy = True
        if self.carry is None or not self.carry(self.kernel, message, self._deliver):
            self.kernel.start_message(self.message_rate, PRIO_DELIVERY, self._deliver, message)

    def _deliver(self, message: Message) -> None:
        self.busy = False
        self.handle(message)
        if message.on_received is not None:
            message.on_received()
        self.maybe_flush()
        if self.mailbox and not self.busy:
            self._start_transfer()

    # -------------------------------------------------------------- actors
    def at_time(self, stamp: float, message: Message) -> None:
        """Batsim's ``send_message_at_time``: sleep until ``stamp`` if it is still ahead of the clock, then send."""
        kernel = self.kernel
        if stamp > kernel.clock:
            kernel.sleep(stamp - kernel.clock, self.arrive, message)
            return
        self.send(message)

    def inject_decisions(self, events: Sequence[Mapping], reply_now: float, first: int = 0) -> None:
        """The request-reply actor: one blocking send per decision (at its timestamp), then SCHED_READY; sends
        ``events[first:]``."""
        if first == len(events):
            self.at_time(reply_now, Message(READY))
            return
        event = events[first]
        stamp = event.get("timestamp")
        stamp = self.kernel.reported if stamp is None else float(stamp)
        self.at_time(stamp, Message(DECISION, event, partial(self.inject_decisions, events, reply_now, first + 1)))

    def start_submitter(self, wname: str, jobs: list[Job]) -> None:
        """Static job submitter of workload ``wname`` (``jobs`` sorted by submission time): HELLO, then one
        SUBMIT per distinct submission time, then BYE.

        Like Batsim's, it reads the clock after HELLO and after each wake-up; for the next job not yet due
        it sends the jobs gathered so far, then sleeps for ``subtime - clock read``: it wakes up late by the
        duration of that send (or, after many steps, early by up to SimGrid's 1e-9 s timing precision), and
        takes that job without comparing its submission time with the clock again.
        """
        kernel = self.kernel
        state = {"index": 0, "date": 0.0, "batch": []}

        def proceed() -> None:
            index = state["index"]
            while index < len(jobs):
                job = jobs[index]
                if job.subtime > state["date"]:
                    state["index"] = index
                    batch, state["batch"] = state["batch"], []
                    # Batsim keeps both times as long doubles and casts their difference to double
                    duration = long_double_difference(job.subtime, state["date"])
                    if batch:
                        self.arrive(Message(SUBMIT, batch, lambda: kernel.sleep(duration, woken)))
                    else:
                        kernel.sleep(duration, woken)
                    return
                state["batch"].append(job)
                index += 1
            state["index"] = index
            batch, state["batch"] = state["batch"], []
            if batch:
                self.arrive(Message(SUBMIT, batch, lambda: self.send(Message(BYE, wname))))
            else:
                self.arrive(Message(BYE, wname))

        def woken() -> None:
            # Batsim does not compare the job it slept for with the clock again: the clock may read a hair
            # before its submission time (the sleep ended within SimGrid's 1e-9 s timing precision, in the step
            # of another activity) and the job is still submitted now, with no second sleep.
            state["date"] = kernel.clock
            state["batch"].append(jobs[state["index"]])
            state["index"] += 1
            proceed()

        def hello_received() -> None:
            state["date"] = kernel.clock
            kernel.schedule(PRIO_SEND, proceed)

        self.send(Message(HELLO, wname, hello_received))


def simulation_begins_event(options: EngineOptions, host_names: Sequence[str], workload_files: Mapping[str, str],
                            profiles: Mapping[str, Mapping],
                            host_properties: Sequence[tuple[Mapping, Mapping]] | None = None,
                            storage: Sequence[tuple[str, Mapping, Mapping]] = ()) -> Event:
    """Batsim's first event, SIMULATION_BEGINS (time 0): configuration, compute resources (ids in
    ``host_names`` order), workload files and profiles by workload.

    ``host_properties`` gives each host's ``(properties, zone_properties)`` (default: none): Batsim sends a host's
    ``<prop>`` values with ``role`` added (``""``) when absent, and those of the zone or cluster holding it (observed
    on a real Batsim 4.2.1 with a two-cluster platform, tests/engine/test_real_batsim_compat.py). ``storage`` gives
    each storage host's ``(name, properties, zone_properties)``: Batsim numbers them after the compute hosts and
    lists them apart (``storage_resources``), their ``role`` property being ``storage``."""
    config = {
        "redis-enabled": False,
        "redis-hostname": "127.0.0.1",
        "redis-port": 6379,
        "redis-prefix": "default",
        "profiles-forwarded-on-submission": False,
        "dynamic-jobs-enabled": options.dynamic_jobs,
        "dynamic-jobs-acknowledged": options.acknowledge_dynamic_jobs,
        "profile-reuse-enabled": options.profile_reuse,
        "sched-config": "",
        "forward-unknown-events": False,
    }
    pairs = host_properties or [({}, {})] * len(host_names)
    resources = [
        {"id": i, "name": name, "state": "idle", "properties": {"role": "", **props}, "zone_properties": dict(zone)}
        for i, (name, (props, zone)) in enumerate(zip(host_names, pairs))
    ]
    first = len(host_names)
    disks = [{"id": first + k, "name": name, "state": "idle", "properties": {"role": "", **props},
              "zone_properties": dict(zone)} for k, (name, props, zone) in enumerate(storage)]
    return Event(0.0, SIMULATION_BEGINS, {
        "nb_resources": len(host_names) + len(disks),
        "nb_compute_resources": len(host_names),
        "nb_storage_resources": len(disks),
        "allow_compute_sharing": options.shares_hosts,
        "allow_storage_sharing": True,
        "config": config,
        "compute_resources": resources,
        "storage_resources": disks,
        "workloads": dict(workload_files),
        "profiles": profiles,  # the engine's own: the wire form copies them (see events.wire_data)
    })
