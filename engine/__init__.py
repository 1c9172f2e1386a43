"""The simulation engines: an embedded, in-process Batsim 4.2.1 for rigid jobs that compute, read and write or
send bytes (``simulator`` and its parts ``kernel``, ``server``, ``handlers``, ``execution``, ``transfers``,
``records``, driven by ``inprocess``), and
``simulate``, the one entry point that serves it or a real Batsim over ZeroMQ (:mod:`batreplay.realbatsim`, the
launcher, at the same layer) and writes Batsim's output files. The package may import batreplay.workloads,
platforms, formats, schedulers, replay, realbatsim and the foundation modules (batreplay.atomic,
batreplay.deadline); it never imports analysis, run, campaign or the command line.
"""
