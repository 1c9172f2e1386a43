"""Experiment campaigns: a declarative TOML spec (logs x platforms x schedulers x replay models x seeds)
expanded into simulation instances (:mod:`~batreplay.campaign.spec`), each run as one run directory in a process
of its own by an executor chosen by name (:mod:`~batreplay.campaign.executors`: local processes or a Dask
cluster), resumed after an interruption (:mod:`~batreplay.campaign.runner`). Its results are gathered into reports by
:mod:`batreplay.reports`, the layer above, which campaign never imports: it may import everything below it
(foundation, ``batreplay.workloads``, ``batreplay.platforms``, ``batreplay.schedulers``, ``batreplay.replay``,
``batreplay.engine``, ``batreplay.analysis``, ``batreplay.run``), never ``batreplay.reports``, ``batreplay.ui`` nor
``batreplay.cli``.
"""
