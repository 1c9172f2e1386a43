"""What the embedded engine is asked to play: Batsim's protocol options and the error for what it refuses.

:class:`EngineOptions` holds the Batsim command-line flags that change the protocol; :class:`EngineError` is raised
whenever the decision process asks for something Batsim would refuse or the engine does not reproduce. This module
imports nothing from batreplay: every other engine module may import it.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    """

    dynamic_jobs: bool = False
    acknowledge_dynamic_jobs: bool = False
    profile_reuse: bool = False
