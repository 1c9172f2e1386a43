"""The web application of ``batreplay ui``: pages to launch, watch and browse simulations.

Built on Dash (Plotly's framework for analytical web apps, maintained by Plotly): its pages are Python
components and callbacks, so the form reuses the command line's own checks and registries in-process, and
its graphs are Plotly figures with zoom and pan in the browser, which the Gantt chart of a whole log needs.
Panel was the other candidate; Dash was chosen for its plain HTTP callbacks (a page works in any browser
without a live websocket per session, and a headless browser test drives it like a user), its sortable
DataTable, and its Flask server, on which the file downloads and the access token are ordinary routes.

Pages (laid out in :mod:`batreplay.ui.pages`; this module routes URLs to them and wires their callbacks):

- ``/`` **New run**: the form (:mod:`batreplay.ui.run_form`); the run starts in a background worker
  (:mod:`batreplay.ui.launcher`) with a live progress bar and a Cancel button.
- ``/runs`` **Runs**: every run under the runs directory, campaign instances included (:mod:`batreplay.ui.run_index`),
  sortable and filterable by campaign: its label (or id), choices in words and metrics in the report's units
  (:mod:`batreplay.ui.runs_table`), a column chooser, and, for the runs ticked, the parameters in which they differ.
- ``/runs/<run id>`` **Run detail** (a run id is a run directory's name, or ``campaigns/<campaign>/<instance>``
  for a campaign instance: :func:`~batreplay.ui.run_index.run_directory`): its metrics, interactive figures
  (:mod:`batreplay.ui.figures`) and
  download links for every output file and the static HTML report (``batreplay analyze``'s, built on first
  request).
- ``/compare?runs=a,b`` **Compare**: two runs or more side by side (:mod:`batreplay.ui.comparison`): the metrics
  with their differences to the first (and a warning when the runs hold other jobs), utilisation and queue length
  overlaid (smoothed over a window when asked), cumulative submissions.
- ``/campaigns`` **Campaigns**: the campaign files of a folder, how many instances are done, launch or resume
  one on this machine or a Dask cluster, and its report (:mod:`batreplay.ui.campaigns`).
- ``/models`` **Models**: fit a site model on a log, validate it on the log's held-out jobs in the background, see
  its table and figures (:mod:`batreplay.ui.models`, :mod:`batreplay.ui.models_page`); a model is run from New run.

Security: the app binds to 127.0.0.1 unless told otherwise (:func:`serve`) and then serves only requests addressed
to this machine's own names (no DNS rebinding); bound elsewhere it requires an access token (``?token=...`` once,
then a cookie). It reads files only under its runs directory and the folders named at start
(:class:`~batreplay.ui.sandbox.Sandbox`), and writes only under the runs directory. Every response says that no
other site may frame it and that browsers must not guess content types (:data:`SECURITY_HEADERS`). The launch
callbacks check every field again, whatever the page sent (a field that fails its check in the browser launches
nothing).
"""

from __future__ import annotations

import hmac
import os
import socket
import threading
from urllib.parse import quote, unquote, urlsplit
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dash import ALL, Dash, Input, Output, State, ctx, dcc, html, no_update
from flask import abort, request, send_from_directory

from batreplay.campaign.spec import CampaignSpecError
from batreplay.ui import models_page, pages
from batreplay.ui.campaigns import REPORT, Campaigns
from batreplay.ui.launcher import CANCELLED, DONE, FAILED, Launcher, status_line
from batreplay.ui.messages import one_line
from batreplay.ui.run_form import (
    MAX_UPLOAD_BYTES,
    OPTION_FIELD,
    FormError,
    RunForm,
    build_run,
    form_values,
    save_upload,
    scheduler_options_text,
    whole_number,
)
from batreplay.ui.models import (
    FIT_FIELD,
    VALIDATE_FIELD,
    VALIDATION_ID,
    VALIDATIONS,
    Validations,
    fit_fields,
    fit_from_form,
    model_choices,
    plan_validation,
    validation_fields,
)
from batreplay.ui.run_index import instance_id, list_runs, run_directory, run_files
from batreplay.ui.sandbox import Sandbox, SandboxError

TOKEN_COOKIE = "batreplay_token"
#: In the browser: the axis changes of a graph's zoom, pan or reset (Plotly's ``relayoutData``), or nothing for the
#: events that change no axis (a resize, a legend click), which then cost no request.
AXIS_CHANGES = """function (relayout) {
    if (relayout && Object.keys(relayout).some(key => key.startsWith('xaxis') || key.startsWith('yaxis'))) {
        return relayout;
    }
    return window.dash_clientside.no_update;
}"""
#: In the browser: as :data:`AXIS_CHANGES`, but with both axes' ranges as the graph now shows them (a reset passes
#: as it is): a quick second zoom never builds on a window the server has not answered yet.
AXIS_RANGES = """function (relayout) {
    const keys = Object.keys(relayout || {});
    if (!keys.some(key => key.startsWith('xaxis') || key.startsWith('yaxis'))) {
        return window.dash_clientside.no_update;
    }
    const graph = window.dash_clientside.callback_context.triggered[0].prop_id.split('.')[0];
    const plot = document.querySelector('#' + graph + ' .js-plotly-plot');
    const shown = {};
    for (const axis of ['xaxis', 'yaxis']) {
        if (relayout[axis + '.autorange'] === true) {
            shown[axis + '.autorange'] = true;
        } else if (plot && plot._fullLayout && plot._fullLayout[axis]) {
            shown[axis + '.range'] = plot._fullLayout[axis].range.slice();
        }
    }
    return shown;
}"""
#: The addresses of this machine only: the app binds to one of them unless given a token.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: The addresses that bind every address of this machine: no browser opens them (:func:`browser_host`).
ALL_ADDRESSES = ("0.0.0.0", "::", "")
REPORTS = ".reports"
#: What reading a run's files may raise: the readers' one-line errors (ValueError and its kinds), a file gone or
#: unreadable (OSError), a JSON document of another shape (KeyError, TypeError). A page says it in one line.
READ_ERRORS = (ValueError, OSError, KeyError, TypeError)
#: Headers of every response (pages, callbacks, downloads, reports, errors): no other site may frame the app
#: (clickjacking), and a browser takes a download for what its type says, never guessing from its bytes.
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}


def _text(value: Any) -> str | None:
    """A form value as text (None stays None): a browser can send any JSON value."""
    return value if value is None or isinstance(value, str) else str(value)


def _names(value: Any) -> list[str]:
    """The texts of a list a browser sent (run ids chosen or ticked), in order; nothing for anything else: a browser
    can send any JSON value."""
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


@dataclass
class UiConfig:
    """What the app serves.

    Attributes:
        runs_dir: where runs, uploads and generated platforms go.
        allowed: folders whose files the form may use (workloads, platforms, node types, scheduler files).
        token: the access token every request must carry, or None (loopback only).
        workers: runs simulated at the same time.
        upload_limit: largest uploaded workload, bytes.
        campaigns: the folder of campaign files the Campaigns page lists (readable too), or None.
        dask_address: the Dask scheduler campaigns may run on, or None (this machine only).
    """

    runs_dir: Path
    allowed: list[Path] = field(default_factory=list)
    campaigns: Path | None = None
    dask_address: str | None = None
    token: str | None = None
    workers: int = 1
    upload_limit: int = MAX_UPLOAD_BYTES


def create_app(config: UiConfig) -> Dash:
    """The Dash application serving ``config`` (its Flask server is ``app.server``).

    Raises:
        SandboxError: an allowed folder that is not a directory.
    """
    from batreplay.workloads.pwa import default_cache_dir

    cache = default_cache_dir()
    readable = [*config.allowed, *([config.campaigns] if config.campaigns else []),
                *([cache] if cache.is_dir() else [])]
    sandbox = Sandbox(config.runs_dir, readable)
    launcher = Launcher(sandbox.runs_dir, workers=config.workers)
    campaigns = Campaigns(Path(config.campaigns).resolve() if config.campaigns else None, sandbox,
                          config.dask_address)
    app = Dash(__name__, title="batreplay", suppress_callback_exceptions=True, update_title=None)
    app.launcher = launcher  # (for shutting down)
    app.layout = html.Div([
        html.H1("batreplay"), pages.nav(), dcc.Location(id="url"), html.Div(id="page"),
    ], className="app")
    server = app.server
    # an upload travels base64-encoded (4/3 of its size): larger requests are refused before they are read
    server.config["MAX_CONTENT_LENGTH"] = config.upload_limit * 4 // 3 + (1 << 20)
    _add_guards(server, config.token)
    _add_file_routes(server, sandbox, campaigns)
    _add_run_callbacks(app, sandbox, launcher, config.upload_limit)
    _add_browse_callbacks(app, sandbox, launcher, campaigns)
    _add_run_view_callbacks(app, sandbox)
    app.validations = Validations()  # (for shutting down)
    _add_model_callbacks(app, sandbox, app.validations)
    return app


def _add_guards(server, token: str | None) -> None:
    """Who may use the app (a token beyond loopback, else this machine's own names only) and the headers of every
    response (:data:`SECURITY_HEADERS`)."""

    @server.after_request
    def _security_headers(response):
        response.headers.update(SECURITY_HEADERS)  # (Flask runs this for error responses too: 403, 404, 500)
        return response

    if token:
        @server.before_request
        def _check_token():
            given = request.args.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
            if not hmac.compare_digest(given.encode(), token.encode()):
                abort(403)

        @server.after_request
        def _remember_token(response):
            given = request.args.get("token") or ""
            if given and hmac.compare_digest(given.encode(), token.encode()):  # (never after a refusal)
                response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict")
            return response
    else:
        @server.before_request
        def _check_host():
            # Without a token only this machine's own names are served: a web page whose name resolves to
            # 127.0.0.1 (DNS rebinding) cannot drive the app from a browser.
            if urlsplit(f"//{request.host}").hostname not in LOOPBACK_HOSTS:
                abort(403)


def _stale(report: Path, folder: Path) -> bool:
    """Whether the report built for the run directory ``folder`` is missing or older than the run (a run replaced
    by ``--force``, an instance of a campaign run again): then it is built again."""
    try:
        built = report.stat().st_mtime_ns
    except OSError:
        return True
    sources = [folder / name for name in ("run.json", "out_jobs.csv") if (folder / name).is_file()]
    return any(source.stat().st_mtime_ns > built for source in sources)


def _add_file_routes(server, sandbox: Sandbox, campaigns: Campaigns) -> None:
    """The routes that serve files: a finished run's files, its HTML report (built on first request), a campaign's
    report. A run is addressed by its run id (:func:`~batreplay.ui.run_index.run_directory`): one URL segment for a
    run directory of the runs folder, ``campaigns/<campaign>/<instance>`` for a campaign instance (routes of their
    own, each part one segment: no ``<path:...>`` converter takes a run id)."""
    runs_dir = sandbox.runs_dir
    report_lock = threading.Lock()

    @server.route("/files/<run_id>/<name>")
    def _download(run_id: str, name: str):
        folder = run_directory(runs_dir, run_id)
        if folder is None or name not in run_files(folder):
            abort(404)
        return send_from_directory(folder, name, as_attachment=True)

    @server.route("/files/campaigns/<campaign>/<instance>/<name>")
    def _instance_download(campaign: str, instance: str, name: str):
        return _download(instance_id(campaign, instance), name)

    @server.route("/reports/campaigns/<campaign>/<instance>/<path:name>")
    def _instance_report(campaign: str, instance: str, name: str):
        return _report(instance_id(campaign, instance), name)

    @server.route("/reports/<run_id>/<path:name>")
    def _report(run_id: str, name: str):
        folder = run_directory(runs_dir, run_id)
        if folder is None:
            abort(404)
        out = runs_dir / REPORTS / run_id
        with report_lock:
            if _stale(out / "report.html", folder):
                from batreplay.analysis.analyze_command import analyze
                from batreplay.analysis.run_dir import load_run

                try:
                    analyze([folder], out, swf_log=pages.replayed_log(load_run(folder, may_read=sandbox.contains),
                                                                      sandbox), may_read=sandbox.contains)
                except READ_ERRORS as err:
                    return (f"the report of {run_id} could not be built: {one_line(err)}\n", 500,
                            {"Content-Type": "text/plain"})
        return send_from_directory(out, name)

    @server.route("/validations/<validation_id>/<path:name>")
    def _validation_file(validation_id: str, name: str):
        folder = runs_dir / VALIDATIONS / validation_id
        if not VALIDATION_ID.fullmatch(validation_id) or folder.is_symlink():
            abort(404)
        real = Path(os.path.realpath(folder / name))  # a regular file of the folder, reached through no link
        if real != folder.resolve() / name or not real.is_file() or not (folder / "validation.csv").is_file():
            abort(404)
        return send_from_directory(folder, name, as_attachment=not name.endswith(".png"))

    @server.route("/campaign-reports/<key>/<path:name>")
    def _campaign_report(key: str, name: str):
        try:
            folder = campaigns.output_root(key) / REPORT
        except SandboxError:  # not a plain campaign name
            abort(404)
        if not (folder / "report.html").is_file():
            abort(404)
        return send_from_directory(folder, name)


def _add_run_callbacks(app: Dash, sandbox: Sandbox, launcher: Launcher, upload_limit: int) -> None:
    """The callbacks of the New-run page: scheduler defaults, upload, launch (every field checked again, the
    generic fields of the run options read all at once by their pattern-matching ids), progress, cancel."""
    runs_dir = sandbox.runs_dir

    @app.callback(Output("scheduler-options", "value"), Input("scheduler", "value"), prevent_initial_call=True)
    def _scheduler_defaults(name: str | None):
        return scheduler_options_text(name) if name else no_update

    @app.callback(Output("workload-path", "value"), Output("upload-status", "children"),
                  Input("upload", "contents"), State("upload", "filename"), prevent_initial_call=True)
    def _upload(contents: str | None, filename: str | None):
        if not contents:
            return no_update, no_update
        try:
            path = save_upload(sandbox, filename or "", contents, limit=upload_limit)
        except FormError as err:
            return no_update, html.Span(str(err), className="error", id="upload-error")
        return str(path.relative_to(runs_dir)), f"uploaded: {filename} (checked: a readable workload)"

    @app.callback(Output("current-run", "data"), Output("form-error", "children"), Output("poll", "disabled"),
                  Input("launch", "n_clicks"),
                  State("workload", "value"), State("workload-path", "value"), State("platform", "value"),
                  State("variant", "value"), State("node-types", "value"), State("scheduler", "value"),
                  State("scheduler-options", "value"), State("replay", "value"), State("sessions", "value"),
                  State("engine", "value"),
                  State({"type": OPTION_FIELD, "name": ALL}, "id"),
                  State({"type": OPTION_FIELD, "name": ALL}, "value"),
                  prevent_initial_call=True)
    def _launch(_clicks, workload, workload_path, platform, variant, node_types, scheduler, options, replay,
                sessions, engine, option_ids, option_values):
        typed = _text(workload_path)
        form = RunForm(workload=typed if typed and typed.strip() else _text(workload), platform=_text(platform),
                       variant=_text(variant), node_types=_text(node_types), scheduler=_text(scheduler),
                       scheduler_options=_text(options), replay=_text(replay), sessions=_text(sessions),
                       engine=_text(engine), options=form_values(option_ids, option_values))
        try:
            planned = build_run(form, sandbox)
        except (FormError, SandboxError) as err:
            return no_update, str(err), True
        except READ_ERRORS as err:  # an input file that cannot be read (its reader says why)
            return no_update, one_line(err, kind=True), True
        launcher.submit(planned.run_id, planned.spec)
        return planned.run_id, "", False

    @app.callback(Output("run-status", "children"), Output("progress", "value"), Output("run-link", "children"),
                  Output("poll", "disabled", allow_duplicate=True),
                  Output("run-panel", "style"), Output("cancel", "style"),
                  Input("poll", "n_intervals"), Input("current-run", "data"), prevent_initial_call=True)
    def _poll(_ticks, run_id: str | None):
        state = launcher.state(run_id) if run_id else None
        if state is None:
            return no_update, no_update, no_update, True, no_update, no_update
        fraction = state.done / state.total if state.total else 0.0
        ended = state.status in (DONE, FAILED, CANCELLED)  # (the panel shows from the launch on, Cancel till the end)
        return (status_line(state), "1" if state.status == DONE else str(fraction),
                dcc.Link("open the run", href=f"/runs/{run_id}", id="open-run") if state.status == DONE else "",
                ended, {}, pages.HIDDEN if ended else {})

    @app.callback(Output("run-status", "children", allow_duplicate=True), Input("cancel", "n_clicks"),
                  State("current-run", "data"), prevent_initial_call=True)
    def _cancel(_clicks, run_id: str | None):
        if run_id and launcher.cancel(run_id):
            return f"{run_id}: cancelling..."
        return no_update


def _add_browse_callbacks(app: Dash, sandbox: Sandbox, launcher: Launcher, campaigns: Campaigns) -> None:
    """The page router and the callbacks of the Runs, Run detail, Compare and Campaigns pages."""
    runs_dir = sandbox.runs_dir

    @app.callback(Output("page", "children"), Input("url", "pathname"), Input("url", "search"))
    def _page(pathname: str | None, search: str | None):
        path = (pathname or "/").rstrip("/") or "/"
        try:
            if path == "/":
                return pages.new_run_page(sandbox)
            if path == "/runs":
                return pages.runs_page()
            if path == "/compare":
                return pages.compare_page(runs_dir, search)
            if path == "/campaigns":
                return pages.campaigns_page(campaigns)
            if path == "/models":
                return models_page.models_page(sandbox)
            if path.startswith("/runs/"):  # (a run id, percent-encoded in links: run_index.run_directory checks it)
                return pages.run_detail_page(runs_dir, unquote(path.removeprefix("/runs/")), sandbox)
        except READ_ERRORS as err:
            return pages.error_page(f"{path}: cannot be shown", err)
        return html.Div([html.H2("Not found"), html.P(f"No page at {path}.")])

    @app.callback(Output("runs-table", "data"), Output("runs-table", "columns"), Output("runs-table", "tooltip_data"),
                  Output("runs-table", "selected_rows"), Output("runs-campaign", "options"),
                  Input("runs-poll", "n_intervals"), Input("runs-campaign", "value"), State("runs-table", "columns"),
                  State("runs-table", "selected_row_ids"), State("runs-table", "selected_rows"))
    def _runs(_ticks, campaign: Any, columns: Any, selected: Any, ticked_rows: Any):
        from batreplay.ui.runs_table import campaign_choices, of_campaign, runs_table

        rows = list_runs(runs_dir, launcher.states())
        table = runs_table(of_campaign(rows, campaign))  # (the metrics' units: those of the rows shown)
        ticked = set(_names(selected))
        # the rows ticked stay ticked by their id, wherever a new run or the filter puts them (the table ticks by
        # place); unchanged places are not sent, so that a tick made while this answer travels is not undone
        places = [index for index, row in enumerate(table.data) if row["id"] in ticked]
        return (table.data, no_update if table.columns == columns else table.columns, table.tooltips,
                no_update if places == ticked_rows else places, campaign_choices(rows))

    @app.callback(Output("compare-selected", "href"), Input("runs-table", "selected_row_ids"))
    def _compare_link(selected: list[str] | None):
        return "/compare?runs=" + ",".join(quote(name, safe="/") for name in _names(selected))

    @app.callback(Output("runs-table", "hidden_columns"), Input("runs-columns", "value"), prevent_initial_call=True)
    def _columns(shown: Any):
        from batreplay.ui.runs_table import hidden_columns

        return hidden_columns(shown)

    @app.callback(Output("runs-differences", "children"), Input("runs-table", "selected_row_ids"))
    def _differences(selected: Any):
        return pages.runs_differences(runs_dir, selected)  # (it keeps the run ids among whatever was sent)

    @app.callback(Output("comparison", "children"), Output("compare-window-unit", "children"),
                  Input("compare-runs", "value"), Input("compare-window", "value"))
    def _compare(chosen: Any, window: Any):
        try:
            shown, unit = pages.comparison(runs_dir, _names(chosen), sandbox, _text(window))
        except READ_ERRORS as err:
            return [pages.error_page("These runs cannot be compared", err)], no_update
        return shown, unit or "unit of the time axis"

    app.clientside_callback(AXIS_CHANGES, Output("compare-series-zoom", "data"),
                            Input("compare-series", "relayoutData"), prevent_initial_call=True)

    @app.callback(Output("compare-series", "figure"), Input("compare-series-zoom", "data"),
                  State("compare-runs", "value"), State("compare-window", "value"), prevent_initial_call=True)
    def _compare_zoom(zoom: Any, chosen: Any, window: Any):
        try:
            figure = pages.compared_series(runs_dir, _names(chosen), sandbox, _text(window), zoom)
        except READ_ERRORS:  # (the comparison above says why these runs cannot be read)
            return no_update
        return no_update if figure is None else figure

    @app.callback(Output("campaign-list", "children"), Input("campaigns-poll", "n_intervals"))
    def _campaign_list(_ticks):
        return pages.campaign_rows(campaigns)

    @app.callback(Output("campaign-error", "children"), Input({"type": "campaign-run", "key": ALL}, "n_clicks"),
                  State("campaign-executor", "value"), State("campaign-workers", "value"),
                  prevent_initial_call=True)
    def _campaign_launch(clicks, executor: str, workers):
        if not ctx.triggered_id or not any(clicks or []):
            return no_update
        try:  # (the workers field is checked again here: a browser sends what it likes)
            count = None if executor == "dask" else whole_number(_text(workers), "workers", empty="every core")
            campaigns.launch(ctx.triggered_id.get("key"), workers=count, dask=executor == "dask")
        except (SandboxError, CampaignSpecError, ValueError, OSError) as err:
            return one_line(err)
        return ""


def _add_run_view_callbacks(app: Dash, sandbox: Sandbox) -> None:
    """The callbacks of the Run detail page's Gantt chart and utilisation series: each draws the view the browser
    asks for (on opening, a zoom, a pan, a reset, a new colouring) from the run prepared once (kept in
    :data:`~batreplay.ui.run_cache.RUNS`), so that a whole log costs what one window of it costs
    (:mod:`batreplay.ui.gantt`, :mod:`batreplay.ui.series`). The browser sends only the events that change an axis
    (:data:`AXIS_CHANGES`, :data:`AXIS_RANGES`); ``#gantt-view`` holds the run and the window its chart shows."""
    from batreplay.ui import figures, gantt
    from batreplay.ui.series import time_range

    def _folder(run_id: Any) -> Path | None:
        return run_directory(sandbox.runs_dir, run_id) if isinstance(run_id, str) else None

    # (resizes and legend clicks never reach the server)
    app.clientside_callback(AXIS_RANGES, Output("gantt-zoom", "data"), Input("gantt", "relayoutData"),
                            prevent_initial_call=True)
    app.clientside_callback(AXIS_CHANGES, Output("utilisation-zoom", "data"), Input("utilisation", "relayoutData"),
                            prevent_initial_call=True)

    @app.callback(Output("gantt", "figure"), Output("gantt-view", "data"), Output("gantt-note", "children"),
                  Input("gantt-colour", "value"), Input("gantt-zoom", "data"),
                  State("detail-run", "data"), State("gantt-view", "data"))
    def _gantt(colour: Any, zoom: Any, run_id: Any, view: Any):
        folder = _folder(run_id)
        if folder is None:
            return no_update, no_update, no_update
        try:
            data = pages.prepared_gantt(folder, sandbox)
        except READ_ERRORS as err:
            return no_update, no_update, f"no Gantt chart: {one_line(err)}"
        stored = view.get("window") if isinstance(view, dict) and view.get("run") == run_id else None
        window = gantt.GanttWindow(*stored) if gantt.is_window(stored) else data.whole()
        if ctx.triggered_id == "gantt-zoom":
            window = gantt.window_after(zoom, window, data) or window
        colour = colour if colour in figures.COLOR_BY else "user"
        figure = gantt.gantt_figure(data, color_by=colour, window=window)
        return figure, {"run": run_id, "window": [window.start, window.end, window.low, window.high]}, ""

    @app.callback(Output("utilisation", "figure"), Output("utilisation-note", "children"),
                  Input("utilisation-zoom", "data"), State("detail-run", "data"))
    def _utilisation(zoom: Any, run_id: Any):
        folder = _folder(run_id)
        if folder is None:
            return no_update, no_update
        try:
            steps = pages.prepared_utilisation(folder, sandbox)
        except READ_ERRORS as err:
            return no_update, f"no utilisation over time: {one_line(err)}"
        shown = time_range(zoom)
        if isinstance(zoom, dict) and shown is None:  # (a zoom of a y axis alone: the browser has drawn it)
            return no_update, no_update
        window = None if shown is None or shown is True else (shown[0] * steps.divisor, shown[1] * steps.divisor)
        return figures.utilisation_figure(steps, window), ""


def _add_model_callbacks(app: Dash, sandbox: Sandbox, validations: Validations) -> None:
    """The callbacks of the Models page: fit (at once), validate (in the background, polled), the scheduler's
    default options (every field checked again on the server, whatever the page sent)."""

    @app.callback(Output("validate-scheduler-options", "value"), Input("validate-scheduler", "value"),
                  prevent_initial_call=True)
    def _validation_scheduler_defaults(name: str | None):
        return scheduler_options_text(name) if name else no_update

    @app.callback(Output("fit-result", "children"), Output("fit-error", "children"),
                  Output("validate-model", "options"),
                  Input("fit", "n_clicks"), State("fit-log", "value"), State("fit-job-types", "value"),
                  State("fit-select", "value"), State("fit-name", "value"),
                  State({"type": FIT_FIELD, "name": ALL}, "id"), State({"type": FIT_FIELD, "name": ALL}, "value"),
                  prevent_initial_call=True)
    def _fit(_clicks, log, job_types, select, name, ids, values):
        try:
            fitted = fit_from_form(sandbox, log=_text(log), job_types=_text(job_types), select=_text(select),
                                   name=_text(name), options=form_values(ids, values, fit_fields()))
        except (FormError, SandboxError) as err:
            return no_update, str(err), no_update
        return models_page.fit_view(fitted, sandbox.shown(fitted.path)), "", model_choices(sandbox)

    @app.callback(Output("current-validation", "data"), Output("validate-error", "children"),
                  Output("validation-poll", "disabled"),
                  Input("validate", "n_clicks"), State("validate-model", "value"), State("validate-log", "value"),
                  State("validate-platform", "value"), State("validate-scheduler", "value"),
                  State("validate-scheduler-options", "value"), State("validate-engine", "value"),
                  State({"type": VALIDATE_FIELD, "name": ALL}, "id"),
                  State({"type": VALIDATE_FIELD, "name": ALL}, "value"), prevent_initial_call=True)
    def _validate(_clicks, model, log, platform, scheduler, options, engine, ids, values):
        try:
            planned = plan_validation(sandbox, model=_text(model), log=_text(log), platform=_text(platform),
                                      scheduler=_text(scheduler), scheduler_options=_text(options),
                                      engine=_text(engine),
                                      options=form_values(ids, values, validation_fields()))
        except (FormError, SandboxError) as err:
            return no_update, str(err), True
        validations.submit(planned)
        return planned.validation_id, "", False

    @app.callback(Output("validation-status", "children"), Output("validation-result", "children"),
                  Output("validation-poll", "disabled", allow_duplicate=True),
                  Input("validation-poll", "n_intervals"), Input("current-validation", "data"),
                  prevent_initial_call=True)
    def _validation_poll(_ticks, validation_id: str | None):
        state = validations.state(validation_id) if validation_id else None
        if state is None:
            return no_update, no_update, True
        if state.status == FAILED:
            return f"{validation_id}: failed: {state.error}", "", True
        if state.status != DONE:
            return f"{validation_id}: {state.status}...", "", False
        try:
            return f"{validation_id}: finished", models_page.validation_view(sandbox, validation_id), True
        except READ_ERRORS as err:
            return f"{validation_id}: its result cannot be shown: {one_line(err)}", "", True


def browser_host(host: str) -> str:
    """The name a browser opens the app bound to ``host`` by: ``host`` itself, but for an address that binds every
    address of this machine (:data:`ALL_ADDRESSES`, which no browser opens) this machine's name
    (:func:`socket.gethostname`) when it resolves, else ``127.0.0.1``."""
    if host not in ALL_ADDRESSES:
        return host
    name = socket.gethostname()
    try:
        socket.getaddrinfo(name, None)
    except (OSError, UnicodeError):
        return "127.0.0.1"
    return name or "127.0.0.1"


def serve(config: UiConfig, *, host: str = "127.0.0.1", port: int = 8050, on_ready: Any = None) -> None:
    """Serve the app until interrupted; runs under way are cancelled on the way out.

    Args:
        host: the address to bind. Anything but a loopback address requires ``config.token``.
        port: the TCP port (0: a free one).
        on_ready: called with the URL once the server listens: of ``host``, or of :func:`browser_host` for an
            address of every interface (``0.0.0.0``, ``::``), with the token when there is one.

    Raises:
        ValueError: a non-loopback ``host`` without a token.
    """
    from werkzeug.serving import make_server

    if host not in LOOPBACK_HOSTS and not config.token:
        raise ValueError(f"--host {host}: binding beyond this machine needs an access token")
    app = create_app(config)
    server = make_server(host, port, app.server, threaded=True)
    opened = browser_host(host)
    shown = f"[{opened}]" if ":" in opened else opened  # an IPv6 address goes in brackets
    url = f"http://{shown}:{server.server_port}/" + (f"?token={config.token}" if config.token else "")
    if on_ready is not None:
        on_ready(url)
    try:
        server.serve_forever()
    finally:
        app.launcher.shutdown()
        app.validations.shutdown()
