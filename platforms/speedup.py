"""Speedup models for co-scheduling: how fast a job runs beside a neighbour, relative to running alone.

The co-scheduling HPC simulator this project builds on (its PAPER.md, section "How is co-scheduling
supported") runs jobs co-allocated on the CPUs of shared hosts. At each step, a job's speedup is the
worst one over the jobs it shares a host with::

    speedup_{n+1} = min over neighbours k of getSpeedup(job, k)            (1)
    remTime_{n+1} = remTime_n * speedup_n / speedup_{n+1}                   (2)

starting from speedup 1, the job's compact execution time (alone on its hosts). A *speedup model* is
``getSpeedup``: :class:`SpeedupModel` is its interface, and three models are shipped, by name in
:data:`SPEEDUP_MODELS`:

- ``none`` (:class:`NoSpeedup`): 1 for every pair: co-allocated jobs run as if alone;
- ``table`` (:class:`TableSpeedup`): pairwise speedups per job class, read from a CSV file (e.g. compute-bound and
  memory-bound classes); a job's class is one of its workload properties (default ``class``) or follows a rule on
  a numeric field (``class_rule``: e.g. jobs of fewer than 8 nodes are ``compute``, the others ``memory``);
- ``random`` (:class:`RandomSpeedup`): a seeded draw per ordered pair of jobs, uniform in ``[low, high]``.

Models see jobs as their Batsim JSON objects (``id`` is ``workload!name``; ``res``, ``profile``, ``subtime``,
``walltime`` and any other property of the workload). :func:`make_speedup_model` builds one from its name and a JSON
object of options, as ``batreplay run --speedup-model NAME --speedup-options JSON`` does. This module imports numpy
and pandas only.
"""

from __future__ import annotations

import inspect
import math
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


class SpeedupModelError(ValueError):
    """A speedup model that cannot be built (unknown name or option, unreadable table) or a job it cannot rate;
    the message names the file, line and field, or the job."""


@runtime_checkable
class SpeedupModel(Protocol):
    """``getSpeedup`` of the co-scheduling model: ``speedup(job, neighbour)`` is how much faster ``job`` runs beside
    ``neighbour`` than alone on its hosts (a factor > 0; below 1: slower). Jobs are Batsim JSON objects."""

    def speedup(self, job: Mapping[str, Any], neighbour: Mapping[str, Any]) -> float:
        """The factor (> 0) for ``job`` beside ``neighbour``."""
        ...

    def check_job(self, job: Mapping[str, Any]) -> None:
        """Raise :class:`SpeedupModelError` if the model cannot rate ``job`` (called before the simulation for the
        workload's jobs, at registration for the others)."""
        ...


def kind_of(model: SpeedupModel, job: Mapping[str, Any]) -> Any:
    """What the speedups of ``job`` depend on under ``model``: two jobs of one kind get the same speedup beside any
    neighbour, and give the same one to it. A model may say so with a method ``kind(job)`` (``none``: one kind for
    all; ``table``: the job's class); without it, every job is its own kind (its id). A scheduler that predicts
    speedups (:mod:`batreplay.schedulers.coscheduling`) asks the model once per pair of kinds."""
    kind = getattr(model, "kind", None)
    return ("job", str(job.get("id"))) if kind is None else kind(job)


class NoSpeedup:
    """Speedup 1 for every pair: co-allocated jobs run at their compact speed."""

    def speedup(self, job: Mapping[str, Any], neighbour: Mapping[str, Any]) -> float:
        """Always 1.0."""
        return 1.0

    def check_job(self, job: Mapping[str, Any]) -> None:
        """Every job can be rated."""

    def kind(self, job: Mapping[str, Any]) -> str:
        """One kind for every job (see :func:`kind_of`)."""
        return ""


class TableSpeedup:
    """Pairwise speedups per job class, from a CSV file with columns ``job_class``, ``neighbour_class`` and
    ``speedup`` (one row per ordered pair of classes, every pair of the classes named present).

    Args:
        table: the CSV file.
        class_field: the job property holding its class (a workload job's field, e.g. ``"class": "memory"``).
        default_class: the class of a job without that property; None: such a job is an error.
        class_rule: instead of a property, a rule on a numeric field of the job's Batsim JSON object:
            ``{"field": "res", "threshold": 8, "below": "compute", "above": "memory"}`` gives class ``below`` to a
            job whose ``field`` is < ``threshold`` and ``above`` to the others (``res``: requested nodes,
            ``walltime``: requested time, s). None (default): the property ``class_field``.

    Raises:
        SpeedupModelError: a missing file or column, a speedup that is not a number > 0 (file, line and column
            named), a pair given twice or missing, an unknown ``default_class``, a rule with a missing or unknown
            key or a class the table does not have.
    """

    def __init__(self, table: str | Path, class_field: str = "class", default_class: str | None = None,
                 class_rule: Mapping[str, Any] | None = None) -> None:
        import pandas as pd

        for key, value in (("table", table), ("class_field", class_field)):
            if not isinstance(value, (str, Path)) or not str(value):
                raise SpeedupModelError(f"speedup model 'table': option {key}: expected a non-empty string, "
                                        f"got {value!r}")
        if default_class is not None and not isinstance(default_class, str):
            raise SpeedupModelError(f"speedup model 'table': option default_class: expected a class name or null, "
                                    f"got {default_class!r}")
        path = Path(table)
        if not path.is_file():
            raise SpeedupModelError(f"speedup table {path}: no such file")
        try:
            rows = pd.read_csv(path, dtype=str, keep_default_na=False)  # as written, for the messages
        except (ValueError, UnicodeDecodeError) as err:  # pandas' ParserError and EmptyDataError are ValueErrors
            reason = " ".join(str(err).split())  # pandas' messages may span lines: the error is one line
            raise SpeedupModelError(f"speedup table {path}: not a readable CSV file ({reason}); expected columns "
                                    "job_class, neighbour_class, speedup") from None
        missing = [c for c in ("job_class", "neighbour_class", "speedup") if c not in rows.columns]
        if missing:
            raise SpeedupModelError(f"speedup table {path}: missing column(s) {', '.join(missing)} (expected "
                                    "job_class, neighbour_class, speedup)")
        values = pd.to_numeric(rows["speedup"], errors="coerce")
        self.speedups: dict[tuple[str, str], float] = {}
        for index, (mine, theirs, value) in enumerate(zip(rows["job_class"], rows["neighbour_class"], values)):
            line = index + 2  # the header is line 1
            if not value > 0 or value == float("inf"):
                raise SpeedupModelError(f"{path}:{line}: column 'speedup': {rows['speedup'].iloc[index]!r} is not "
                                        "a number > 0")
            if (mine, theirs) in self.speedups:
                raise SpeedupModelError(f"{path}:{line}: the pair ({mine}, {theirs}) is given twice")
            self.speedups[(str(mine), str(theirs))] = float(value)
        self.classes = sorted({c for pair in self.speedups for c in pair})
        absent = [(a, b) for a in self.classes for b in self.classes if (a, b) not in self.speedups]
        if absent:
            raise SpeedupModelError(f"speedup table {path}: no speedup for the pair(s) "
                                    + ", ".join(f"({a}, {b})" for a, b in absent[:5]))
        if default_class is not None and default_class not in self.classes:
            raise SpeedupModelError(f"speedup table {path}: default class {default_class!r} is not among its classes "
                                    f"({', '.join(self.classes)})")
        self.path = path
        self.class_field = class_field
        self.default_class = default_class
        self.class_rule = None if class_rule is None else self._check_rule(class_rule)

    def _check_rule(self, rule: Any) -> dict[str, Any]:
        """The rule, checked (see the class docstring). Raises SpeedupModelError."""
        keys = ("field", "threshold", "below", "above")
        if not isinstance(rule, Mapping) or set(rule) != set(keys):
            raise SpeedupModelError(f"speedup option class_rule: expected an object with exactly the keys "
                                    f"{', '.join(keys)}, got {rule!r}")
        threshold = rule["threshold"]
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
            raise SpeedupModelError(f"speedup option class_rule: threshold {threshold!r} is not a finite number")
        for key in ("below", "above"):
            if str(rule[key]) not in self.classes:
                raise SpeedupModelError(f"speedup option class_rule: {key} = {rule[key]!r} is not a class of the "
                                        f"speedup table {self.path} ({', '.join(self.classes)})")
        return {"field": str(rule["field"]), "threshold": float(threshold), "below": str(rule["below"]),
                "above": str(rule["above"])}

    def job_class(self, job: Mapping[str, Any]) -> str:
        """The class of ``job``: by the rule when there is one, else its property. Raises SpeedupModelError: no
        class, one the table does not know, or a rule's field that the job lacks or that is not a number."""
        rule = self.class_rule
        if rule is not None:
            value = job.get(rule["field"])
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SpeedupModelError(f"job {job.get('id')!r}: field {rule['field']!r} = {value!r} is not a number "
                                        "(speedup option class_rule)")
            return rule["below"] if value < rule["threshold"] else rule["above"]
        value = job.get(self.class_field, self.default_class)
        if value is None:
            raise SpeedupModelError(f"job {job.get('id')!r} has no property {self.class_field!r} and the speedup "
                                    f"table {self.path} has no default class (speedup option default_class)")
        if str(value) not in self.classes:
            raise SpeedupModelError(f"job {job.get('id')!r}: class {value!r} ({self.class_field}) is not in the "
                                    f"speedup table {self.path} ({', '.join(self.classes)})")
        return str(value)

    def check_job(self, job: Mapping[str, Any]) -> None:
        """Raise SpeedupModelError when ``job`` has no class the table knows."""
        self.job_class(job)

    def kind(self, job: Mapping[str, Any]) -> str:
        """The job's class (see :func:`kind_of`)."""
        return self.job_class(job)

    def speedup(self, job: Mapping[str, Any], neighbour: Mapping[str, Any]) -> float:
        """The table's speedup for (class of ``job``, class of ``neighbour``)."""
        return self.speedups[(self.job_class(job), self.job_class(neighbour))]


class RandomSpeedup:
    """A seeded random speedup per ordered pair of jobs, uniform in ``[low, high]``: the same pair gets the same
    value whatever the order of the calls (it is drawn from the seed and the two job ids).

    Raises:
        SpeedupModelError: ``seed`` not an integer >= 0, ``low`` or ``high`` not a finite number, ``low`` not > 0
            or ``high`` below ``low``.
    """

    def __init__(self, seed: int = 0, low: float = 0.5, high: float = 1.5) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise SpeedupModelError(f"speedup model 'random': option seed: expected an integer >= 0, got {seed!r}")
        for key, value in (("low", low), ("high", high)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SpeedupModelError(f"speedup model 'random': option {key}: expected a finite number, "
                                        f"got {value!r}")
        if not (float(low) > 0 and float(high) >= float(low)):
            raise SpeedupModelError(f"random speedups need 0 < low <= high, got low={low}, high={high}")
        self.seed, self.low, self.high = seed, float(low), float(high)
        self._drawn: dict[tuple[str, str], float] = {}

    def speedup(self, job: Mapping[str, Any], neighbour: Mapping[str, Any]) -> float:
        """The pair's draw (kept: a pair meets many times)."""
        import numpy as np

        key = (str(job.get("id")), str(neighbour.get("id")))
        value = self._drawn.get(key)
        if value is None:
            words = [self.seed, zlib.crc32(key[0].encode()), zlib.crc32(key[1].encode())]
            value = self._drawn[key] = float(np.random.default_rng(words).uniform(self.low, self.high))
        return value

    def check_job(self, job: Mapping[str, Any]) -> None:
        """Every job can be rated."""


#: The shipped speedup models, by name.
SPEEDUP_MODELS: dict[str, type] = {"none": NoSpeedup, "table": TableSpeedup, "random": RandomSpeedup}


def make_speedup_model(name: str, options: Mapping[str, Any] | None = None) -> SpeedupModel:
    """The speedup model called ``name`` (:data:`SPEEDUP_MODELS`) with ``options`` (its constructor's keyword
    arguments: ``table``, ``class_field``, ``default_class``, ``class_rule`` for ``table``; ``seed``, ``low``, ``high`` for
    ``random``).

    Raises:
        SpeedupModelError: an unknown name or option, a required option missing (``table``'s ``table``), or
            what the model refuses.
    """
    kind = SPEEDUP_MODELS.get(name)
    if kind is None:
        raise SpeedupModelError(f"unknown speedup model {name!r} (known: {', '.join(SPEEDUP_MODELS)})")
    options = dict(options or {})
    parameters = {p: v for p, v in inspect.signature(kind).parameters.items() if p != "self"}
    unknown = sorted(set(options) - set(parameters))
    if unknown:
        raise SpeedupModelError(f"speedup model {name!r}: unknown option(s) {', '.join(unknown)} (known: "
                                f"{', '.join(parameters) or 'none'})")
    required = [p for p, v in parameters.items() if v.default is inspect.Parameter.empty and p not in options]
    if required:
        example = ", ".join(f'"{p}": ...' for p in required)
        raise SpeedupModelError(f"speedup model {name!r} needs the option(s) {', '.join(required)}: give them with "
                                f"--speedup-options '{{{example}}}' (or the scheduler option speedup_options)")
    try:
        return kind(**options)
    except TypeError as err:  # an option of the wrong type deep inside (e.g. a number where a path goes)
        raise SpeedupModelError(f"speedup model {name!r}: an option has the wrong type ({err})") from None
