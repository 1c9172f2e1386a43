"""Validation of site models on held-out jobs (Caspart et al. 2019, Sect. 6): the log's test jobs and a simulation of
the model compared measure by measure (:mod:`~batreplay.validation.measures`), ``batreplay model validate``. It sits
above the run layer, whose runs it makes and reads: it may import the run layer and every layer below it, never the
campaign, reports, ui or cli layers.
"""
