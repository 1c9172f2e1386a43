"""A real Batsim 4.2 next to a decision process, over ZeroMQ: the other engine :func:`batreplay.engine.simulate`
can choose. ``launcher`` runs a whole simulation (:func:`~.launcher.run_with_batsim`), ``process`` finds, checks,
starts and stops the ``batsim`` executable and writes its command line, ``channel`` is the decision process's
watched ZeroMQ socket and protocol loop, ``errors`` says what went wrong, and ``pybatsim_run`` runs pybatsim's own
launcher beside ``batsim`` (the reference of the tests and benchmarks). It stands at the engine layer: it may
import pyzmq, pybatsim, batreplay.engine.choices and batreplay.engine.decision_process, and the foundation
modules; it never imports the embedded engine's simulator, analysis, run, campaign or the command line.
"""
