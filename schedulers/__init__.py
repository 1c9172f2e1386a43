"""Batch schedulers for batreplay: FCFS, EASY backfilling and conservative backfilling.

Each scheduler is a plain policy object (submit / complete / decide, no clock, no pybatsim) plus a thin pybatsim
``BatsimScheduler`` adapter. Use :func:`batreplay.schedulers.registry.load_scheduler` to get one by name.
"""

from batreplay.schedulers.conservative import Conservative, ConservativePolicy
from batreplay.schedulers.easy import Easy, EasyPolicy
from batreplay.schedulers.fcfs import Fcfs, FcfsPolicy
from batreplay.schedulers.policy import QueuedJob, Rejection, SchedulingPolicy

__all__ = [
    "Conservative",
    "ConservativePolicy",
    "Easy",
    "EasyPolicy",
    "Fcfs",
    "FcfsPolicy",
    "QueuedJob",
    "Rejection",
    "SchedulingPolicy",
]
