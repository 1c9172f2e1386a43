"""The protocol events the embedded engine sends, kept typed until someone needs them as Batsim's JSON.

Batsim's server collects events (a job submitted, a job completed, ...) and sends them in one message. The engine
collects them as :class:`Event` tuples ``(timestamp, type, payload)`` whose payload is what the event is about: the
engine's :class:`~batreplay.engine.records.Job` for JOB_SUBMITTED and JOB_COMPLETED (an ended job's state, return
code and allocation do not change any more), the wire ``data`` mapping itself for the rare others
(SIMULATION_BEGINS, JOB_KILLED, NOTIFY). A decision process run through pybatsim gets the JSON form Batsim 4.2.1
sends (:func:`wire_message`); the direct driver of the built-in schedulers (:mod:`.direct`) reads the typed events
and never builds it. This module imports only the kernel's :func:`~batreplay.engine.kernel.wire_numbers`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from batreplay.engine.kernel import wire_numbers

SIMULATION_BEGINS = "SIMULATION_BEGINS"
SIMULATION_ENDS = "SIMULATION_ENDS"
JOB_SUBMITTED = "JOB_SUBMITTED"
JOB_COMPLETED = "JOB_COMPLETED"
JOB_KILLED = "JOB_KILLED"
REQUESTED_CALL = "REQUESTED_CALL"
NOTIFY = "NOTIFY"


class Event(NamedTuple):
    """One protocol event: ``timestamp`` (seconds, as Batsim prints the clock), ``type`` (one of the names above)
    and ``payload`` (a Job, None, or the wire ``data`` mapping; see the module's text)."""

    timestamp: float
    type: str
    payload: Any


def wire_data(event: Event) -> dict:
    """The ``data`` object Batsim 4.2.1 sends for ``event``."""
    kind, payload = event.type, event.payload
    if kind == JOB_SUBMITTED:
        return {"job_id": payload.full_id, "job": payload.wire_description()}
    if kind == JOB_COMPLETED:
        return {"job_id": payload.full_id, "job_state": payload.state, "return_code": payload.return_code,
                "alloc": payload.allocated_resources}
    if kind == SIMULATION_BEGINS:  # a copy, with numbers as Batsim prints them: a decision process may change the
        return {**payload, "profiles": wire_numbers(payload["profiles"])}  # profiles it is given (pybatsim adds its
        # registrations), not the engine's
    return {} if payload is None else payload


def wire_message(now: float, events: list[Event]) -> dict:
    """A Batsim message as JSON-ready objects: ``{"now": now, "events": [{"timestamp", "type", "data"}, ...]}``."""
    return {"now": now, "events": [{"timestamp": event.timestamp, "type": event.type, "data": wire_data(event)}
                                   for event in events]}
