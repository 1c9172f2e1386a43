"""Workload input: reading Standard Workload Format logs (:mod:`~batreplay.workloads.swf`), downloading them from the
Parallel Workloads Archive (:mod:`~batreplay.workloads.pwa`), converting them to Batsim workloads and checking Batsim
JSON workloads (:mod:`~batreplay.workloads.batsim_workload`), and the one loader with its conversion options
(:mod:`~batreplay.workloads.loading`). It is the first layer of the data path: it may import only the foundation
modules (:mod:`batreplay.atomic`, :mod:`batreplay.deadline`, :mod:`batreplay.formats`), never the layers
above it (schedulers, replay, engine, analysis, run, campaign, cli).
"""
