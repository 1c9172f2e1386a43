"""Analysis of finished runs: Batsim's ``out_jobs.csv`` / ``out_schedule.csv`` read back into the scheduling
metrics (waiting time, makespan, bounded slowdown, utilisation; :mod:`~batreplay.analysis.metrics`), the
lateness of a feedback replay (:mod:`~batreplay.analysis.lateness`), the adequacy measure P between two runs
of one job stream or a run and its recorded log (:mod:`~batreplay.analysis.adequacy`), every metric's unit,
label and format by name (:mod:`~batreplay.analysis.metric_registry`), the per-job submission differences between
two replays (:mod:`~batreplay.analysis.submission_differences`) and the users' arrivals in a log
(:mod:`~batreplay.analysis.user_arrivals`), figures, and the ``batreplay analyze``
tables and self-contained HTML report. It may import the layers below it: the foundation
(``batreplay.atomic``, ``batreplay.deadline``, ``batreplay.formats``), ``batreplay.workloads``,
``batreplay.platforms``, ``batreplay.schedulers``, ``batreplay.replay`` and ``batreplay.engine``; never
``batreplay.run``, ``batreplay.campaign`` or ``batreplay.cli``, which build on it.
"""
