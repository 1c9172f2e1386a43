"""The simulation engines: an embedded, in-process Batsim 4.2.1 for rigid compute-only jobs (``simulator`` and
its parts ``kernel``, ``server``, ``handlers``, ``execution``, ``records``, driven by ``inprocess``), and
``simulate``, the one entry point that serves it or a real Batsim over ZeroMQ (:mod:`batreplay.realbatsim`, the
launcher, at the same layer) and writes Batsim's output files. The package may import batreplay.workloads,
platforms, formats, schedulers, replay, realbatsim and the foundation modules (batreplay.atomic,
batreplay.deadline); it never imports analysis, run, campaign or the command line.
"""
