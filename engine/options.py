"""What the embedded engine is asked to play: Batsim's protocol options and the error for what it refuses.

:class:`EngineOptions` holds the Batsim command-line flags that change the protocol; :class:`EngineError` is raised
whenever the decision process asks for something Batsim would refuse or the engine does not reproduce. This module
imports nothing from batreplay: every other engine module may import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class EngineError(RuntimeError):
    """The decision process asked for something Batsim would refuse, or the engine does not support."""


@dataclass
class EngineOptions:
    """Batsim command-line options that change the protocol (see Batsim's ``docs/cli.rst``).

    Attributes:
        dynamic_jobs: ``--enable-dynamic-jobs``: REGISTER_JOB allowed; the simulation never ends before
            NOTIFY ``registration_finished``.
        acknowledge_dynamic_jobs: ``--acknowledge-dynamic-jobs``: each REGISTER_JOB is echoed as a
            JOB_SUBMITTED in the next message.
        profile_reuse: ``--enable-profile-reuse``: registered profiles stay usable after their jobs end.
        compute_sharing: ``--enable-compute-sharing``: several jobs may run on one host at once, sharing its
            flop rate (see :mod:`batreplay.engine.sharing`).
        speedup_model: co-scheduling, an extension of the embedded engine that Batsim has no flag for: several jobs
            may run on one host at once, each sped up or slowed down by its neighbours as this model says (a
            :class:`batreplay.platforms.speedup.SpeedupModel`; see :mod:`batreplay.engine.coscheduling`), instead of
            sharing the host's flop rate. None: off.
    """

    dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    profile_reuse: bool = False
    compute_sharing: bool = False
    speedup_model: Any = None

    @property
    def shares_hosts(self) -> bool:
        """Several jobs may run on one host (compute sharing or co-scheduling)."""
        return self.compute_sharing or self.speedup_model is not None
