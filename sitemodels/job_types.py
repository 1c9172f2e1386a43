"""Job types: a rule that puts each job of an SWF log in one type (Caspart et al. 2019, Sect. 4: job types).

A site model describes each job type by its own distributions. A rule (option ``--job-types``) is one of:

- ``all``: one type, ``all``;
- a field of the log, ``group``, ``user``, ``queue``, ``partition`` or ``executable`` (SWF fields 13, 12, 15, 16,
  14): one type per value seen, named ``FIELD=VALUE`` (for the LCG log, groups are virtual organisations and
  partitions are sites);
- thresholds on a numeric field, ``FIELD:T1,T2,...`` with increasing thresholds, e.g.
  ``processors:1,8,64``: types ``processors<=1``, ``1<processors<=8``, ..., ``processors>64`` (a type no job
  falls in is left out), and ``FIELD unknown`` for the jobs whose value is not recorded (-1). Numeric fields:
  ``processors`` (allocated, else requested), ``run_time``, ``requested_time``, ``average_cpu_time``;
- a TOML file (a path ending in ``.toml``) mapping values of one field to named types::

      field = "group"          # one of the fields above
      rest = "other"           # optional: the type of every value not listed (else such jobs are refused)
      [[types]]
      name = "atlas"
      values = [3, 4]

A type's values round-trip for field and mapping rules: :meth:`JobTypeRule.swf_value` gives, for a generated job
of a type, the value to write in the rule's field so that the rule puts it back in the same type. A thresholds
rule's types need not: a drawn job's processors stay within its type's interval (they are drawn from the type's
values), but its run time is the sum of its drawn CPU and I/O times and may leave the interval. This module imports
numpy; mapping files are read by :func:`batreplay.toml_file.read_toml_file`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from batreplay.sitemodels.choices import FIELD_COLUMNS
from batreplay.toml_file import read_toml_file

#: Numeric fields thresholds may be given on -> the SWF column (``processors`` is computed: see module docstring).
NUMERIC_COLUMNS: dict[str, str] = {"processors": "processors", "run_time": "run_time",
                                   "requested_time": "requested_time", "average_cpu_time": "average_cpu_time"}


@dataclass(frozen=True)
class JobTypeRule:
    """A job type rule (module docstring).

    Attributes:
        text: the rule as given (``all``, a field, ``FIELD:T1,...`` or the TOML file's path).
        kind: ``"all"``, ``"field"``, ``"thresholds"`` or ``"mapping"``.
        field: the rule's field name (``""`` for ``all``).
        thresholds: the thresholds of a ``thresholds`` rule, increasing.
        mapping: type name -> values of a ``mapping`` rule, in file order.
        rest: the type of unlisted values of a ``mapping`` rule, or None.
    """

    text: str
    kind: str
    field: str = ""
    thresholds: tuple[float, ...] = ()
    mapping: tuple[tuple[str, tuple[int, ...]], ...] = ()
    rest: str | None = None

    @classmethod
    def parse(cls, text: str, option: str = "--job-types") -> JobTypeRule:
        """The rule written ``text``.

        Raises:
            ValueError: an unknown field, thresholds that are not increasing numbers, a TOML file that cannot be
                read (named with its field), all naming ``option``.
        """
        rule = text.strip()
        if rule == "all":
            return cls(rule, "all")
        if rule in FIELD_COLUMNS:
            return cls(rule, "field", rule)
        if rule.endswith(".toml"):
            return _read_mapping(Path(rule))
        name, sep, numbers = rule.partition(":")
        if not sep or name not in NUMERIC_COLUMNS:
            raise ValueError(f"{option} {text!r}: expected 'all', one of {', '.join(FIELD_COLUMNS)}, a TOML file, or "
                             f"thresholds FIELD:T1,T2,... on one of {', '.join(NUMERIC_COLUMNS)}")
        try:
            limits = tuple(float(item) for item in numbers.split(","))
        except ValueError:
            raise ValueError(f"{option} {text!r}: thresholds must be numbers separated by commas") from None
        if not all(math.isfinite(t) for t in limits) or any(b <= a for a, b in zip(limits, limits[1:])):
            raise ValueError(f"{option} {text!r}: thresholds must be finite and increasing")
        return cls(rule, "thresholds", name, limits)

    def column(self) -> str | None:
        """The SWF column the rule reads, or None for ``all``."""
        if self.kind == "all":
            return None
        return NUMERIC_COLUMNS[self.field] if self.kind == "thresholds" else FIELD_COLUMNS[self.field]

    def assign(self, values: Any) -> tuple[np.ndarray, list[str]]:
        """Each job's type: ``(codes, names)``, codes of shape ``(n_jobs,)`` indexing ``names``.

        Args:
            values: the rule's column for each job (:meth:`column`), shape ``(n_jobs,)``; ignored for ``all``.

        Raises:
            ValueError: a ``mapping`` rule without ``rest`` and values it does not list (their count and the first
                ones named).
        """
        x = np.asarray(values)
        if self.kind == "all":
            return np.zeros(x.shape[0], dtype=np.int64), ["all"]
        if self.kind == "field":
            seen, codes = np.unique(x.astype(np.int64), return_inverse=True)
            return codes.reshape(-1), [f"{self.field}={v}" for v in seen.tolist()]
        if self.kind == "thresholds":
            return self._by_thresholds(x.astype(np.float64))
        return self._by_mapping(x.astype(np.int64))

    def _by_thresholds(self, x: np.ndarray) -> tuple[np.ndarray, list[str]]:
        bins = np.searchsorted(np.asarray(self.thresholds), x, side="left")  # x <= t[0] -> 0, ...
        bins[x < 0] = len(self.thresholds) + 1  # -1: not recorded (SWF)
        used, codes = np.unique(bins, return_inverse=True)
        return codes.reshape(-1), [self._interval_name(int(k)) for k in used]

    def _interval_name(self, k: int) -> str:
        t = [f"{v:g}" for v in self.thresholds]
        if k == len(t) + 1:
            return f"{self.field} unknown"
        if k == 0:
            return f"{self.field}<={t[0]}"
        return f"{self.field}>{t[-1]}" if k == len(t) else f"{t[k - 1]}<{self.field}<={t[k]}"

    def _by_mapping(self, x: np.ndarray) -> tuple[np.ndarray, list[str]]:
        names = [name for name, _ in self.mapping] + ([self.rest] if self.rest is not None else [])
        codes = np.full(x.shape[0], -1, dtype=np.int64)
        for k, (_, listed) in enumerate(self.mapping):
            codes[np.isin(x, listed)] = k
        unlisted = codes < 0
        if unlisted.any() and self.rest is None:
            first = ", ".join(str(v) for v in np.unique(x[unlisted])[:5].tolist())
            raise ValueError(f"{self.text}: {int(unlisted.sum())} jobs have a {self.field} the file does not list "
                             f"(values {first}...): list them, or give rest = \"NAME\"")
        codes[unlisted] = len(self.mapping)
        used, codes = np.unique(codes, return_inverse=True)
        return codes.reshape(-1), [names[int(k)] for k in used]

    def swf_value(self, name: str) -> int:
        """The value of the rule's field to write for a generated job of type ``name`` so that the rule puts it back
        in that type: a field rule's value; a mapping rule's first value listed for it (-1, unknown, for its
        ``rest`` type). Thresholds rules need none: a type's distributions draw within its interval.

        Raises:
            ValueError: an ``all`` or thresholds rule, or a name that is not one of the rule's types.
        """
        value = name.removeprefix(f"{self.field}=")
        if self.kind == "field" and value != name and value.lstrip("-").isdigit():
            return int(value)
        if self.kind == "mapping" and (name == self.rest or name in dict(self.mapping)):
            return dict(self.mapping)[name][0] if name != self.rest else -1
        raise ValueError(f"job type {name!r}: the rule {self.text!r} writes no field value for it")

    def to_json(self) -> dict:
        """The rule in the model file: ``{"rule": text, "kind", "field"}`` plus thresholds, or the mapping."""
        document: dict[str, Any] = {"rule": self.text, "kind": self.kind, "field": self.field}
        if self.kind == "thresholds":
            document["thresholds"] = list(self.thresholds)
        if self.kind == "mapping":
            document["mapping"] = {name: list(values) for name, values in self.mapping}
            document["rest"] = self.rest
        return document

    @classmethod
    def from_json(cls, document: Any) -> JobTypeRule:
        """The rule of a model file's ``job_types`` object (:meth:`to_json`).

        Raises:
            ValueError: a wrong field (named).
        """
        if not isinstance(document, dict) or not isinstance(document.get("rule"), str):
            raise ValueError("expected an object with the rule's text ('rule')")
        kind, field = document.get("kind"), document.get("field")
        if kind in ("all", "field", "thresholds") and document["rule"].strip().endswith(".toml"):
            raise ValueError(f"kind {kind!r}: the rule {document['rule']!r} names a file")
        if kind in ("all", "field", "thresholds"):
            rule = cls.parse(document["rule"], option="rule")
            if (rule.kind, rule.field, list(rule.thresholds)) != (kind, field, document.get("thresholds", [])):
                raise ValueError(f"kind, field or thresholds do not match the rule {document['rule']!r}")
            return rule
        if kind != "mapping" or field not in FIELD_COLUMNS or not isinstance(document.get("mapping"), dict):
            raise ValueError(f"kind {kind!r}: expected all, field, thresholds or mapping (with field and mapping)")
        rest = document.get("rest")
        mapping = tuple(_mapping_type({"name": name, "values": values}, f"mapping.{name}")
                        for name, values in document["mapping"].items())
        if not mapping or (rest is not None and not isinstance(rest, str)):
            raise ValueError("mapping: expected at least one type, and rest null or a type name")
        _check_mapping(mapping, rest, "mapping")
        return cls(document["rule"], "mapping", field, mapping=mapping, rest=rest)


def _read_mapping(path: Path) -> JobTypeRule:
    """A ``mapping`` rule from its TOML file (module docstring); errors name the file and the key."""
    document = read_toml_file(path, "job types", ValueError)
    unknown = set(document) - {"field", "rest", "types"}
    if unknown:
        raise ValueError(f"{path}: unknown key {sorted(unknown)[0]!r} (expected field, rest, [[types]])")
    field = document.get("field")
    if field not in FIELD_COLUMNS:
        raise ValueError(f"{path}: field: expected one of {', '.join(FIELD_COLUMNS)}, got {field!r}")
    rest = document.get("rest")
    if rest is not None and (not isinstance(rest, str) or not rest.strip()):
        raise ValueError(f"{path}: rest: expected a type name")
    tables = document.get("types")
    if not isinstance(tables, list) or not tables:
        raise ValueError(f"{path}: expected at least one [[types]] table")
    mapping = [_mapping_type(table, f"{path}: types[{k}]") for k, table in enumerate(tables)]
    _check_mapping(mapping, rest, str(path))
    return JobTypeRule(str(path), "mapping", field, mapping=tuple(mapping), rest=rest)


def _check_mapping(mapping, rest: str | None, where: str) -> None:
    """Type names and listed values each once; no listed -1 beside a ``rest`` type (whose drawn jobs get -1)."""
    names = [name for name, _ in mapping] + ([rest] if rest else [])
    values = [v for _, listed in mapping for v in listed]
    if len(set(names)) != len(names) or len(set(values)) != len(values):
        raise ValueError(f"{where}: type names and listed values must each appear once")
    if rest and -1 in values:
        raise ValueError(f"{where}: -1 (unknown) is listed, and the rest type's drawn jobs are written with -1: list "
                         "-1 or give rest, not both")


def _mapping_type(table: Any, where: str) -> tuple[str, tuple[int, ...]]:
    if not isinstance(table, dict) or set(table) != {"name", "values"}:
        raise ValueError(f"{where}: expected keys name and values")
    name, values = table["name"], table["values"]
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where}.name: expected a type name")
    if not isinstance(values, list) or not values or not all(type(v) is int for v in values):
        raise ValueError(f"{where}.values: expected a list of integers (values of the field)")
    return name, tuple(values)
