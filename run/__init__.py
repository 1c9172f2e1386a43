"""One simulation run: its single, serialisable specification (:mod:`batreplay.run.spec`: workload conversion options,
a replay user model, a platform, a scheduler with options, an engine) and the runner that turns it into a run
directory of Batsim outputs, metrics and a manifest (:mod:`batreplay.run.runner`). The CLI, campaign instances and
their worker all describe a run with the same specification. It may import every layer below it: foundation,
workloads, platforms, schedulers, replay, engine and analysis; never campaign or cli.
"""
