"""The site model file (JSON, versioned): what ``batreplay model fit`` writes and every other model command reads.

Field by field, with units, in ``docs/site-models.md``. In short::

    {"format": "batreplay-site-model", "version": 1,
     "source": {...},          # the log, its checksum, the jobs selected, dropped (per reason), the split
     "reference": {...},       # node_speed (flop/s), reference_io_rate (bytes/s), io_share
     "job_types": {...},       # the rule (batreplay.sitemodels.job_types)
     "arrivals": {...},        # batreplay.sitemodels.arrivals
     "types": [{"name", "share", "jobs", "job_slots", "cpu_demand", "io_demand", "cpu_io_correlation",
                "demand_rounds", "requested_time_ratio"}, ...]}

Reading checks every field and names the first wrong one as ``FILE: types[2].cpu_demand.edges: ...``; a file of
another version is refused with both versions named. This module imports numpy and the sitemodels modules below it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from batreplay.atomic import write_json_atomically
from batreplay.sitemodels.arrivals import ArrivalModel
from batreplay.sitemodels.distributions import DistributionError, EmpiricalDistribution, finite_number
from batreplay.sitemodels.job_types import JobTypeRule

#: Range of each drawn quantity: job slots up to Batsim's 32-bit resource counts, flop and bytes up to what Batsim's
#: JSON reader takes exactly (2**64 flop, 2**53 bytes), rounds as ``--demand-rounds``, ratios finite and > 0.
_RANGES = {"job_slots": (1, 2**31 - 1), "cpu_demand": (0, 2.0**64), "io_demand": (0, 2.0**53),
           "demand_rounds": (1, 1_000_000), "requested_time_ratio": (1e-9, 1e9)}
FORMAT_NAME = "batreplay-site-model"
FORMAT_VERSION = 1
_DISTRIBUTIONS = ("job_slots", "cpu_demand", "io_demand", "demand_rounds")


class ModelFileError(ValueError):
    """A model file that cannot be read; the message names the file and the field."""


@dataclass(frozen=True)
class JobTypeModel:
    """One job type of a site model (Caspart et al. 2019, Sect. 4-5: a job type's parameters).

    Attributes:
        name: the type's name (from the rule, :mod:`batreplay.sitemodels.job_types`).
        share: probability that a new job is of this type (its share of the calibration jobs).
        jobs: calibration jobs of the type.
        job_slots: job slots (SWF processors; Batsim resources ``res``) per job.
        cpu_demand: flop per job slot (CPU seconds x the recorded node speed).
        io_demand: bytes per job slot read from storage ((run time - CPU seconds) x the reference I/O rate).
        cpu_io_correlation: Spearman rank correlation of CPU and I/O demand over the type's jobs (0 when either is
            constant); drawing keeps it (:mod:`batreplay.sitemodels.sampling`).
        demand_rounds: rounds of reading and computing per job.
        requested_time_share: share of the type's jobs that record a requested time (the others are drawn
            without one: -1 in SWF, no walltime in Batsim).
        requested_time_ratio: requested time / run time of the jobs that record one, or None when none does.
    """

    name: str
    share: float
    jobs: int
    job_slots: EmpiricalDistribution
    cpu_demand: EmpiricalDistribution
    io_demand: EmpiricalDistribution
    cpu_io_correlation: float
    demand_rounds: EmpiricalDistribution
    requested_time_share: float
    requested_time_ratio: EmpiricalDistribution | None

    def to_json(self) -> dict:
        document: dict[str, Any] = {"name": self.name, "share": self.share, "jobs": self.jobs,
                                    "cpu_io_correlation": self.cpu_io_correlation,
                                    "requested_time_share": self.requested_time_share}
        for key in _DISTRIBUTIONS:
            document[key] = getattr(self, key).to_json()
        ratio = self.requested_time_ratio
        document["requested_time_ratio"] = None if ratio is None else ratio.to_json()
        return document

    @classmethod
    def from_json(cls, document: Any, where: str) -> JobTypeModel:
        keys = {"name", "share", "jobs", "cpu_io_correlation", "requested_time_share", "requested_time_ratio",
                *_DISTRIBUTIONS}
        _check_keys(document, keys, where)
        name, share, jobs, rho, known = (document[k] for k in ("name", "share", "jobs", "cpu_io_correlation",
                                                                "requested_time_share"))
        if not isinstance(name, str) or not name:
            raise DistributionError(f"{where}.name: expected a type name")
        for key, value, low, high, interval in (("share", share, 0, 1, "(0, 1]"),
                                                ("cpu_io_correlation", rho, -1, 1, "[-1, 1]"),
                                                ("requested_time_share", known, 0, 1, "[0, 1]")):
            if not finite_number(value) or not low <= value <= high or (key == "share" and value == 0):
                raise DistributionError(f"{where}.{key}: expected a number in {interval}, got {value!r}")
        if type(jobs) is not int or jobs < 1:
            raise DistributionError(f"{where}.jobs: expected an integer >= 1, got {jobs!r}")
        parts = {k: EmpiricalDistribution.from_json(document[k], f"{where}.{k}") for k in _DISTRIBUTIONS}
        ratio = document["requested_time_ratio"]
        ratio = None if ratio is None else EmpiricalDistribution.from_json(ratio, f"{where}.requested_time_ratio")
        for key, (low, high) in _RANGES.items():
            value = ratio if key == "requested_time_ratio" else parts[key]
            if value is not None and not (low <= value.support()[0] and value.support()[1] <= high):
                raise DistributionError(f"{where}.{key}: values must be from {low:g} to {high:g}")
        for key in ("job_slots", "demand_rounds"):
            if not parts[key].integer or any(v != round(v) for v in parts[key].values + parts[key].edges):
                raise DistributionError(f"{where}.{key}: a count: integer must be true and values whole numbers")
        if (ratio is None) != (known == 0):
            raise DistributionError(f"{where}: requested_time_ratio is null exactly when requested_time_share is 0")
        return cls(name, float(share), jobs, **parts, cpu_io_correlation=float(rho), requested_time_share=float(known),
                   requested_time_ratio=ratio)


@dataclass(frozen=True)
class SiteModel:
    """A site model (module docstring). ``reference`` holds ``node_speed`` (flop/s of a recorded node),
    ``reference_io_rate`` (bytes/s a recorded node read at) and ``io_share`` (or None); ``source``
    describes the log and the split (``docs/site-models.md``)."""

    source: dict
    reference: dict
    rule: JobTypeRule
    arrivals: ArrivalModel
    types: tuple[JobTypeModel, ...]

    @property
    def reading_types(self) -> list[str]:
        """The names of the job types whose jobs read from storage (an I/O demand above 0 bytes), in order."""
        return [t.name for t in self.types if t.io_demand.support()[1] > 0]

    def to_json(self) -> dict:
        return {"format": FORMAT_NAME, "version": FORMAT_VERSION, "source": self.source, "reference": self.reference,
                "job_types": self.rule.to_json(), "arrivals": self.arrivals.to_json(),
                "types": [t.to_json() for t in self.types]}


def write_model(model: SiteModel, path: str | Path) -> Path:
    """Write ``model`` to ``path`` (JSON, atomically: a reader never sees half a file)."""
    return write_json_atomically(path, model.to_json(), indent=1)


def read_model(path: str | Path) -> SiteModel:
    """The site model of the file ``path``.

    Raises:
        ModelFileError: not JSON (line and column named), another format or version, or a wrong field (named).
        OSError: the file cannot be read.
    """
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ModelFileError(f"{path}: line {err.lineno}, column {err.colno}: not JSON ({err.msg})") from None
    except UnicodeDecodeError:
        raise ModelFileError(f"{path}: not a UTF-8 text file") from None
    try:
        return _model(document, str(path))
    except DistributionError as err:
        raise ModelFileError(str(err)) from None


def is_site_model_file(path: str | Path) -> bool:
    """True when ``path`` is a JSON object whose ``format`` is :data:`FORMAT_NAME` (a site model, perhaps of another
    version or with a wrong field: :func:`read_model` says which); False for anything else, unreadable included."""
    try:
        document = json.loads(Path(path).read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("format") == FORMAT_NAME


def _model(document: Any, where: str) -> SiteModel:
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise DistributionError(f"{where}: not a batreplay site model (its 'format' is not {FORMAT_NAME!r})")
    if document.get("version") != FORMAT_VERSION:
        raise DistributionError(f"{where}: version {document.get('version')!r}; this batreplay reads version "
                                f"{FORMAT_VERSION}")
    _check_keys(document, {"format", "version", "source", "reference", "job_types", "arrivals", "types"}, where)
    for key in ("source", "reference"):
        if not isinstance(document[key], dict):
            raise DistributionError(f"{where}: {key}: expected an object")
    reference = _reference(document["reference"], f"{where}: reference")
    try:
        rule = JobTypeRule.from_json(document["job_types"])
    except ValueError as err:
        raise DistributionError(f"{where}: job_types: {err}") from None
    arrivals = ArrivalModel.from_json(document["arrivals"], f"{where}: arrivals")
    types = document["types"]
    if not isinstance(types, list) or not types:
        raise DistributionError(f"{where}: types: expected a list of at least one job type")
    parsed = tuple(JobTypeModel.from_json(t, f"{where}: types[{k}]") for k, t in enumerate(types))
    if abs(sum(t.share for t in parsed) - 1) > 1e-9 or len({t.name for t in parsed}) != len(parsed):
        raise DistributionError(f"{where}: types: shares must sum to 1 and names be distinct")
    if rule.kind in ("field", "mapping"):  # every type must be one the rule can write back
        for k, job_type in enumerate(parsed):
            try:
                rule.swf_value(job_type.name)
            except ValueError as err:
                raise DistributionError(f"{where}: types[{k}].name: {err}") from None
    _check_source(document["source"], f"{where}: source")
    return SiteModel(document["source"], reference, rule, arrivals, parsed)


def _check_source(source: dict, where: str) -> None:
    """The fields of ``source`` the commands read: the split's counts, the log's checksum, its MaxProcs."""
    counts = [source.get(key) for key in ("kept", "calibration_jobs", "test_jobs")]
    if not all(type(c) is int and c >= 0 for c in counts) or counts[0] < 1 or counts[1] + counts[2] != counts[0]:
        raise DistributionError(f"{where}: kept, calibration_jobs and test_jobs: expected whole numbers, the kept jobs "
                                f">= 1 and the sum of the two others, got {counts}")
    digest = source.get("sha256")
    if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise DistributionError(f"{where}.sha256: expected the log's SHA-256 (64 hexadecimal digits)")
    max_procs = source.get("max_procs")
    if max_procs is not None and (type(max_procs) is not int or max_procs < 1):
        raise DistributionError(f"{where}.max_procs: expected null or an integer >= 1, got {max_procs!r}")


def _reference(document: dict, where: str) -> dict:
    _check_keys(document, {"node_speed", "reference_io_rate", "io_share"}, where)
    for key in ("node_speed", "reference_io_rate"):
        value = document[key]
        if not finite_number(value) or not 0 < value < math.inf:
            raise DistributionError(f"{where}.{key}: expected a number > 0, got {value!r}")
    share = document["io_share"]
    if share is not None and (not finite_number(share) or not 0 <= share < 1):
        raise DistributionError(f"{where}.io_share: expected null or a number in [0, 1), got {share!r}")
    return dict(document)


def _check_keys(document: Any, keys: set[str], where: str) -> None:
    if not isinstance(document, dict):
        raise DistributionError(f"{where}: expected an object")
    if set(document) != keys:
        missing, unknown = sorted(keys - set(document)), sorted(set(document) - keys)
        raise DistributionError(f"{where}: " + "; ".join(
            part for part in (f"missing {missing}" if missing else "", f"unknown {unknown}" if unknown else "")
            if part))
