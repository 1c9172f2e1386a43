"""Replay: the user models that decide when the jobs of a log are submitted. Rigid replay keeps every recorded
submission time; replay with feedback (Madon, Da Costa, Pierson 2024, after Zakay & Feitelson) cuts each user's
jobs into sessions (:mod:`~batreplay.replay.sessions`), links them into session graphs weighted by think times
(:mod:`~batreplay.replay.session_graph`, :mod:`~batreplay.replay.session_source`) and lets the think-time users
(:mod:`~batreplay.replay.feedback`) submit a session once those it depends on have finished in the simulation,
through the feedback broker (:mod:`~batreplay.replay.broker`), a pybatsim decision process in front of any
scheduler. Models are registered by name (:mod:`~batreplay.replay.registry`, protocol in
:mod:`~batreplay.replay.protocol`). It sits beside the schedulers, above the inputs: it may import the foundation
modules (:mod:`batreplay.atomic`, :mod:`batreplay.deadline`, :mod:`batreplay.formats`), workloads, platforms,
schedulers and pybatsim, never the engine, analysis, run, campaign or cli.
"""
