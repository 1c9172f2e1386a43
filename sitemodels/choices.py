"""Defaults of the site-model commands, importable without numpy (the ``batreplay`` parser shows them at once)."""

#: Most bins of a histogram, and most distinct values of a discrete distribution (:mod:`.distributions`).
DEFAULT_MAX_BINS = 50
#: Least number of inter-arrival times an hour of the week (or of the day) needs for its own distribution
#: (:mod:`.arrivals`).
DEFAULT_MIN_GAPS = 30
#: Fields a rule or a selection may name -> their SWF column (:mod:`.job_types`).
FIELD_COLUMNS: dict[str, str] = {"group": "group_id", "user": "user_id", "queue": "queue_id",
                                 "partition": "partition_id", "executable": "executable_id"}
