"""The engine's clock and activities: SimGrid's step arithmetic, as Batsim 4.2.1 configures it, without SimGrid.

The kernel knows nothing of jobs or messages: it runs *actions* (plain callables) at steps of a simulated clock,
either now (:meth:`Kernel.schedule`) or when an *activity* ends (:meth:`Kernel.start_activity`,
:meth:`Kernel.sleep`), and replays SimGrid's time arithmetic (``host/model:ptask_L07``, SimGrid 3.32) with
Python floats (IEEE doubles, as in SimGrid). It imports only numpy: the server and the handlers build on it.

- *Activities.* A sleep (``rate == 0``) has a remaining duration in seconds; a transfer or computation has
  remaining work progressing at ``rate`` units/s (a 1-byte message on 125 MB/s links: 1 unit at 125e6/s, 8 ns;
  a parallel task: 1 unit at ``min(speed / flop)`` over its hosts).
- *Steps (full update, as ptask_L07 does).* The clock jumps by ``delta``, the smallest time left over all
  activities (a sleep's remaining duration; ``remaining work / rate`` otherwise). Every activity then loses
  ``delta`` (sleeps) or ``rate * delta`` (work), computed in floating point, and every activity whose rest
  falls below SimGrid's precision ends in that step: ``1e-9`` s for sleeps (``precision/timing``) but
  ``1e-14`` work units for transfers and computations (``precision/work-amount`` times the timing one).
- *Lazily.* Only activities expected to end within :data:`LOOKAHEAD` of the earliest one are updated at each
  step; the others replay the steps they missed (same order, same rounding; numpy's sequential
  ``subtract.accumulate`` beyond :data:`SCALAR_REPLAY` steps, on a view of the step history, an ``array("d")``)
  when they come near the front: the same numbers as a full update at every step, at a cost that does not grow
  with the number of running jobs.
- *One message at a time* (Batsim's server takes one 1-byte message at a time) waits in a slot beside the heap
  (:meth:`Kernel.start_message`): the same steps, without a heap entry per message.
- *Within a step,* ended activities and scheduled actions run by priority (:data:`PRIO_DELIVERY` before
  :data:`PRIO_SEND`), then in the order they were started.
"""

from __future__ import annotations

import heapq
import itertools
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Order of the work done at one simulation step: a finished transfer is handled before new sends, and the sends of
#: actors created in the step (Batsim's killer) come after those of the actors woken in it.
PRIO_DELIVERY, PRIO_SEND, PRIO_NEW_ACTOR = 0, 1, 2
# SimGrid's numerical precisions (``precision/timing`` and ``precision/work-amount`` x timing): a sleep whose
# remaining duration falls below the first, or a transfer/computation whose remaining work falls below the
# second, is over.
_TIMING_PRECISION = 1e-9
_WORK_PRECISION = 1e-5 * 1e-9
# The rate of a parallel task with nothing to compute.
_NO_WORK = float("inf")
#: Activities expected to end within this many seconds of the earliest one are updated at each step (see
#: :meth:`Kernel.advance`); rounding keeps expected ends within far less than this of the exact ones.
LOOKAHEAD = 1e-3
#: Up to this many missed steps are replayed in Python, more with numpy.
SCALAR_REPLAY = 24
_DOUBLE = array("d").itemsize
# The step history is trimmed when it reaches this many steps (or twice what was left after the last trim).
_TRIM_AT = 4096


def printed_time(value: float) -> float:
    """``value`` as Batsim writes it (``%f``: six decimals) and the decision process reads it back; Batsim
    formats every time (and a killed job's progress) this way in its messages and output files.

    ``round(value, 6)`` is that number: CPython rounds a float to 6 decimals by formatting it correctly rounded
    (half to even on the exact binary value, as ``"%.6f"`` does) and reading the text back
    (test_printed_time_is_the_six_decimal_text_read_back)."""
    return round(float(value), 6)  # (a numpy float64 would round its own way)


def wire_numbers(value: Any) -> Any:
    """``value`` (decoded JSON) as a message of Batsim 4.2.1 carries it: Batsim writes every non-integer number of
    its messages with ``%f`` (six decimals, :func:`printed_time`), job descriptions and
    profiles included, and integers as integers. A new object: ``value`` is not changed."""
    if type(value) is float:
        return printed_time(value)
    if isinstance(value, Mapping):
        return {key: wire_numbers(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [wire_numbers(item) for item in value]
    return value


def long_double_difference(later: float, earlier: float) -> float:
    """``later - earlier`` as Batsim computes it: in C ``long double`` (x87 80-bit), cast to double.

    When the difference of the two doubles is exact in double precision (Knuth's TwoSum error term is 0), the
    long-double difference is that same number; only the other cases (a clock a few nanoseconds off an integer
    subtracted from a far larger time, for instance) are computed with numpy's ``longdouble``."""
    difference = later - earlier
    back = difference - later
    if (later - (difference - back)) + (-earlier - back) == 0.0:
        return difference
    return float(np.longdouble(later) - np.longdouble(earlier))


class Activity:
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

    def __lt__(self, other: Activity) -> bool:
        # Heap entries tie on (end, seq) only between an activity moved by Kernel.set_rate and its dead former
        # self: either order will do.
        return False

    def time_left(self) -> float:
        """Seconds until it ends if nothing changes (as SimGrid computes it)."""
        if self.rate:
            return self.remaining / self.rate if self.remaining > 0 else 0.0
        return self.remaining


@dataclass(slots=True, eq=False)
class PendingMessage:
    """The message that :meth:`Kernel.start_message` keeps beside the heap of activities: the fields of the
    :class:`Activity` it would be (one unit of work, ``remaining == 1.0``), exact as of step ``synced``.

    A kernel has one, filled anew for each message (at most one waits at a time): no object is built per
    message, which keeps the kernel's hot loop as fast as with a plain tuple."""

    rate: float = 0.0
    prio: int = 0
    seq: int = 0
    action: Callable[..., None] | None = None
    argument: Any = None
    synced: int = 0


class Kernel:
    """The simulated clock (seconds), the actions due now and the running activities.

    Attributes:
        clock: SimGrid's clock (unrounded seconds).
        ready: heap of ``(prio, seq, action, argument)`` due at the current step.
    """

    def __init__(self) -> None:
        self.clock = 0.0
        self.ready: list = []
        self._activities: list = []  # heap of (expected end on the clock, seq, activity); lazy deletion
        # the message kept out of the heap (see start_message): self._message while one waits there, or None;
        # its duration and expected end on the clock; and the Activity it became if it had to join the heap
        self._message = PendingMessage()
        self._slot: PendingMessage | None = None
        self._slot_duration = self._slot_end = 0.0
        self._joined: Activity | None = None
        self._deltas = array("d")  # the clock steps taken, from step number self._delta_base on
        self._delta_base = 0
        self._nb_steps = 0
        self._trim_at = _TRIM_AT
        self._seq = itertools.count()
        self._printed = (0.0, 0.0)  # (clock, printed_time(clock)) last asked for

    @property
    def reported(self) -> float:
        """The clock as Batsim prints it (:func:`printed_time`), computed when asked (many steps are never
        reported)."""
        clock = self.clock
        printed = self._printed
        if printed[0] != clock:
            printed = self._printed = (clock, printed_time(clock))
        return printed[1]

    def next_seq(self) -> int:
        """A fresh number, increasing: the order in which actions and activities were started."""
        return next(self._seq)

    def schedule(self, prio: int, action: Callable[..., None], argument: Any = None) -> None:
        """Run ``action(argument)`` (or ``action()`` when ``argument`` is None) at the current step."""
        heapq.heappush(self.ready, (prio, next(self._seq), action, argument))

    def start_activity(self, remaining: float, rate: float, prio: int,
                       action: Callable[..., None], argument: Any = None, seq: int | None = None) -> Activity:
        """Start a timed SimGrid action; ``action(argument)`` runs at the step where it ends. ``seq``: its place in
        the order of starts (default: after every other); a task that waited out its latency keeps the place of its
        creation, as SimGrid keeps the action in its list of started actions."""
        if seq is None:
            seq = next(self._seq)
        activity = Activity(remaining, rate, prio, seq, action, argument, self._nb_steps)
        # heap key: the clock value at which it is expected to end
        heapq.heappush(self._activities, (self.clock + activity.time_left(), seq, activity))
        return activity

    def start_message(self, rate: float, prio: int, action: Callable[..., None], argument: Any = None) -> None:
        """:meth:`start_activity` for one unit of work at ``rate`` units/s (a 1-byte message), of which at most one
        runs at a time (Batsim's server takes one message at a time): it waits in a slot of its own instead of
        the heap of activities, which saves a heap entry per message; it cannot be cancelled or given another
        rate. Its steps are :meth:`start_activity`'s: it joins the heap when steps were taken while it moved or
        another activity is expected to end within :data:`LOOKAHEAD` of it; otherwise it ends alone, and one
        unit is always spent by the step ``1 / rate`` (the rounding error of ``rate * (1 / rate)`` is far below
        SimGrid's 1e-14 work precision), so no check is skipped.

        Raises:
            RuntimeError: the previous message has not arrived yet.
        """
        joined = self._joined
        if self._slot is not None or (joined is not None and joined.alive):
            raise RuntimeError("start_message: the previous message has not arrived")
        message = self._slot = self._message
        message.rate = rate
        message.prio = prio
        message.seq = next(self._seq)
        message.action = action
        message.argument = argument
        message.synced = self._nb_steps
        self._slot_duration = 1.0 / rate if rate else 1.0  # as Activity.time_left computes it
        self._slot_end = self.clock + self._slot_duration

    def sleep(self, duration: float, action: Callable[..., None], argument: Any = None) -> Activity | None:
        """``sleep_for(duration)`` of an actor, then ``action``: a no-op sleep when ``duration <= 0``."""
        if not duration > 0:
            self.schedule(PRIO_SEND, action, argument)
            return None
        return self.start_activity(duration, 0.0, PRIO_SEND, action, argument)

    def set_rate(self, activity: Activity, rate: float) -> Activity:
        """Let ``activity`` (a computation) progress at ``rate`` from now on (compute sharing: its share of its
        hosts changed). The work done so far is counted at the old rate, step by step as SimGrid counts it; the
        activity goes on as a new :class:`Activity` (same action, same place in the order of starts), which is
        returned: the old one must no longer be used."""
        if activity.synced != self._nb_steps:
            self._bring_up_to_date(activity)
        activity.alive = False  # its heap entry is dropped when it comes up
        moved = Activity(activity.remaining, rate, activity.prio, activity.seq, activity.action, activity.argument,
                         self._nb_steps)
        heapq.heappush(self._activities, (self.clock + moved.time_left(), moved.seq, moved))
        return moved

    def work_left(self, activity: Activity) -> float:
        """The work ``activity`` has left now (for a computation, the fraction of the task not done yet)."""
        if activity.synced != self._nb_steps:
            self._bring_up_to_date(activity)
        return activity.remaining

    @staticmethod
    def cancel(activity: Activity | None) -> None:
        """Stop ``activity`` (None: nothing to do); its action never runs."""
        if activity is not None:
            activity.alive = False  # its heap entry is dropped when it comes up

    def _bring_up_to_date(self, activity: Activity) -> None:
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
        if count <= SCALAR_REPLAY:
            if rate:
                for index in range(first, last):
                    remaining -= rate * deltas[index]
            else:
                for index in range(first, last):
                    remaining -= deltas[index]
        else:  # the same sequence of rounded subtractions, in numpy (accumulate is sequential)
            taken = np.frombuffer(deltas, dtype=np.float64, count=count, offset=first * _DOUBLE)  # a view, no copy
            steps = np.empty(count + 1)
            steps[0] = remaining
            if rate:
                np.multiply(taken, rate, out=steps[1:])
            else:
                steps[1:] = taken
            del taken  # (the step history cannot grow while numpy looks at it)
            remaining = float(np.subtract.accumulate(steps)[-1])
        activity.remaining = remaining
        activity.synced = self._nb_steps

    def _record_step(self, delta: float) -> None:
        """Append one clock step to the history that lagging activities replay."""
        deltas = self._deltas
        deltas.append(delta)
        self._nb_steps += 1
        if len(deltas) >= self._trim_at:
            self._trim_steps()

    def _trim_steps(self) -> None:
        """Forget the steps every activity has been brought past."""
        deltas = self._deltas
        oldest = min((entry[2].synced for entry in self._activities if entry[2].alive), default=self._nb_steps)
        if self._slot is not None:
            oldest = min(oldest, self._slot.synced)
        drop = oldest - self._delta_base
        if drop > 0:
            del deltas[:drop]
            self._delta_base = oldest
        self._trim_at = max(_TRIM_AT, 2 * len(deltas))

    def advance(self) -> tuple[Callable[..., None], Any] | bool | None:
        """One SimGrid step (ptask_L07 host model, full update): the clock jumps to the earliest end of an
        activity; every activity then loses that duration (sleeps) or the work done meanwhile (transfers,
        computations) and ends when what remains is below SimGrid's precision.

        Returns None when no activity is left. When one activity ends alone at this step and nothing is due in
        :attr:`ready`, its ``(action, argument)`` (the caller runs ``action(argument)``, or ``action()`` when the
        argument is None, as if it had been taken from :attr:`ready`); otherwise True: the ended activities were
        put in :attr:`ready`.

        Only the activities expected to end within :data:`LOOKAHEAD` seconds of the earliest one are
        updated at the step; the others replay the steps they missed, in the same order and with the same
        rounding, when they come near the front. Their expected ends are exact up to rounding (far below
        the lookahead), so an activity left aside can neither be the earliest nor end at this step: the
        result is SimGrid's full update, computed lazily."""
        heap = self._activities
        while heap and not heap[0][2].alive:
            heapq.heappop(heap)
        slot = self._slot
        if slot is not None:
            self._slot = None
            if slot.synced == self._nb_steps and not (heap and heap[0][0] <= self._slot_end + LOOKAHEAD):
                # the usual case for a message: up to date, and it ends alone; all of it is spent
                delta = self._slot_duration
                self.clock += delta
                self._record_step(delta)
                if self.ready:
                    heapq.heappush(self.ready, (slot.prio, slot.seq, slot.action, slot.argument))
                    return True
                return slot.action, slot.argument
            # otherwise it joins the heap as an ordinary activity (a copy: the slot serves the next message)
            activity = self._joined = Activity(1.0, slot.rate, slot.prio, slot.seq, slot.action, slot.argument,
                                               slot.synced)
            heapq.heappush(heap, (self._slot_end, activity.seq, activity))
        if not heap:
            return None
        key, _seq, first = heapq.heappop(heap)
        if first.synced != self._nb_steps:
            self._bring_up_to_date(first)
        horizon = key + LOOKAHEAD
        if not heap or heap[0][0] > horizon:  # the usual case: one activity ends alone, all of it is spent
            delta = first.time_left()
            self.clock += delta
            self._record_step(delta)
            first.remaining = 0.0
            first.alive = False
            first.synced = self._nb_steps
            if self.ready:
                heapq.heappush(self.ready, (first.prio, first.seq, first.action, first.argument))
                return True
            return first.action, first.argument
        front = [first]
        while heap and heap[0][0] <= horizon:
            activity = heapq.heappop(heap)[2]
            if activity.alive:
                self._bring_up_to_date(activity)
                front.append(activity)
        delta = min([activity.time_left() for activity in front])
        self.clock += delta
        self._record_step(delta)
        steps = self._nb_steps
        ended = []
        for activity in front:
            if activity.rate:
                if delta:  # (a zero step changes no finite amount; for an infinite rate, inf * 0 would be NaN)
                    activity.remaining -= activity.rate * delta
                # a task with no work (rate inf: nothing to compute on any host) ends in the step it starts
                done = activity.remaining < _WORK_PRECISION or activity.rate == _NO_WORK
            else:
                activity.remaining -= delta
                done = activity.remaining < _TIMING_PRECISION
            activity.synced = steps
            if done:
                activity.remaining = 0.0
                activity.alive = False
                ended.append(activity)
            else:
                heapq.heappush(heap, (self.clock + activity.time_left(), activity.seq, activity))
        for activity in ended:
            heapq.heappush(self.ready, (activity.prio, activity.seq, activity.action, activity.argument))
        return True
