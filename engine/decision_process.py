"""Running a pybatsim decision process over a network handler of ours: the one place that patches pybatsim.

pybatsim 3.2.1's ``Batsim`` object builds its ``NetworkHandler`` (a ZeroMQ REP socket whose first receive blocks
without a time limit) inside its constructor. Both ways batreplay simulates give it another handler with the same
calls (``bind``, ``recv``, ``send``, ``close``): the in-memory connection to the embedded engine
(:mod:`.inprocess`) and the watched socket next to a real Batsim (:mod:`batreplay.realbatsim.channel`).
:func:`run_decision_process` substitutes the handler while the ``Batsim`` object is built, then runs the
decision process until the end of the simulation. It imports pybatsim and batreplay.schedulers.failures.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def pybatsim_network(handler: Any) -> Iterator[Any]:
    """Make pybatsim's ``Batsim`` use ``handler`` instead of building its own ``NetworkHandler``; yields the
    ``batsim.batsim`` module. The substitution patches a module attribute for the duration of the block: do not
    build two ``Batsim`` objects concurrently in threads of one process."""
    from unittest import mock  # (imports asyncio: only when a decision process runs through pybatsim)

    import batsim.batsim as pybatsim

    with mock.patch.object(pybatsim, "NetworkHandler", lambda *args, **kwargs: handler):
        yield pybatsim


def run_decision_process(scheduler: Any, handler: Any, endpoint: str, *, exits_only: bool = False) -> None:
    """Run the pybatsim ``scheduler`` (a ``BatsimScheduler`` instance) on ``handler`` until pybatsim returns
    (after answering SIMULATION_ENDS, or when ``handler.recv`` returns None).

    Args:
        endpoint: what pybatsim is told its endpoint is (only printed by pybatsim).
        exits_only: see :func:`batreplay.schedulers.failures.decision_process_guard`: True turns only the
            scheduler's exits into :class:`~batreplay.schedulers.failures.DecisionProcessError`, False its
            exceptions too.

    Raises:
        DecisionProcessError: the scheduler failed or exited (see above); anything ``handler`` raises, unchanged.
    """
    from batreplay.schedulers.failures import decision_process_guard

    with decision_process_guard(exits_only=exits_only):
        with pybatsim_network(handler) as pybatsim:
            decision_process = pybatsim.Batsim(scheduler, network_endpoint=endpoint, timeout=0)
        decision_process.start()
