"""What the feedback broker needs from a user model, and the replay layer's error.

A *user model* decides when each job of a replay is submitted, possibly in reaction to what the simulation did
(Madon, Da Costa, Pierson 2024, section 4: users who wait for their jobs before submitting more).
:class:`batreplay.replay.broker.FeedbackBroker` talks to it only through :class:`UserModel`, so any object with
these methods and properties can drive a replay; :class:`batreplay.replay.feedback.ThinkTimeUsers` (the paper's
Algorithm 1) is one. Models are registered by name in :mod:`batreplay.replay.registry`.

Jobs are named by their SWF job number (an ``int``); times are seconds of simulated time.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


class ReplayError(ValueError):
    """A replay that cannot be set up (bad session specification, session graphs that do not fit the workload,
    unknown user model); the one-line message says why."""


@runtime_checkable
class UserModel(Protocol):
    """The users of a replay, as the feedback broker sees them.

    The broker calls :meth:`pop_due` whenever the simulation is idle at ``now``, registers the jobs returned,
    asks Batsim to wake it at :meth:`next_submission_time`, reports every job that ends with
    :meth:`job_terminated`, and tells Batsim that registration is over once :attr:`all_submitted` is true.
    """

    def next_submission_time(self) -> float | None:
        """Seconds at which the next job is due, or None when no submission is planned now (the model may plan
        more once running jobs terminate)."""
        ...

    def pop_due(self, now: float) -> list[int]:
        """Job numbers due at ``now`` (seconds) or before, in submission order; they count as submitted at
        ``now`` and are never returned again."""
        ...

    def job_terminated(self, job_id: int, now: float) -> None:
        """Job ``job_id`` completed, was killed or was rejected at ``now`` (seconds).

        Raises:
            KeyError: a job the model never handed out.
        """
        ...

    @property
    def all_submitted(self) -> bool:
        """True when every job of the model has been handed out (nothing more will ever be due)."""
        ...

    @property
    def nb_jobs(self) -> int:
        """Number of jobs the model will submit in the whole replay."""
        ...
