"""Campaign reports: the finished instances of a campaign gathered into the tables and figures of the papers they
reproduce, beside the published values (:mod:`~batreplay.reports.report`, ``batreplay campaign report``): tables
(:mod:`~batreplay.reports.tables`), figures (:mod:`~batreplay.reports.figures`,
:mod:`~batreplay.reports.user_figures`, :mod:`~batreplay.reports.session_structure`,
:mod:`~batreplay.reports.weekly`, :mod:`~batreplay.reports.lateness_figures`), what each SWF log itself says
(:mod:`~batreplay.reports.log_facts`) and the written explanations of a campaign
(:mod:`~batreplay.reports.explanations`). The tables and figures that apply to some user models only are those the
models declare in their registry entry (:mod:`~batreplay.reports.user_models`).

It reads campaign results, so it sits above ``batreplay.campaign``: it may import ``batreplay.campaign`` and
everything below it (foundation, ``batreplay.workloads``, ``batreplay.platforms``, ``batreplay.schedulers``,
``batreplay.replay``, ``batreplay.engine``, ``batreplay.analysis``, ``batreplay.run``), never ``batreplay.ui`` nor
``batreplay.cli``; ``batreplay.campaign`` never imports it.
"""
