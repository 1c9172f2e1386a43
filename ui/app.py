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
- ``/runs`` **Runs**: every run under the runs directory (:mod:`batreplay.ui.run_index`), sortable.
- ``/runs/<run id>`` **Run detail**: its metrics, interactive figures (:mod:`batreplay.ui.figures`) and
  download links for every output file and the static HTML report (``batreplay analyze``'s, built on first
  request).
- ``/compare?runs=a,b`` **Compare**: two runs or more side by side (:mod:`batreplay.ui.comparison`): the metrics
  with their differences to the first, utilisation and queue length overlaid, cumulative submissions.
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
import threading
from urllib.parse import urlsplit
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dash import ALL, Dash, Input, Output, State, ctx, dcc, html, no_update
from flask import abort, request, send_from_directory

from batreplay.campaign.spec import CampaignSpecError
from batreplay.ui import models_page, pages
from batreplay.ui.campaigns import REPORT, Campaigns
from batreplay.ui.launcher import CANCELLED, DONE, FAILED, Launcher
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
from batreplay.ui.run_index import list_runs, run_directory, run_files
from batreplay.ui.sandbox import Sandbox, SandboxError

TOKEN_COOKIE = "batreplay_token"
#: The addresses of this machine only: the app binds to one of them unless given a token.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
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


def _add_file_routes(server, sandbox: Sandbox, campaigns: Campaigns) -> None:
    """The routes that serve files: a finished run's files, its HTML report (built on first request), a campaign's
    report."""
    runs_dir = sandbox.runs_dir
    report_lock = threading.Lock()

    @server.route("/files/<run_id>/<name>")
    def _download(run_id: str, name: str):
        folder = run_directory(runs_dir, run_id)
        if folder is None or name not in run_files(folder):
            abort(404)
        return send_from_directory(folder, name, as_attachment=True)

    @server.route("/reports/<run_id>/<path:name>")
    def _report(run_id: str, name: str):
        folder = run_directory(runs_dir, run_id)
        if folder is None:
            abort(404)
        out = runs_dir / REPORTS / run_id
        with report_lock:
            if not (out / "report.html").is_file():
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
                  Input("poll", "n_intervals"), Input("current-run", "data"), prevent_initial_call=True)
    def _poll(_ticks, run_id: str | None):
        state = launcher.state(run_id) if run_id else None
        if state is None:
            return no_update, no_update, no_update, True
        fraction = state.done / state.total if state.total else 0.0
        if state.status == DONE:
            text = f"{run_id}: finished" + (" (reused: the same run had finished before)" if state.reused else "")
            return text, "1", dcc.Link("open the run", href=f"/runs/{run_id}", id="open-run"), True
        if state.status in (FAILED, CANCELLED):
            return f"{run_id}: {state.status}: {state.error}", str(fraction), "", True
        return (f"{run_id}: {state.status}, {state.done}/{state.total} jobs, t = {state.now:,.0f} s",
                str(fraction), "", False)

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
            if path.startswith("/runs/"):
                return pages.run_detail_page(runs_dir, path.removeprefix("/runs/"), sandbox)
        except READ_ERRORS as err:
            return pages.error_page(f"{path}: cannot be shown", err)
        return html.Div([html.H2("Not found"), html.P(f"No page at {path}.")])

    @app.callback(Output("runs-table", "data"), Input("runs-poll", "n_intervals"))
    def _runs(_ticks):
        rows = list_runs(runs_dir, launcher.states())
        for row in rows:
            row["id"] = row["run_id"]  # (the row's identity for selection)
            row["run_id"] = (f"[{row['run_id']}](/runs/{row['run_id']})" if row.get("status") == DONE
                             else row["run_id"])
        return rows

    @app.callback(Output("compare-selected", "href"), Input("runs-table", "selected_row_ids"))
    def _compare_link(selected: list[str] | None):
        return "/compare?runs=" + ",".join(selected or [])

    @app.callback(Output("gantt", "figure"), Input("gantt-colour", "value"), State("detail-run", "data"),
                  prevent_initial_call=True)
    def _gantt_colour(colour: str, run_id: str):
        from batreplay.analysis.run_dir import load_run
        from batreplay.ui import figures

        folder = run_directory(runs_dir, run_id)
        if folder is None:
            return no_update
        try:
            return figures.gantt_figure(load_run(folder, may_read=sandbox.contains), color_by=colour)
        except READ_ERRORS:  # (an unknown colour is a ValueError of gantt_figure)
            return no_update  # (the page shows the chart it had; reloading it says what is wrong)

    @app.callback(Output("comparison", "children"), Input("compare-runs", "value"))
    def _compare(chosen: Any):
        names = [name for name in chosen if isinstance(name, str)] if isinstance(chosen, list) else []
        try:
            return pages.comparison(runs_dir, names, sandbox)
        except READ_ERRORS as err:
            return [pages.error_page("These runs cannot be compared", err)]

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


def serve(config: UiConfig, *, host: str = "127.0.0.1", port: int = 8050, on_ready: Any = None) -> None:
    """Serve the app until interrupted; runs under way are cancelled on the way out.

    Args:
        host: the address to bind. Anything but a loopback address requires ``config.token``.
        port: the TCP port (0: a free one).
        on_ready: called with the URL once the server listens.

    Raises:
        ValueError: a non-loopback ``host`` without a token.
    """
    from werkzeug.serving import make_server

    if host not in LOOPBACK_HOSTS and not config.token:
        raise ValueError(f"--host {host}: binding beyond this machine needs an access token")
    app = create_app(config)
    server = make_server(host, port, app.server, threaded=True)
    shown = f"[{host}]" if ":" in host else host  # an IPv6 address goes in brackets
    url = f"http://{shown}:{server.server_port}/" + (f"?token={config.token}" if config.token else "")
    if on_ready is not None:
        on_ready(url)
    try:
        server.serve_forever()
    finally:
        app.launcher.shutdown()
        app.validations.shutdown()
