"""Learning schedulers on real logs: a Gymnasium environment on the embedded engine (Batsim 4.2.1's semantics).

Importing this package registers the environment as :data:`ENV_ID`:

>>> import gymnasium, batreplay.gym                                    # doctest: +SKIP
>>> env = gymnasium.make("batreplay/Scheduling-v0", workload="KTH-SP2-1996-2.1-cln", platform="kth-sp2")

(or, without the import, ``gymnasium.make("batreplay.gym:batreplay/Scheduling-v0", ...)``). The environment is
:class:`~batreplay.gym.environment.SchedulingEnv`; a policy trained on it runs as a scheduler with
``batreplay run --scheduler agent`` (:mod:`batreplay.schedulers.agent`).
"""

from __future__ import annotations

import gymnasium

#: The id the environment is registered under.
ENV_ID = "batreplay/Scheduling-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="batreplay.gym.environment:SchedulingEnv")
