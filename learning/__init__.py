"""Learning schedulers on real logs: a Gymnasium environment on the embedded engine (Batsim 4.2.1's semantics).

Importing this package registers the environment as :data:`ENV_ID`:

>>> import gymnasium, batreplay.gym                                    # doctest: +SKIP
>>> env = gymnasium.make("batreplay/Scheduling-v0", workload="KTH-SP2-1996-2.1-cln", platform="kth-sp2")

(or, without the import, ``gymnasium.make("batreplay.gym:batreplay/Scheduling-v0", ...)``). The environment is
:class:`~batreplay.gym.environment.SchedulingEnv`; a policy trained on it runs as a scheduler with
``batreplay run --scheduler agent`` (:mod:`batreplay.schedulers.agent`).

Modules: :mod:`.episodes` (the log and platform read once, with a run description's checks; windows; each
episode's engine and decision process), :mod:`.rewards` (rewards from the episode's out_jobs rows) and
:mod:`.environment` (the Gymnasium API). The source folder is ``learning/``, not ``gym/``: a folder named ``gym``
on ``sys.path`` (the repository root, ``tests/``) would shadow the legacy ``gym`` package that libraries such as
stable-baselines3 try to import. The package sits in the layer above one run: it may import batreplay.run and every
layer below it (the engine, the schedulers, the workloads, the analysis), gymnasium and greenlet; nothing of
batreplay imports it.
"""

from __future__ import annotations

import gymnasium

#: The id the environment is registered under.
ENV_ID = "batreplay/Scheduling-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="batreplay.gym.environment:SchedulingEnv")
