"""The feedback broker as a file pybatsim's launcher can start next to a real Batsim.

pybatsim loads class ``FeedbackBroker`` from this file: its loader derives the class name from the file name,
which is why this one file is named in camelCase (``feedbackBroker.py`` -> ``FeedbackBroker``) unlike the rest of
the package. It passes the ``-o`` JSON options::

    batsim -p platforms/kth-sp2.xml -w empty.json -e out/out --enable-dynamic-jobs --acknowledge-dynamic-jobs &
    uv run pybatsim replay/feedbackBroker.py -t 0 -o '{"swf": "../shared/workloads/KTH-SP2-1996-2.1-cln.swf.gz",
        "sessions": "arrival:60", "scheduler": "easy"}'

where ``empty.json`` is a workload without jobs (``{"nb_res": 100, "jobs": [], "profiles": {}}``): every
job reaches Batsim by dynamic registration. Options:

- ``swf`` (required): the SWF log to replay;
- ``sessions``: ``method:minutes``, a label such as ``a60``, or a directory of session graphs (default
  ``arrival:60``);
- ``scheduler``: ``fcfs``, ``easy``, ``conservative`` or the path of a pybatsim scheduler file (default
  ``easy``); ``scheduler_options``: its options;
- ``profile`` (``parallel_homogeneous`` or ``delay``), ``recorded_speed`` (flop/s, default 1e9),
  ``walltime_factor`` and ``max_jobs``, as for ``batreplay run``.

``batreplay run --replay feedback`` builds the same decision process; this file is for running it by hand.
"""

from __future__ import annotations

from dataclasses import fields

from batreplay.replay import broker
from batreplay.replay.feedback_setup import feedback_users
from batreplay.replay.registry import ReplaySpec
from batreplay.schedulers.registry import load_scheduler
from batreplay.workloads.loading import WorkloadOptions, load_workload


class FeedbackBroker(broker.FeedbackBroker):
    """:class:`batreplay.replay.broker.FeedbackBroker` built from pybatsim ``-o`` options (see the module).

    Raises:
        ValueError: no ``swf`` option; WorkloadError (a ValueError): a missing log or a bad conversion option;
            ReplayError (a ValueError): a bad ``sessions`` option.
    """

    def __init__(self, options: dict | None = None) -> None:
        options = dict(options or {})
        if "swf" not in options:
            raise ValueError("replay/feedbackBroker.py needs the option 'swf' (the SWF log to replay), "
                             "e.g. -o '{\"swf\": \"log.swf.gz\", \"sessions\": \"arrival:60\"}'")
        conversion = WorkloadOptions(**{item.name: options[item.name] for item in fields(WorkloadOptions)
                                        if item.name in options})  # the options of batreplay run, same names
        loaded = load_workload(options["swf"], conversion)
        sessions = ReplaySpec("feedback", options.get("sessions")).sessions  # checked; None: feedback's default
        users, requests, _note = feedback_users(loaded.document, loaded.job_table, sessions)
        inner = load_scheduler(options.get("scheduler", "easy"), options.get("scheduler_options", {}))
        super().__init__(inner, users, requests)
