"""Run a pybatsim decision process against the embedded engine, in one process, without ZeroMQ.

pybatsim's :class:`batsim.batsim.Batsim` talks to Batsim through a network handler with ``bind``,
``recv`` and ``send``. :class:`EngineConnection` offers the same three calls on top of a
:class:`~batreplay.engine.simulator.BatsimEngine`: ``recv`` returns the engine's next request and ``send``
hands the reply back. Any ``BatsimScheduler`` subclass (ours or a user's) therefore runs unchanged. It imports
the engine's simulator and decision-process runner (:mod:`.decision_process`, which imports pybatsim).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from batreplay.engine.decision_process import run_decision_process
from batreplay.engine.simulator import BatsimEngine

if TYPE_CHECKING:
    from batsim.batsim import BatsimScheduler


class EngineConnection:
    """A stand-in for pybatsim's ``NetworkHandler`` that exchanges messages with an engine in memory.

    Args:
        engine: the engine to drive.
        on_request: optional callback called with each request (for progress reporting).
        deadline: optional wall-clock limit (a :class:`batreplay.deadline.Deadline`), checked each time the
            decision process asks for the next message.
    """

    def __init__(self, engine: BatsimEngine, on_request: Callable[[dict], None] | None = None,
                 deadline=None) -> None:
        self.engine = engine
        self.on_request = on_request
        self.deadline = deadline
        self.messages = 0
        self.scheduler_seconds = 0.0
        self._sent_at = None

    def bind(self) -> None:
        """pybatsim binds its socket at start-up; nothing to do in memory."""

    def close(self) -> None:
        """pybatsim closes its socket after SIMULATION_ENDS; nothing to do in memory."""

    def recv(self, blocking: bool = False) -> dict | None:
        """The engine's next Batsim message (the engine runs until it has one); None once it has ended.

        Raises:
            WallClockTimeout: the deadline has expired.
        """
        if self.deadline is not None:
            self.deadline.check()
        request = self.engine.next_request()
        if request is not None:
            self.messages += 1
            if self.on_request is not None:
                self.on_request(request)
        self._sent_at = time.perf_counter()
        return request

    def send(self, message: dict) -> None:
        """Hand the decision process's reply to the engine (and count the time it took to decide)."""
        if self._sent_at is not None:
            self.scheduler_seconds += time.perf_counter() - self._sent_at
        self.engine.apply_reply(message)


def run_scheduler(engine: BatsimEngine, scheduler: BatsimScheduler,
                  on_request: Callable[[dict], None] | None = None, deadline=None) -> EngineConnection:
    """Simulate until the end: ``scheduler`` decides, ``engine`` plays Batsim.

    Returns the connection, whose ``messages`` and ``scheduler_seconds`` (wall-clock time spent in the
    decision process) describe the run.

    Raises:
        EngineError: the scheduler asked for something Batsim would refuse (double allocation, unknown job,
            unsupported event) or left jobs pending forever.
        WallClockTimeout: ``deadline`` (a :class:`batreplay.deadline.Deadline`) expired between two messages.
        DecisionProcessError: the scheduler (or pybatsim on its behalf) raised an exception, or exited
            (``sys.exit``) before the simulation ended; the one-line message names the file and line of the
            scheduler's code and the Batsim event being handled, the original exception is the ``__cause__``
            (see :mod:`batreplay.schedulers.failures`).
    """
    connection = EngineConnection(engine, on_request, deadline)
    run_decision_process(scheduler, connection, "inprocess://engine")
    return connection
