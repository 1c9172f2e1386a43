"""A wall-clock limit on a whole run (``batreplay run --timeout SECONDS``).

The decision process runs in this process (pybatsim calls the scheduler's methods in the calling thread), so a
scheduler that never answers, because it waits on a lock, sleeps or loops, cannot be stopped from outside by
closing a socket. Two mechanisms together bound a run:

1. **Checks at each message** (:meth:`Deadline.check`): the embedded engine's connection
   (:class:`batreplay.engine.inprocess.EngineConnection`) and the real-Batsim channel
   (:class:`batreplay.realbatsim.channel.BatsimChannel`) check the deadline each time the decision process asks
   for the next message, and while it waits for one. This works in any thread, and stops a simulation that
   simply takes too long.
2. **A watchdog** (:func:`wall_clock_limit`): an ``ITIMER_REAL`` interval timer (:func:`signal.setitimer`)
   whose ``SIGALRM`` handler raises :class:`WallClockTimeout` in the main thread, wherever the interpreter
   is: inside the scheduler's own code (a blocked ``Event.wait()``, ``time.sleep``, a Python loop), in the
   engine, or in ZeroMQ's poll. The exception unwinds the stack normally, so the launcher's clean-up runs
   (Batsim's process group is killed: no process is left behind) and the run's staging directory is removed.

Why not a thread or a subprocess: Python cannot stop a thread, so a hung scheduler in a watchdog-supervised
thread would keep running (and holding memory) after the error; running the decision process in a
subprocess would need every user scheduler to be picklable and would change how the embedded engine talks to
it. A signal is the one way to interrupt the interpreter's main thread.

:class:`WallClockTimeout` derives from :class:`BaseException` (as :class:`KeyboardInterrupt` does), so that a
scheduler's ``except Exception:`` cannot swallow it; :func:`batreplay.run.runner.run` turns it into a
:class:`~batreplay.run.runner.RunError`.

Limits: the watchdog only works in the main thread and only if no other interval timer is armed (it leaves
someone else's timer alone); elsewhere only the checks of (1) apply. It fires once: a scheduler that catches
``BaseException`` and carries on is stopped by (1) at its next message. C code that does not return to the
interpreter (one very long numpy call) is interrupted when it returns.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


#: The longest wall-clock limit accepted, seconds (about 31.7 years). The watchdog's interval timer takes a
#: ``time_t`` (``signal.setitimer`` overflows near 1e10 s); 1e9 s is far beyond any run and safe everywhere.
MAX_SECONDS = 1e9


class WallClockTimeout(BaseException):
    """The run exceeded its wall-clock limit (``--timeout``). A :class:`BaseException`, like
    :class:`KeyboardInterrupt`: catch it explicitly."""


def check_seconds(value: object, option: str) -> float:
    """``value`` as a duration in seconds: a finite number > 0 and at most :data:`MAX_SECONDS` (not a boolean).

    Raises:
        ValueError: anything else; the message names ``option`` (``--timeout``, ``--batsim-timeout``).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{option} must be a number of seconds > 0, got {value!r}")
    if value > MAX_SECONDS:
        raise ValueError(f"{option} {value:g}: at most {MAX_SECONDS:g} s (about 31 years); leave the option out "
                         "for no limit")
    return float(value)


class Deadline:
    """A wall-clock limit of ``seconds`` (seconds, > 0), counted from its creation (``time.monotonic``).

    Args:
        seconds: the limit, seconds.
        option: how the user sets it, quoted in the error (``--timeout``).

    Raises:
        ValueError: ``seconds`` not a finite number > 0, or above :data:`MAX_SECONDS`.
    """

    def __init__(self, seconds: float, option: str = "--timeout") -> None:
        self.seconds = check_seconds(seconds, option)
        self.option = option
        self.started = time.monotonic()

    def remaining(self) -> float:
        """Seconds left (negative once expired)."""
        return self.started + self.seconds - time.monotonic()

    def expired(self) -> bool:
        """True once the limit is reached."""
        return self.remaining() <= 0

    def error(self) -> WallClockTimeout:
        """The exception to raise when the limit is reached."""
        return WallClockTimeout(f"stopped after {self.seconds:g} s of wall-clock time ({self.option} "
                                f"{self.seconds:g}): the decision process did not answer in time or the "
                                "simulation takes longer; raise the limit or check the scheduler")

    def check(self) -> None:
        """Raise :class:`WallClockTimeout` if the limit is reached."""
        if self.expired():
            raise self.error()


@contextmanager
def wall_clock_limit(deadline: Deadline | None) -> Iterator[bool]:
    """Raise :class:`WallClockTimeout` in the main thread when ``deadline`` expires inside the block.

    Yields True when the watchdog is armed; False when ``deadline`` is None, when called outside the main
    thread, or when another interval timer is already armed (then only :meth:`Deadline.check` bounds the
    run). On exit the timer is disarmed and the previous ``SIGALRM`` handler restored.
    """
    if (deadline is None or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0)):
        yield False
        return
    active = True

    def on_alarm(signum, frame) -> None:
        if active:
            raise deadline.error()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(deadline.remaining(), 1e-3))
        yield True
    finally:
        active = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
