"""What a learning scheduler sees at a decision: the waiting jobs it may start and the platform's state, as one
fixed-size array of numbers in [0, 1].

The same encoding serves the Gymnasium environment (:mod:`batreplay.gym`) and the scheduler that runs a trained
policy (:mod:`batreplay.schedulers.agent`), so a policy sees the very same numbers in training and as a scheduler.

Layout of :meth:`ObservationLayout.encode`, a float32 vector of :attr:`ObservationLayout.size` values, in this order
(:meth:`ObservationLayout.slices` names each block):

1. ``jobs``: the first K waiting jobs in the queue order (K = ``jobs_shown``), 4 values each, row after row:
   ``present`` (1, or 0 for an empty row when fewer than K jobs wait), ``requested_resources`` (nodes / the
   platform's nodes), ``requested_time`` (``scaled(walltime)``, 1 for a job without walltime) and ``waited``
   (``scaled(now - submission time)``);
2. ``running``: the R running jobs expected to end first (R = ``running_shown``), by expected end (start +
   walltime), 2 values each: ``nodes`` (its nodes / the platform's nodes) and ``remaining_requested_time``
   (``scaled(expected end - now)``, 0 when past, 1 without walltime); empty rows are 0;
3. ``platform``: ``free_nodes`` (free nodes / the platform's nodes) and ``more_waiting`` (the waiting jobs beyond
   the K shown, ``n / (n + K)``);
4. ``action_mask``: the K + 1 values of the action mask (1: allowed), the last one "wait".

Scaling of durations: ``scaled(t) = t / (t + T)`` for ``t >= 0`` s, with T = ``time_scale`` (s): ``T`` maps to
0.5, ``3T`` to 0.75, and every duration stays below 1 (ordered, never clipped); ``inf`` (no walltime) is 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from batreplay.schedulers.policy import QueuedJob

#: Values of each waiting job's row, in order.
JOB_FEATURES: tuple[str, ...] = ("present", "requested_resources", "requested_time", "waited")
#: Values of each running job's row, in order.
RUNNING_FEATURES: tuple[str, ...] = ("nodes", "remaining_requested_time")
#: Values describing the platform, in order.
PLATFORM_FEATURES: tuple[str, ...] = ("free_nodes", "more_waiting")


def scaled(seconds: float, time_scale: float) -> float:
    """``seconds / (seconds + time_scale)`` in [0, 1): 0 for 0 s (and anything negative), 1 for ``inf``."""
    if seconds <= 0:
        return 0.0
    if seconds == math.inf:
        return 1.0
    return seconds / (seconds + time_scale)


@dataclass(frozen=True)
class ObservationLayout:
    """The observation's shape and scaling (see the module docstring).

    Attributes:
        jobs_shown: K, waiting jobs shown (and choosable), >= 1.
        running_shown: R, running jobs shown, >= 0.
        time_scale: T, seconds, > 0.
    """

    jobs_shown: int
    running_shown: int
    time_scale: float

    @property
    def size(self) -> int:
        """Number of values of an observation: ``4 K + 2 R + 2 + K + 1``."""
        return (self.jobs_shown * len(JOB_FEATURES) + self.running_shown * len(RUNNING_FEATURES)
                + len(PLATFORM_FEATURES) + self.jobs_shown + 1)

    def slices(self) -> dict[str, slice]:
        """Where each block lies in an observation: ``jobs`` (reshape to ``(K, 4)``), ``running`` (``(R, 2)``),
        ``platform`` and ``action_mask``."""
        sizes = {"jobs": self.jobs_shown * len(JOB_FEATURES), "running": self.running_shown * len(RUNNING_FEATURES),
                 "platform": len(PLATFORM_FEATURES), "action_mask": self.jobs_shown + 1}
        blocks, start = {}, 0
        for name, length in sizes.items():
            blocks[name] = slice(start, start + length)
            start += length
        return blocks

    def encode(self, queue: Sequence[QueuedJob], submitted_at: Mapping[str, float],
               running_ends: Sequence[tuple[float, int, int]], free: int, total: int, now: float,
               mask: np.ndarray) -> np.ndarray:
        """The observation at ``now`` (s).

        Args:
            queue: the waiting jobs in queue order (only the first K are read).
            submitted_at: submission time (s) by job id, for the waiting jobs.
            running_ends: ``(expected end s, start sequence, nodes)`` of the running jobs by expected end.
            free, total: free nodes and the platform's nodes.
            mask: the action mask, K + 1 booleans.

        Returns:
            A float32 array of :attr:`size` values in [0, 1].
        """
        scale = self.time_scale
        shown = self.jobs_shown
        values = np.zeros(self.size, dtype=np.float32)
        row = 0
        for job in queue[:shown]:
            walltime = math.inf if job.walltime is None else job.walltime
            values[row:row + 4] = (1.0, job.requested_resources / total, scaled(walltime, scale),
                                   scaled(now - submitted_at[job.id], scale))
            row += 4
        row = shown * len(JOB_FEATURES)
        for end, _sequence, nodes in running_ends[:self.running_shown]:
            values[row:row + 2] = (nodes / total, scaled(end - now, scale))
            row += 2
        row = shown * len(JOB_FEATURES) + self.running_shown * len(RUNNING_FEATURES)
        more = max(len(queue) - shown, 0)
        values[row:row + 2] = (free / total, more / (more + shown))
        values[row + 2:] = mask
        return values
