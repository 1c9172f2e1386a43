"""The simulation engines: an embedded, in-process Batsim 4.2.1 for rigid compute-only jobs (``simulator`` and
its parts ``kernel``, ``server``, ``handlers``, ``execution``, ``records``, driven by ``inprocess``), the launcher
that runs a decision process next to a real Batsim over ZeroMQ (``batsim_launcher``), and ``simulate``, the one
entry point that serves both and writes Batsim's output files. The package may import batreplay.workloads,
platforms, formats, schedulers, replay and the foundation modules (batreplay.atomic, batreplay.deadline); it never
imports analysis, run, campaign or the command line.
"""
