"""The feedback broker as a file pybatsim's launcher can start next to a real Batsim.

pybatsim loads class ``FeedbackBroker`` from this file (its loader derives the class name from the file
name) and passes it the ``-o`` JSON options::

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

from pathlib import Path

from batreplay.replay import broker
from batreplay.run.runner import RunSpec, feedback_users, load_workload
from batreplay.schedulers.registry import load_scheduler


class FeedbackBroker(broker.FeedbackBroker):
    """:class:`batreplay.replay.broker.FeedbackBroker` built from pybatsim ``-o`` options (see the module).

    Raises:
        ValueError: no ``swf`` option.
    """

    def __init__(self, options: dict | None = None) -> None:
        options = dict(options or {})
        if "swf" not in options:
            raise ValueError("replay/feedbackBroker.py needs the option 'swf' (the SWF log to replay), "
                             "e.g. -o '{\"swf\": \"log.swf.gz\", \"sessions\": \"arrival:60\"}'")
        spec = RunSpec(workload=Path(options["swf"]), platform="", scheduler=options.get("scheduler", "easy"),
                       out_dir=Path("."), profile=options.get("profile", "parallel_homogeneous"),
                       recorded_speed=float(options.get("recorded_speed", 1e9)), max_jobs=options.get("max_jobs"),
                       walltime_factor=options.get("walltime_factor"))
        document, job_table, _notes = load_workload(spec)
        users, requests, _note = feedback_users(document, job_table, options.get("sessions", "arrival:60"))
        inner = load_scheduler(spec.scheduler, options.get("scheduler_options", {}))
        super().__init__(inner, users, requests)
