"""The engines by name and the defaults of their options, in a module that imports nothing.

:class:`batreplay.engine.spec.EngineSpec` checks its ``name`` against :data:`ENGINES` and takes its defaults from
here, as does the real-Batsim launcher (:mod:`batreplay.realbatsim.launcher`) for its timeout; the command line
and campaign files read their choices from here, so that ``batreplay run --help`` needs neither ZeroMQ nor numpy.
"""

from __future__ import annotations

#: The engines, by name: ``embedded`` (the in-process Batsim 4.2.1 of this package, the default) or ``batsim``
#: (a real Batsim 4.2 over ZeroMQ).
ENGINES: tuple[str, ...] = ("embedded", "batsim")
#: The engine of a run when none is named.
DEFAULT_ENGINE: str = ENGINES[0]
#: Default of the real Batsim's timeout (``--batsim-timeout``), seconds: long enough for Batsim to load a huge
#: workload or platform before its first message, short enough to notice a hung Batsim within minutes.
DEFAULT_TIMEOUT: float = 600.0
#: The speedup models of co-scheduling (``--speedup-model``), as :data:`batreplay.platforms.speedup.SPEEDUP_MODELS`
#: names them.
SPEEDUP_MODEL_NAMES: tuple[str, ...] = ("none", "table", "random")
