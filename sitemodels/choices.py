"""Defaults of the site-model commands, importable without numpy (the ``batreplay`` parser shows them at once)."""

#: Most bins of a histogram, and most distinct values of a discrete distribution (:mod:`.distributions`).
DEFAULT_MAX_BINS = 50
#: Most distinct values of an integer quantity (job slots, rounds) kept as a discrete distribution: drawing then
#: gives only values the log has (:mod:`.distributions`).
MAX_DISCRETE_INTEGERS = 4096
#: Fields a rule or a selection may name -> their SWF column (:mod:`.job_types`).
FIELD_COLUMNS: dict[str, str] = {"group": "group_id", "user": "user_id", "queue": "queue_id",
                                 "partition": "partition_id", "executable": "executable_id"}
