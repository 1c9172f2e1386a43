"""The pages of the web GUI (:mod:`batreplay.ui.app`): their layouts, as Dash components, and the parts the
callbacks refresh (the comparison, the campaign list). Each page function takes what it shows (the runs folder,
the sandbox, the campaigns) and returns components; :mod:`batreplay.ui.app` routes URLs to them and wires the
callbacks. Component ids (``#launch``, ``#run-status``, ``#gantt``...) are what the callbacks and the browser
tests address.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qs, quote

from dash import dash_table, dcc, html

from batreplay.options import Option

from batreplay.ui.campaigns import CAMPAIGNS, Campaigns
from batreplay.ui.launcher import DONE
from batreplay.ui.run_form import (
    CHECKED,
    OPTION_FIELD,
    PART_TITLES,
    RECORDED,
    WHOLE_NUMBER,
    form_choices,
    form_options,
    number_pattern,
    option_label,
    option_tooltip,
    scheduler_options_text,
)
from batreplay.ui.run_cache import RUNS
from batreplay.ui.run_index import list_runs, read_metrics, run_directory, run_files
from batreplay.ui.messages import one_line
from batreplay.ui.sandbox import Sandbox, SandboxError

#: How often a page showing a run under way asks for news, in milliseconds.
POLL_MS = 500
#: The style of a component not shown (yet): the run panel before a launch, Cancel when no run is under way.
HIDDEN = {"display": "none"}
#: The cells of every table of the pages.
TABLE_CELL = {"textAlign": "left", "fontFamily": "sans-serif", "fontSize": "0.9em"}


def error_page(title: str, err: BaseException) -> html.Div:
    """A page (or part) saying in one line why something cannot be shown: the first line of ``err``."""
    return html.Div([html.H2(title), html.P(one_line(err), className="error", id="page-error")])


def form_field(label: str, control, note: str = "") -> html.Div:
    """A field of a form: its label, its control, and a note under it (none when empty)."""
    children = [html.Label(label, className="field-label"), control]
    if note:
        children.append(html.Div(note, className="field-note"))
    return html.Div(children, className="field")


def option_control(declaration: Option, field_type: str = OPTION_FIELD):
    """The control of an option's generic field, from its declaration alone (id ``{"type": field_type,
    "name": <option name>}``; the New-run form's fields are of type ``OPTION_FIELD``):

    - choices: a dropdown of them; an optional option gets first an empty choice (value ``""``), labelled with
      what its default means (:meth:`~batreplay.options.Option.default_shown`: ``off``);
    - ``bool``: a checkbox (ticked: ``[CHECKED]``), ticked when the default is true;
    - ``dict``: a text area holding the default JSON object;
    - ``int``, ``float``: a text field with the pattern of :func:`~batreplay.ui.run_form.number_pattern` (the field
      turns red as the user types), empty, the default as placeholder. Text, not ``type="number"``: a number field
      that fails its check sends null, which would read as the default; the text reaches the server, which checks
      it again;
    - anything else (``str``, ``Path``): a text field, the default as placeholder (a text too long for
      :attr:`~batreplay.options.Option.max_chars` reaches the server, which says so: never cut silently).

    A blank field takes the option's default (the server gives it none).
    """
    ident = {"type": field_type, "name": declaration.name}
    shown = declaration.default_shown()
    if declaration.allowed is not None:
        choices = [{"label": choice, "value": choice} for choice in declaration.allowed]
        if declaration.optional:
            choices.insert(0, {"label": shown, "value": ""})
        value = "" if declaration.default is None else declaration.default
        return dcc.Dropdown(id=ident, options=choices, value=value, clearable=False, placeholder=shown)
    if declaration.kind is bool:
        return dcc.Checklist(id=ident, options=[{"label": " on", "value": CHECKED}],
                             value=[CHECKED] if declaration.default else [])
    if declaration.kind is dict:
        return dcc.Textarea(id=ident, value=shown, placeholder=shown, style={"width": "100%", "height": "4em"})
    checks = {}
    pattern = number_pattern(declaration)
    if pattern is not None:
        checks["pattern"] = pattern
    if declaration.kind is int:
        checks["inputMode"] = "numeric"
    return dcc.Input(id=ident, type="text", placeholder=shown, debounce=False, **checks)


def option_note(declaration: Option) -> str:
    """The line under a generic field: the range of a number with its unit, and what an empty text field means."""
    parts = []
    if declaration.kind in (int, float) and declaration.bounds_text():
        parts.append(" ".join(part for part in (declaration.bounds_text(), declaration.unit) if part))
    if declaration.allowed is None and declaration.kind not in (bool, dict):
        parts.append(f"empty: {declaration.default_shown()}")
    return "; ".join(parts)


def option_groups(options: Sequence[tuple[Option, str]], field_type: str = OPTION_FIELD,
                  prefix: str = "options") -> list[html.Details]:
    """The generic fields of a form (the New-run form's by default), one per option of ``options`` (``(declaration,
    part)`` pairs, :func:`~batreplay.ui.run_form.form_options`), grouped by the part of the run they set, in order of
    first appearance: one open ``<details>`` section per part (id ``<prefix>-<part>``, titled by
    :data:`~batreplay.ui.run_form.PART_TITLES`). Each field (:func:`option_control` of ``field_type``) has the
    option's label (unit included), its help as tooltip (``title``) and :func:`option_note` below."""
    groups: dict[str, list] = {}
    for declaration, part in options:
        field = html.Div([html.Label(option_label(declaration), className="field-label"),
                          option_control(declaration, field_type)]
                         + ([html.Div(option_note(declaration), className="field-note")]
                            if option_note(declaration) else []),
                         className="field option-field", title=option_tooltip(declaration))
        groups.setdefault(part, []).append(field)
    return [html.Details([html.Summary(PART_TITLES.get(part, part.capitalize())), *fields], open=True,
                         id=f"{prefix}-{part}", className="option-group")
            for part, fields in groups.items()]


def new_run_page(sandbox: Sandbox) -> html.Div:
    """The New-run form, its choices from :func:`~batreplay.ui.run_form.form_choices`, a field per run option
    declared for the form (:func:`option_groups`), and the panel of the run launched (status, progress bar,
    Cancel, link to the run), hidden until a run is launched."""
    choices = form_choices(sandbox)
    return html.Div([
        html.H2("New run"),
        form_field("Workload", dcc.Dropdown(id="workload", options=choices["workload"], value=None,
                                        clearable=True, placeholder="a log or workload file")),
        form_field("... or a path", dcc.Input(id="workload-path", type="text", debounce=False,
                                          placeholder="relative to an allowed folder"),
               "A path typed here wins over the list."),
        form_field("... or upload an SWF / Batsim JSON file",
               dcc.Upload(id="upload", children=html.Div("Drop a file here or click to choose one"),
                          className="upload", multiple=False)),
        html.Div(id="upload-status", className="status"),
        form_field("Platform", dcc.Dropdown(id="platform", options=choices["platform"], value="kth-sp2",
                                        clearable=False)),
        form_field("Platform variant", dcc.Dropdown(id="variant", options=choices["variant"], value=RECORDED,
                                                clearable=False)),
        form_field("Node types (instead of the platform)",
               dcc.Dropdown(id="node-types", options=choices["node_types"], value=None, clearable=True,
                            placeholder="none")),
        form_field("Scheduler", dcc.Dropdown(id="scheduler", options=choices["scheduler"], value="easy",
                                         clearable=False)),
        form_field("Scheduler options (JSON)",
                   dcc.Textarea(id="scheduler-options", value=scheduler_options_text("easy"),
                                style={"width": "100%", "height": "6em"}),
               "Declared options with their defaults."),
        form_field("Replay", dcc.RadioItems(id="replay", options=choices["replay"], value="rigid")),
        form_field("Sessions (feedback replay)", dcc.Input(id="sessions", type="text", value="arrival:60")),
        form_field("Engine", dcc.RadioItems(id="engine", options=choices["engine"], value="embedded")),
        *option_groups(form_options()),  # (one field per run option declared for the form)
        html.Button("Launch", id="launch", n_clicks=0),
        html.Div(id="form-error", className="error"),
        html.Div([  # (hidden until a run is launched; Cancel shown while it waits or runs: app.py's _poll)
            html.Div(id="run-status", className="status"),
            html.Progress(id="progress", value="0", max="1", style={"width": "60%"}),
            html.Button("Cancel", id="cancel", n_clicks=0, style=HIDDEN),
            html.Div(id="run-link"),
        ], id="run-panel", style=HIDDEN),
        dcc.Store(id="current-run"),
        dcc.Interval(id="poll", interval=POLL_MS, disabled=True),
    ])


def runs_page() -> html.Div:
    """The Runs page: a filter by campaign (``#runs-campaign``), a column chooser (``#runs-columns``: the columns of
    :data:`~batreplay.ui.runs_table.HIDDEN` unticked at first), the Runs table (``#runs-table``, filled and
    refreshed by a callback with :func:`batreplay.ui.runs_table.runs_table`), the link comparing the rows ticked,
    and the parameters in which they differ (``#runs-differences``, :func:`runs_differences`). The default columns
    fit a window 1,400 pixels wide: cells wrap, a long name anywhere."""
    from batreplay.ui.runs_table import COLUMNS as TABLE_COLUMNS
    from batreplay.ui.runs_table import HIDDEN as HIDDEN_COLUMNS
    from batreplay.ui.runs_table import column_choices, runs_table

    wrapped = {**TABLE_CELL, "whiteSpace": "normal", "height": "auto"}
    return html.Div([
        html.H2("Runs"),
        html.Div(form_field("Campaign", dcc.Dropdown(id="runs-campaign", options=[], value=None, clearable=True,
                                                     placeholder="every run, campaign instances included")),
                 style={"maxWidth": "32em"}),
        form_field("Columns", dcc.Checklist(id="runs-columns", options=column_choices(), inline=True,
                                            value=[key for key, _title in TABLE_COLUMNS if key not in HIDDEN_COLUMNS],
                                            labelStyle={"marginRight": "1em"})),
        html.Div(dcc.Link("compare the selected runs", href="/compare", id="compare-selected"),
                 className="field-note"),
        dash_table.DataTable(id="runs-table", columns=runs_table([]).columns, data=[],
                             hidden_columns=list(HIDDEN_COLUMNS), sort_action="native", filter_action="native",
                             page_size=50, markdown_options={"link_target": "_self"}, row_selectable="multi",
                             selected_row_ids=[], tooltip_data=[], tooltip_duration=None,
                             style_table={"overflowX": "auto"}, style_cell=wrapped,
                             style_cell_conditional=[{"if": {"column_id": "label"}, "minWidth": "11em"}],
                             style_header={"whiteSpace": "normal", "height": "auto"},
                             css=[{"selector": ".dash-cell-value, .dash-header", "rule": "overflow-wrap: anywhere;"},
                                  {"selector": ".show-hide", "rule": "display: none;"}]),
        html.Div(id="runs-differences"),
        dcc.Interval(id="runs-poll", interval=2 * POLL_MS),
    ])


def runs_differences(runs_dir: Path, selected: Sequence[str]) -> list:
    """What the runs ``selected`` (run ids ticked in Runs) differ in: a table (``#differences-table``) of the
    parameters whose values differ (:func:`batreplay.ui.runs_table.differing_parameters`), a column per run headed
    by its label or id, or a line saying they differ in nothing; a note names the runs without a description
    (waiting, running, unreadable). Nothing for fewer than two runs."""
    from batreplay.ui.run_index import run_parameters
    from batreplay.ui.runs_table import NOT_COMPARED, differing_parameters, shown_name

    ids = list(dict.fromkeys(name for name in (selected if isinstance(selected, (list, tuple)) else [])
                             if isinstance(name, str)))  # (a browser sends anything)
    if len(ids) < 2:
        return []
    described = {name: run_parameters(runs_dir, name) for name in ids}
    known = [name for name in ids if described[name] is not None]
    missing = [name for name in ids if described[name] is None]
    parts: list = [html.H3("Parameters that differ between the selected runs")]
    if missing:
        parts.append(html.P(f"No description to compare (waiting, running or unreadable): {', '.join(missing)}",
                            className="field-note"))
    if len(known) < 2:
        return parts
    found = differing_parameters([described[name] for name in known])
    if not found:
        aside = ", ".join(sorted(NOT_COMPARED))
        return parts + [html.P(f"The {len(known)} runs have the same parameters ({aside} aside).", id="runs-same")]
    names = [shown_name({**described[name], "run_id": name}) for name in known]
    columns = [{"name": "parameter", "id": "parameter"},
               *({"name": title, "id": f"run-{index}"} for index, title in enumerate(names))]
    data = [{"parameter": key, **{f"run-{index}": value for index, value in enumerate(values)}}
            for key, values in found]
    return parts + [dash_table.DataTable(id="differences-table", columns=columns, data=data,
                                         style_table={"overflowX": "auto"},
                                         style_cell={**TABLE_CELL, "whiteSpace": "normal", "height": "auto"})]


def replayed_log(run, sandbox: Sandbox) -> Path | None:
    """The SWF log a run replayed, when it is one and the app may read it (else None)."""
    workload = str(run.spec.get("workload", ""))
    if not workload.lower().endswith((".swf", ".swf.gz")):
        return None
    try:
        return sandbox.resolve(workload, "workload")
    except SandboxError:
        return None


def _adequacy_section(run, sandbox: Sandbox) -> list:
    """The adequacy table of a run against the log it replayed (Baranov et al. 2018, Table I, as the HTML report
    shows it: its numbers written by :func:`batreplay.analysis.report.format_value`, the run's columns headed "this
    run"), or why there is none."""
    from batreplay.analysis.adequacy import StreamMismatchError
    from batreplay.analysis.analyze_report import table_i_side_by_side
    from batreplay.analysis.report import format_value
    from batreplay.analysis.run_adequacy import adequacy_against_log, refusal_note
    from batreplay.workloads.swf import read_swf

    log = replayed_log(run, sandbox)
    if log is None:
        return []
    title = html.H3("Adequacy against the recorded log (Baranov et al. 2018, Table I)")
    try:
        table, notes = adequacy_against_log(run, read_swf(log))
    except StreamMismatchError as err:
        return [title, html.P(refusal_note(run, err), id="adequacy-note")]
    except (ValueError, OSError) as err:
        return [title, html.P(f"no adequacy table: {err}", id="adequacy-note")]
    shown = table_i_side_by_side(table.assign(run="this run"))
    # cells as the HTML report writes them (4 significant digits, thousands separated); headers on two rows: whose
    # values ("this run", the paper), then what they are (the table's own "<whose>: <what>" labels)
    columns = [{"name": ["", column] if ": " not in column else column.split(": ", 1), "id": f"c{index}"}
               for index, column in enumerate(shown.columns)]
    data = [{f"c{index}": format_value(value) for index, value in enumerate(row)}
            for row in shown.itertuples(index=False)]
    return [title, dash_table.DataTable(id="adequacy-table", data=data, columns=columns,
                                        merge_duplicate_headers=True, style_cell=TABLE_CELL,
                                        style_table={"overflowX": "auto"}),
            html.Ul([html.Li(note.removeprefix("vs log: ")) for note in notes], className="field-note")]


def _io_section(run) -> list:
    """CPU time, I/O time, CPU efficiency and bytes per node type of a run whose jobs moved bytes
    (:func:`batreplay.analysis.job_io.run_io`, as ``batreplay analyze`` writes them), or nothing."""
    from batreplay.analysis.analyze_report import IO_TABLE_DESCRIPTION
    from batreplay.analysis.job_io import run_io

    title = html.H3("CPU and I/O per node type (Caspart et al. 2019)")
    try:
        measured = run_io(run)
    except ValueError as err:
        return [title, html.P(f"no CPU and I/O times: {err}", id="io-note"), *_node_io_graph(run, True)]
    if measured is None:
        return _node_io_graph(run, False)
    jobs, per_type = measured
    shown = [{column: (f"{value:.4g}" if isinstance(value, float) else value) for column, value in row.items()}
             for row in per_type.to_dict("records")]
    return [title, dash_table.DataTable(id="io-table", data=shown,
                                        columns=[{"name": column, "id": column} for column in per_type.columns],
                                        style_cell=TABLE_CELL, style_table={"overflowX": "auto"}),
            html.P(IO_TABLE_DESCRIPTION, className="field-note"),
            html.Ul([html.Li(note) for note in jobs.notes], className="field-note"),
            *_node_io_graph(run, True)]


def _node_io_graph(run, moved_bytes: bool) -> list:
    """Node I/O per node type over time (:func:`batreplay.analysis.node_io.run_node_io`, bins as the report's), or
    the note that says why there is none (``moved_bytes``: the jobs' profiles move bytes, or could not be read)."""
    from batreplay.analysis.node_io import run_node_io
    from batreplay.analysis.plots import smoothing_bin
    from batreplay.ui import figures

    title = html.H3("Node I/O per node type over time")
    try:
        table, notes = run_node_io(run, smoothing_bin, moved_bytes=moved_bytes)
    except ValueError as err:
        return [title, html.P(f"no node I/O over time: {err}", id="node-io-note")]
    if table is None:
        return [title, html.P(notes[0], id="node-io-note")] if notes else []
    return [title, dcc.Graph(id="node-io", figure=figures.node_io_figure(run, table))]


def cached_run(folder: Path, sandbox: Sandbox):
    """The run of the run directory ``folder`` (:func:`batreplay.analysis.run_dir.load_run`, platform files named
    by ``run.json`` read only where ``sandbox`` allows), loaded once and kept in
    :data:`~batreplay.ui.run_cache.RUNS` while its files are unchanged.

    Raises:
        ValueError, OSError: the run cannot be read (the message says why).
    """
    from batreplay.analysis.run_dir import load_run

    return RUNS.get(folder, "run", lambda: load_run(folder, may_read=sandbox.contains))


def prepared_gantt(folder: Path, sandbox: Sandbox):
    """The run's Gantt chart prepared for drawing (:func:`batreplay.ui.gantt.gantt_data`), kept in
    :data:`~batreplay.ui.run_cache.RUNS`.

    Raises:
        ValueError, OSError: the run cannot be read or has no Gantt chart (the message says why).
    """
    from batreplay.ui.gantt import gantt_data

    return RUNS.get(folder, "gantt", lambda: gantt_data(cached_run(folder, sandbox)))


def prepared_utilisation(folder: Path, sandbox: Sandbox):
    """The run's utilisation and queue length as steps (:func:`batreplay.ui.figures.utilisation_steps`), kept in
    :data:`~batreplay.ui.run_cache.RUNS`.

    Raises:
        ValueError, OSError: the run cannot be read (the message says why).
    """
    from batreplay.ui.figures import utilisation_steps

    return RUNS.get(folder, "utilisation", lambda: utilisation_steps(cached_run(folder, sandbox)))


def prepare_views(folder: Path, sandbox: Sandbox) -> threading.Thread:
    """Prepare the run's Gantt chart and utilisation steps in a background thread, while the browser loads the page
    that draws them (their callbacks then wait for them, or find them ready). An error is left to the callbacks,
    which meet it again and say it."""

    def _prepare() -> None:
        for prepare in (prepared_gantt, prepared_utilisation):
            try:
                prepare(folder, sandbox)
            except (ValueError, OSError, KeyError, TypeError):  # (said by the callback that draws the view)
                pass

    thread = threading.Thread(target=_prepare, daemon=True, name=f"prepare {folder.name}")
    thread.start()
    return thread


def run_detail_page(runs_dir: Path, run_id: str, sandbox: Sandbox) -> html.Div:
    """The detail page of the finished run ``run_id``: metrics, figures, CPU and I/O per node type (jobs that move
    bytes), adequacy against its log, downloads; or a line saying there is no such run or why it cannot be read.

    The Gantt chart and the utilisation series start empty: their callbacks draw them for the view the browser
    shows (:mod:`batreplay.ui.gantt`, :func:`batreplay.ui.figures.utilisation_figure`), ``#gantt-view`` holding the
    run and its Gantt chart's window (``{"run": run id, "window": [start, end, low, high]}``, s and hosts)."""
    from batreplay.analysis.metric_registry import summary_rows
    from batreplay.ui import figures

    folder = run_directory(runs_dir, run_id)
    if folder is None:
        return html.Div([html.H2("Run not found"), html.P(f"No finished run called {run_id!r} here.",
                                                          className="error")])
    try:
        run = cached_run(folder, sandbox)
    except (ValueError, OSError) as err:
        return html.Div([html.H2(run_id), html.P(f"This run cannot be read: {err}", className="error")])
    prepare_views(folder, sandbox)
    rows = summary_rows(read_metrics(folder))
    files = run_files(folder)
    graphs = [
        dcc.RadioItems(id="gantt-colour", options=[{"label": "colour by user", "value": "user"},
                                                   {"label": "colour by state", "value": "state"}],
                       value="user", inline=True),
        html.P(id="gantt-note", className="error"),
        dcc.Store(id="gantt-view"), dcc.Store(id="gantt-zoom"),
        dcc.Loading(dcc.Graph(id="gantt", style={"height": "600px"}), delay_show=300,
                    overlay_style={"visibility": "visible", "opacity": 0.6}),  # (the chart stays as it redraws)
        dcc.Store(id="utilisation-zoom"),
        html.P(id="utilisation-note", className="error"),
        dcc.Graph(id="utilisation"),
        dcc.Graph(id="waiting", figure=figures.waiting_time_figure(run)),
    ]
    lateness = figures.lateness_of(run)
    if lateness is not None:
        graphs.append(dcc.Graph(id="lateness", figure=figures.lateness_figure(lateness)))
    label = run.spec.get("label")
    return html.Div([
        html.H2(f"{label} ({run_id})" if label else run_id, id="run-title"),
        dcc.Store(id="detail-run", data=run_id),
        dash_table.DataTable(id="metrics-table", data=[{"metric": label, "value": text} for label, text in rows],
                             columns=[{"name": "metric", "id": "metric"}, {"name": "value", "id": "value"}],
                             style_cell=TABLE_CELL),
        *graphs,
        *_io_section(run),
        *_adequacy_section(run, sandbox),
        html.H3("Files"),
        html.Ul([html.Li(html.A(name, href=f"/files/{quote(run_id, safe='/')}/{quote(name)}", className="download"))
                 for name in files]
                + [html.Li(html.A("static HTML report", href=f"/reports/{quote(run_id, safe='/')}/report.html",
                                  target="_blank",
                                  id="report-link"))]),
    ])


def compare_page(runs_dir: Path, search: str | None) -> html.Div:
    """The Compare page: a choice of finished runs (preselected by the URL's ``?runs=a,b``) and the comparison
    the callback draws below it."""
    finished = [row["run_id"] for row in list_runs(runs_dir) if row.get("status") == DONE]
    chosen = [name for name in parse_qs((search or "").lstrip("?")).get("runs", [""])[0].split(",") if name in finished]
    return html.Div([
        html.H2("Compare runs"),
        form_field("Runs (the first is the reference)",
               dcc.Dropdown(id="compare-runs", options=[{"label": name, "value": name} for name in finished],
                            value=chosen, multi=True, placeholder="two runs or more")),
        html.Div([html.Label(["Smoothing window (", html.Span("unit of the time axis", id="compare-window-unit"), ")"],
                             className="field-label", htmlFor="compare-window"),
                  dcc.Input(id="compare-window", type="text", debounce=True, placeholder="none"),
                  html.Div("A moving average of the utilisation and queue length over this much simulated time "
                           "before each instant (Enter to apply); empty: the exact step functions.",
                           className="field-note")], className="field"),
        dcc.Loading(html.Div(id="comparison")),
    ])


def _compared_folders(runs_dir: Path, chosen: Sequence[str] | None) -> list[Path]:
    """The run directories of the finished runs ``chosen`` (names; unknown ones skipped), in order."""
    return [folder for folder in (run_directory(runs_dir, name) for name in chosen or []) if folder is not None]


def compared_series(runs_dir: Path, chosen: Sequence[str], sandbox: Sandbox, window: str | None, zoom):
    """Compare's overlaid series redrawn for the time window a zoom of the browser shows (``zoom``: Plotly's
    ``relayoutData``; a reset draws the whole runs), smoothed over ``window`` as :func:`comparison` draws them; None
    when there is nothing to redraw (fewer than two runs, a zoom of a y axis alone, a bad smoothing window, which
    the page already says).

    Raises:
        OSError, ValueError: a run's files cannot be read.
    """
    from batreplay.ui import figures
    from batreplay.ui.comparison import smoothing_window
    from batreplay.ui.series import time_range

    folders = _compared_folders(runs_dir, chosen)
    shown = time_range(zoom)
    if len(folders) < 2 or shown is None:
        return None
    divisor, unit = figures.runs_unit([cached_run(folder, sandbox) for folder in folders])
    try:
        length = smoothing_window(window, unit)
    except ValueError:
        return None
    view = None if shown is True else (shown[0] * divisor, shown[1] * divisor)
    return figures.comparison_series_figure([prepared_utilisation(folder, sandbox) for folder in folders],
                                            window=length, view=view)


def comparison(runs_dir: Path, chosen: list[str], sandbox: Sandbox, window: str | None = None) -> tuple[list, str]:
    """The comparison of the finished runs ``chosen`` (names; unknown ones skipped): a warning when they hold other
    jobs (``#comparison-warning``, :func:`~batreplay.ui.comparison.job_set_warnings`), metrics table, overlaid
    series (smoothed over ``window``, text in the time axis' unit, blank for none; a bad one is said in one line,
    ``#compare-window-error``, and the series drawn as they are) and cumulative submissions, or a line asking for
    two runs or more. Platform files named by the runs' ``run.json`` are read only where ``sandbox`` allows.

    Returns:
        ``(children, unit)``: the components, and the name of the time axis' unit ("" without two runs).

    Raises:
        OSError, ValueError: a run's files cannot be read (the caller says so in one line).
    """
    from batreplay.ui import figures
    from batreplay.ui.comparison import REFERENCE_NOTE, comparison_rows, job_set_warnings, smoothing_window

    folders = _compared_folders(runs_dir, chosen)
    if len(folders) < 2:
        return [html.P("Choose two finished runs or more.")], ""
    columns, rows = comparison_rows([folder.name for folder in folders],
                                    [read_metrics(folder) for folder in folders])
    runs = [cached_run(folder, sandbox) for folder in folders]  # (a new smoothing window reads no file again)
    divisor, unit = figures.runs_unit(runs)
    shown: list = []
    try:
        length = smoothing_window(window, unit)
    except ValueError as err:
        shown.append(html.P(str(err), className="error", id="compare-window-error"))
        length = None
    warnings = job_set_warnings(runs, unit=(divisor, unit))
    if warnings:
        shown.append(html.Div([html.P("Not the same jobs: these runs' metrics measure other work.",
                                      className="warning-title"),
                               html.Ul([html.Li(line) for line in warnings])],
                              id="comparison-warning", className="warning"))
    return [
        *shown,
        dash_table.DataTable(id="comparison-table", data=rows, columns=[{"name": c, "id": c} for c in columns],
                             style_table={"overflowX": "auto"}, style_cell=TABLE_CELL),
        html.P(REFERENCE_NOTE, className="field-note"),
        dcc.Store(id="compare-series-zoom"),
        dcc.Graph(id="compare-series", figure=figures.comparison_series_figure(
            [prepared_utilisation(folder, sandbox) for folder in folders], window=length)),
        dcc.Graph(id="compare-cumulative", figure=figures.cumulative_submissions_figure(runs)),
    ], unit


def campaigns_page(campaigns: Campaigns) -> html.Div:
    """The Campaigns page: executor choice and the list of campaign files (refreshed by a callback)."""
    if campaigns.folder is None:
        return html.Div([html.H2("Campaigns"),
                         html.P("No campaign folder: start the app with --campaigns DIR (expe/ by default when "
                                "it is in the current folder).")])
    return html.Div([
        html.H2("Campaigns"),
        html.P(f"Campaign files of {campaigns.folder}; their runs go under "
               f"{campaigns.sandbox.runs_dir / CAMPAIGNS}."),
        form_field("Executor", dcc.RadioItems(id="campaign-executor", value="local", inline=True, options=[
            {"label": "this machine", "value": "local"},
            {"label": f"Dask cluster ({campaigns.dask_address})" if campaigns.dask_address
             else "Dask cluster (start the app with --dask-address)", "value": "dask",
             "disabled": not campaigns.dask_address}])),
        form_field("Workers (this machine)", dcc.Input(id="campaign-workers", type="text", inputMode="numeric",
                                                   pattern=WHOLE_NUMBER, value="2")),
        html.Div(id="campaign-error", className="error"),
        html.Div(id="campaign-list"),
        dcc.Interval(id="campaigns-poll", interval=2 * POLL_MS),
    ])


def campaign_rows(campaigns: Campaigns) -> list:
    """One line per campaign file: progress, why it cannot run, the Run / resume button, its report and the
    state of a run launched from the app."""
    items = []
    for entry in campaigns.entries():
        job = campaigns.jobs.get(entry.key)
        parts = [html.B(entry.key), f" ({entry.path.name}) "]
        if entry.error:
            parts.append(html.Span(f"cannot run: {entry.error}", className="error"))
        else:
            parts += [f"{entry.description} - {entry.finished}/{entry.total} instances finished"
                      + (f", {entry.failed} failed" if entry.failed else "") + " ",
                      html.Button("Run / resume", id={"type": "campaign-run", "key": entry.key}, n_clicks=0)]
            if entry.report is not None:
                parts += [" ", html.A("report", href=f"/campaign-reports/{entry.key}/report.html", target="_blank",
                                      id=f"report-{entry.key}")]
        if job is not None:
            parts.append(html.Div(f"{job.status}: {job.message}", id=f"campaign-status-{entry.key}",
                                  className="status"))
        items.append(html.Li(parts, className="campaign"))
    return [html.Ul(items)] if items else [html.P("No campaign file (*.toml) in this folder.")]


def nav() -> html.Nav:
    """The links to the six pages."""
    return html.Nav([dcc.Link("New run", href="/"), " | ", dcc.Link("Runs", href="/runs"), " | ",
                     dcc.Link("Compare", href="/compare"), " | ", dcc.Link("Campaigns", href="/campaigns"), " | ",
                     dcc.Link("Models", href="/models")],
                    className="nav")
