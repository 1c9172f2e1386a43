"""The protocol events the embedded engine sends, kept typed until someone needs them as Batsim's JSON.

Batsim's server collects events (a job submitted, a job completed, ...) and sends them in one message. The engine
collects them as :class:`Event` tuples ``(timestamp, type, payload)`` whose payload is what the event is about: the
engine's :class:`~batreplay.engine.records.Job` for JOB_SUBMITTED, a :class:`Completion` for JOB_COMPLETED, the
wire ``data`` mapping itself for the rare others (SIMULATION_BEGINS, JOB_KILLED, NOTIFY). A decision process run
through pybatsim gets the JSON form Batsim 4.2.1 sends (:func:`wire_message`); the direct driver of the built-in
schedulers (:mod:`.direct`) reads the typed events and never builds it, nor the allocation strings in it.
This module imports the engine's records.
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from batreplay.engine.records import Job

SIMULATION_BEGINS = "SIMULATION_BEGINS"
SIMULATION_ENDS = "SIMULATION_ENDS"
JOB_SUBMITTED = "JOB_SUBMITTED"
JOB_COMPLETED = "JOB_COMPLETED"
JOB_KILLED = "JOB_KILLED"
REQUESTED_CALL = "REQUESTED_CALL"
NOTIFY = "NOTIFY"


class Completion(NamedTuple):
    """What a JOB_COMPLETED says: the job, its final state (``COMPLETED_SUCCESSFULLY``...) and return code (0 for
    a success, -1 otherwise). The allocation is the job's (``allocated_resources``)."""

    job: Job
    state: str
    return_code: int


class Event(NamedTuple):
    """One protocol event: ``timestamp`` (seconds, as Batsim prints the clock), ``type`` (one of the names above)
    and ``payload`` (a Job, a :class:`Completion`, None, or the wire ``data`` mapping; see the module's text)."""

    timestamp: float
    type: str
    payload: Any


def wire_data(event: Event) -> dict:
    """The ``data`` object Batsim 4.2.1 sends for ``event``."""
    kind, payload = event.type, event.payload
    if kind == JOB_SUBMITTED:
        return {"job_id": payload.full_id, "job": payload.wire_description()}
    if kind == JOB_COMPLETED:
        job = payload.job
        return {"job_id": job.full_id, "job_state": payload.state, "return_code": payload.return_code,
                "alloc": job.allocated_resources}
    if kind == SIMULATION_BEGINS:  # a decision process may change the profiles it is given (pybatsim adds its
        return {**payload, "profiles": copy.deepcopy(payload["profiles"])}  # registrations): not the engine's
    return {} if payload is None else payload


def wire_message(now: float, events: list[Event]) -> dict:
    """A Batsim message as JSON-ready objects: ``{"now": now, "events": [{"timestamp", "type", "data"}, ...]}``."""
    return {"now": now, "events": [{"timestamp": event.timestamp, "type": event.type, "data": wire_data(event)}
                                   for event in events]}
