"""Site models (Caspart et al. 2019, GridKa): job types, distributions fitted on a random share of a log's jobs
(:mod:`~batreplay.sitemodels.fit`), the model file (:mod:`~batreplay.sitemodels.model_file`), and open workloads
drawn from a model (:mod:`~batreplay.sitemodels.generate`). It is an input of the data path, beside the workloads
it reads and writes: it may import only the foundation modules and :mod:`batreplay.workloads`, never the layers
above it (schedulers, replay, engine, analysis, run, campaign, cli).
"""
