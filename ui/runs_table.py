"""What the Runs page shows of each run: its cells in words, its metrics in the report's units, and which parameters
differ between runs.

Pure functions of what :mod:`batreplay.ui.run_index` reads from the files (a run's flat description, ``run.json``'s
``spec``; a campaign instance's ``instance.json``; ``metrics.json``), so that they are tested without a server:

- :func:`describe`: the cells of a run's choices, in a few words each: the label the user gave it, the workload
  file, the platform with its variant (``kth-sp2 (speed-x2)``), the scheduler with the options that differ from its
  declared defaults (``easy (node_selection=best-fit)``), the user model (``feedback a60``, ``closed, model_seed
  3``), the engine, the other options not at their defaults, the seeds;
- :func:`jobs_text`: how many jobs, against the ``max_jobs`` asked for (``2,000 of 2,000 max``, ``28,467 (whole
  log)``);
- :func:`runs_table`: the DataTable's columns and rows: each time metric in the unit its largest value calls for
  (seconds below an hour, hours below two days, else days; the rule of the run page's metrics table and of
  ``batreplay analyze``'s report, :meth:`~batreplay.analysis.metric.Metric.display_unit`), named in its header
  (``makespan (days)``), the numbers converted so that the column sorts by value; the run cell is the label (or
  the run id) linking to ``/runs/<run id>`` for a finished run;
- :func:`differing_parameters`: the parameters (flat keys of the descriptions, a JSON object's keys joined by dots:
  ``scheduler_options.node_selection``) whose values differ between the runs ticked, with each run's value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from batreplay.options import RUN_CONDUCT
from batreplay.platforms.generate import SCALED_VARIANTS
from batreplay.ui.launcher import DONE

#: The Runs table's columns, in order: (key, title). A metric's title is its heading with the unit its values are
#: shown in (:func:`runs_table`).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("label", "run"),
    ("workload", "workload"),
    ("jobs", "jobs"),
    ("platform", "platform"),
    ("scheduler", "scheduler"),
    ("user_model", "user model"),
    ("engine", "engine"),
    ("status", "status"),
    ("makespan", "makespan"),
    ("mean_waiting_time", "mean waiting time"),
    ("mean_bounded_slowdown", "mean bounded slowdown"),
    ("utilisation", "utilisation"),
    ("run_id", "run id"),
    ("campaign", "campaign"),
    ("seeds", "seeds"),
    ("options", "other options"),
    ("wall_seconds", "wall time (s)"),
    ("finished", "finished (UTC)"),
    ("error", "error"),
)
#: The columns hidden at first: the page's column chooser (:func:`hidden_columns`) shows them.
HIDDEN: tuple[str, ...] = ("run_id", "campaign", "seeds", "options", "wall_seconds", "finished", "error")
#: The metrics of the table (keys of ``metrics.json`` and of :data:`batreplay.analysis.metric_registry.METRICS`).
METRIC_COLUMNS: tuple[str, ...] = ("makespan", "mean_waiting_time", "mean_bounded_slowdown", "utilisation")
#: The value of the campaign filter that keeps the runs of no campaign (a campaign's name never holds a colon).
NO_CAMPAIGN = ":none"
#: Keys of a run description that other cells show, or that say nothing of what is simulated (where the run
#: directory goes, whether it replaced one, a wall-clock limit, the label); a campaign instance's parameters that
#: its platform (``nodes_factor``, ``speed_factor``) and seeds cells show.
_SHOWN_ELSEWHERE = frozenset(RUN_CONDUCT) | {"workload", "platform", "scheduler", "scheduler_options", "replay",
                                             "sessions", "engine", "max_jobs", "seed", "model_seed", "overhead_seed",
                                             "nodes_factor", "speed_factor"}
#: Keys of a run description left out of :func:`differing_parameters`: they differ between any two runs, or say
#: nothing of what is simulated.
NOT_COMPARED = frozenset(RUN_CONDUCT)
#: A platform the New-run form generated under ``<runs dir>/platforms/``: ``<stem>-<12 hex digits>.xml``
#: (:func:`batreplay.ui.run_form.build_run`), the stem ending with the variant's name for a scaled platform.
_GENERATED_PLATFORM = re.compile(r"(?P<stem>.+)-[0-9a-f]{12}")
#: A campaign's generated variant, ``<output root>/platforms/<log>__<variant>.xml``
#: (:func:`batreplay.campaign.platforms.platform_for`).
_CAMPAIGN_PLATFORM = re.compile(r"(?P<log>.+?)__(?P<variant>[^_].*)")
#: ASCII punctuation: a backslash before each makes it plain text in Markdown (CommonMark's escapes).
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def value_text(value: Any) -> str:
    """A parameter's value in a few characters: JSON for an object or a list (compact), ``true``/``false``, a number
    as Python's shortest ``%g``-like repr (``2.0`` -> ``2``), a text as it is, ``-`` for None."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.12g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _name(path: Any) -> str:
    """The last part of a path given as text (a name stays as it is)."""
    return Path(str(path)).name if path not in (None, "") else ""


def platform_text(platform: Any, variant: str | None = None) -> str:
    """The platform in a few words: a shipped platform's name (``kth-sp2``), a platform file's name, a platform the
    form or a campaign generated by the platform it scales and the variant (``kth-sp2 (speed-x2)``), a campaign's
    generated cluster by its node count (``{"nodes": 64, ...}`` -> ``64 nodes``) or node types file.

    Args:
        platform: ``spec["platform"]`` (a name or a path, as text), or a campaign instance's ``platform`` parameter
            (that, or a ``{"nodes", "speed"}`` or ``{"node_types"}`` object).
        variant: the variant a campaign instance's labels name (``speed-x2``; ``recorded`` or None: none), which
            wins over what the file's name says.
    """
    if isinstance(platform, Mapping):
        base = (f"{_name(platform['node_types'])} (node types)" if "node_types" in platform
                else f"{value_text(platform.get('nodes'))} nodes")
    else:
        path = Path(str(platform or ""))
        base, found = path.name, None
        if path.parent.name == "platforms" and path.suffix == ".xml":
            generated = _GENERATED_PLATFORM.fullmatch(path.stem)
            campaign = _CAMPAIGN_PLATFORM.fullmatch(path.stem)
            if generated:
                base = generated["stem"]
                found = next((name for name in SCALED_VARIANTS if base.endswith("-" + name)), None)
                base = base.removesuffix("-" + found) if found else base
                again = _GENERATED_PLATFORM.fullmatch(base)  # (node types, then scaled: two digests)
                base = again["stem"] if again else base
            elif campaign:
                base, found = campaign["log"], campaign["variant"]
        variant = variant or found
    return base if variant in (None, "", "recorded") else f"{base} ({variant})"


def scheduler_text(name: Any, options: Any) -> str:
    """The scheduler's name (a scheduler file's name) and, in parentheses, its options that differ from those the
    registered scheduler declares (every option of a scheduler file): ``easy``, ``easy (node_selection=best-fit)``."""
    from batreplay.schedulers.registry import SCHEDULERS

    declared = getattr(SCHEDULERS.get(str(name)), "OPTIONS", {})
    options = options if isinstance(options, Mapping) else {}
    changed = [f"{key}={value_text(value)}" for key, value in options.items()
               if key not in declared or declared[key][0] != value]
    return _name(name) + (f" ({', '.join(changed)})" if changed else "")


def user_model_text(spec: Mapping[str, Any]) -> str:
    """The user model, its sessions (a folder of session graphs by its name) and its model seed when set:
    ``rigid``, ``feedback a60``, ``closed, model_seed 3``."""
    text = str(spec.get("replay") or "rigid")
    if spec.get("sessions"):
        text += f" {_name(spec['sessions'])}"
    if spec.get("model_seed") is not None:
        text += f", model_seed {value_text(spec['model_seed'])}"
    return text


def options_text(spec: Mapping[str, Any]) -> str:
    """The run options that no other cell shows and that are not at their declared defaults (an undeclared key,
    from an older or newer ``run.json``, when it is set), as ``name=value`` pairs: ``walltime_factor=3,
    compute_sharing=true``; empty when there is none."""
    from batreplay.run.spec import run_option

    pairs = []
    for key, value in spec.items():
        if key in _SHOWN_ELSEWHERE:
            continue
        try:
            default = run_option(key).default
        except KeyError:
            default = None
        if value != default and value not in (None, False, {}):
            pairs.append(f"{key}={value_text(value)}")
    return ", ".join(pairs)


def jobs_text(nb_jobs: Any, max_jobs: Any, *, drawn: bool = False, whole: str = "whole log") -> str:
    """The jobs of a run against what was asked: ``2,000 of 2,000 max``, ``28,467 (whole log)``, ``3,000 drawn``
    (a site model's jobs, which ``max_jobs`` does not bound); without a count (a failed run): ``2,000 max`` or
    ``whole log``.

    Args:
        nb_jobs: the jobs of the run's metrics (``metrics.json``'s ``nb_jobs``: those submitted after the warm-up,
            when there is one), or None.
        max_jobs: the run's ``max_jobs`` (None: the whole workload).
        whole: what the whole workload is called (``whole log``, ``whole workload`` for a Batsim JSON workload).
    """
    count = f"{nb_jobs:,}" if isinstance(nb_jobs, int) and not isinstance(nb_jobs, bool) else None
    if drawn:
        return f"{count} drawn" if count else "drawn"
    if isinstance(max_jobs, int) and not isinstance(max_jobs, bool):
        return f"{count} of {max_jobs:,} max" if count else f"{max_jobs:,} max"
    return f"{count} ({whole})" if count else whole


def describe(spec: Mapping[str, Any], instance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The cells of a run's choices (the text columns of :data:`COLUMNS` but ``jobs``, ``status`` and ``error``),
    and ``max_jobs`` and ``drawn`` for :func:`jobs_text`.

    Args:
        spec: the run's flat description (``run.json``'s ``spec``, or a failure record's ``spec``), or a campaign
            instance's parameters (a failure record's ``params``); a value of another type than expected gives a
            cell of its text, never an error.
        instance: a campaign instance's ``instance.json`` (or failure record), whose ``params`` and ``labels`` name
            the platform as the campaign file does (``kth-sp2``, variant ``speed-x2``) and whose ``seed`` is the
            instance's; None for a run of the GUI or the command line.
    """
    from batreplay.replay.registry import REGISTRY as USER_MODELS

    params = instance.get("params") if isinstance(instance, Mapping) else None
    labels = instance.get("labels") if isinstance(instance, Mapping) else None
    params = params if isinstance(params, Mapping) else {}
    labels = labels if isinstance(labels, Mapping) else {}
    workload = str(spec.get("workload") or "")
    model = USER_MODELS.get(str(spec.get("replay") or "rigid"))
    seeds = {"seed": instance.get("seed", params.get("seed")) if instance else spec.get("seed"),
             "model_seed": spec.get("model_seed"), "overhead_seed": spec.get("overhead_seed")}
    label = spec.get("label")
    return {
        "label": label if isinstance(label, str) else None,
        "workload": _name(workload),
        "max_jobs": spec.get("max_jobs"),
        "drawn": model is not None and model.source == "site-model",
        "whole": "whole workload" if workload.lower().endswith(".json") else "whole log",
        "platform": platform_text(params.get("platform", spec.get("platform")), labels.get("platform_variant")),
        "scheduler": scheduler_text(spec.get("scheduler", ""), spec.get("scheduler_options")),
        "user_model": user_model_text(spec),
        "engine": str(spec.get("engine") or ""),
        "options": options_text(spec),
        "seeds": ", ".join(f"{key} {value_text(value)}" for key, value in seeds.items() if value is not None),
    }


def markdown_text(text: str) -> str:
    """``text`` as plain text in Markdown: each ASCII punctuation character escaped by a backslash, so that a label
    such as ``[x](javascript:...)`` or ``*EASY*`` shows as typed, never as a link or emphasis."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def run_href(run_id: str) -> str:
    """The address of a run's page: ``/runs/<run id>``, the id percent-encoded but its slashes (an instance's id is
    ``campaigns/<campaign>/<instance>``)."""
    return "/runs/" + quote(run_id, safe="/")


def shown_name(row: Mapping[str, Any]) -> str:
    """What names a run in the table: its label, else its id (an instance's own id without ``campaigns/<c>/``)."""
    label = row.get("label")
    if isinstance(label, str) and label:
        return label
    run_id = str(row.get("run_id", ""))
    return run_id.rsplit("/", 1)[-1] if row.get("campaign") else run_id


@dataclass(frozen=True)
class RunsTable:
    """The Runs page's DataTable: ``columns`` (DataTable column dicts), ``data`` (one dict per run, its ``id`` the run
    id), ``tooltips`` (DataTable ``tooltip_data``: a failed run's error on its status)."""

    columns: list[dict[str, Any]]
    data: list[dict[str, Any]]
    tooltips: list[dict[str, Any]]


def _metric_units(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Any, str]]:
    """Each metric column's :class:`~batreplay.analysis.metric.Metric` and the unit its values are shown in."""
    from batreplay.analysis.metric_registry import get_metric

    units = {}
    for key in METRIC_COLUMNS:
        metric = get_metric(key)
        values = [row[key] for row in rows if isinstance(row.get(key), (int, float))]
        units[key] = (metric, metric.display_unit(values))
    return units


def _specifier(metric, unit: str) -> str:
    """The d3 format of a metric's cells: its console format's decimals in its own unit (``{:.1f}``: ``,.1f``), two
    in a converted unit (as :meth:`~batreplay.analysis.metric.Metric.format`), thousands separated."""
    decimals = re.search(r"\.(\d+)f", metric.fmt)
    places = 2 if unit != metric.unit or decimals is None else int(decimals.group(1))
    return f",.{places}f"


def runs_table(rows: Sequence[Mapping[str, Any]]) -> RunsTable:
    """The Runs table of ``rows`` (:func:`batreplay.ui.run_index.list_runs`' rows): every column of :data:`COLUMNS`,
    each metric in the unit its largest value calls for, named in its title and converted (a column sorts by value);
    the ``label`` cell is :func:`shown_name` as Markdown plain text, a link to :func:`run_href` for a finished run;
    ``jobs`` is :func:`jobs_text`."""
    units = _metric_units(rows)
    columns = []
    for key, title in COLUMNS:
        column: dict[str, Any] = {"name": title, "id": key}
        if key == "label":
            column["presentation"] = "markdown"
        elif key in units:
            metric, unit = units[key]
            column.update(name=metric.heading(unit), type="numeric", format={"specifier": _specifier(metric, unit)})
        elif key == "wall_seconds":
            column.update(type="numeric", format={"specifier": ",.1f"})
        columns.append(column)
    data, tooltips = [], []
    for row in rows:
        shown = {key: row.get(key) for key, _title in COLUMNS}
        name = markdown_text(shown_name(row))
        shown["label"] = f"[{name}]({run_href(row['run_id'])})" if row.get("status") == DONE else name
        shown["jobs"] = row.get("jobs") or jobs_text(row.get("nb_jobs"), row.get("max_jobs"),
                                                     drawn=bool(row.get("drawn")), whole=row.get("whole", "whole log"))
        for key, (metric, unit) in units.items():
            value = row.get(key)
            shown[key] = value / metric.divisor(unit) if isinstance(value, (int, float)) else None
        shown["id"] = row["run_id"]  # (the row's identity for selection)
        data.append(shown)
        error = row.get("error")
        tooltips.append({"status": {"value": str(error), "type": "text"}} if error else {})
    return RunsTable(columns, data, tooltips)


def column_choices() -> list[dict[str, str]]:
    """The choices of the column chooser (Dash's ``{"label", "value"}``): every column of :data:`COLUMNS` but the
    run's (always shown), by its title without unit."""
    return [{"label": title, "value": key} for key, title in COLUMNS if key != "label"]


def hidden_columns(shown: Any) -> list[str]:
    """The DataTable's ``hidden_columns`` when the column chooser ticks ``shown`` (column keys; anything that is no
    list shows the default columns): every column but the run's that is not ticked."""
    if not isinstance(shown, list):
        return list(HIDDEN)
    return [key for key, _title in COLUMNS if key != "label" and key not in shown]


def campaign_choices(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The choices of the campaign filter (Dash's ``{"label", "value"}``): the runs of no campaign
    (:data:`NO_CAMPAIGN`), then each campaign that has a run in ``rows``, by name."""
    names = sorted({str(row["campaign"]) for row in rows if row.get("campaign")})
    return [{"label": "runs of no campaign", "value": NO_CAMPAIGN},
            *({"label": f"campaign {name}", "value": name} for name in names)]


def of_campaign(rows: Sequence[Mapping[str, Any]], chosen: Any) -> list[Mapping[str, Any]]:
    """The rows of the campaign ``chosen`` (a name), of no campaign (:data:`NO_CAMPAIGN`), or all of them (None,
    empty, or anything that is no text)."""
    if not isinstance(chosen, str) or not chosen:
        return list(rows)
    wanted = None if chosen == NO_CAMPAIGN else chosen
    return [row for row in rows if (row.get("campaign") or None) == wanted]


def flat_parameters(document: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A run description with each JSON object's keys brought up, joined by dots (``{"scheduler_options":
    {"node_selection": "best-fit"}}`` -> ``{"scheduler_options.node_selection": "best-fit"}``); an empty object
    gives no key (as a description without it)."""
    flat: dict[str, Any] = {}
    for key, value in document.items():
        if isinstance(value, Mapping):
            flat.update(flat_parameters(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def differing_parameters(parameters: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """The parameters whose values differ between runs, with each run's value as text (:func:`value_text`;
    ``(not set)`` where a run's description has no such key), sorted by name; parameters that are the same in
    every run, and :data:`NOT_COMPARED`, are left out.

    Args:
        parameters: one run description per run, in the order of the result's values (``run.json``'s ``spec``,
            :func:`batreplay.ui.run_index.run_parameters`); flattened here (:func:`flat_parameters`).
    """
    flat = [flat_parameters(document) for document in parameters]
    keys = sorted({key for document in flat for key in document} - NOT_COMPARED)
    missing = object()

    def canonical(value: Any) -> str | None:
        return None if value is missing else json.dumps(value, sort_keys=True, default=str)

    found = []
    for key in keys:
        values = [document.get(key, missing) for document in flat]
        if len({canonical(value) for value in values}) > 1:
            found.append((key, ["(not set)" if value is missing else value_text(value) for value in values]))
    return found
