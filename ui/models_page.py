"""The layout of the Models page (``/models``) and of the results its callbacks show: a fit's job types, a
validation's table and figures. The page's actions are :mod:`batreplay.ui.models`'; :mod:`batreplay.ui.app` wires
them. Component ids (``#fit``, ``#fit-types``, ``#validate``, ``#validation-table``...) are what the callbacks and
the browser tests address.
"""

from __future__ import annotations

from dash import dash_table, dcc, html

from batreplay.options import declared_options
from batreplay.run.spec import FLAT_FIELDS
from batreplay.ui.models import (
    FIT_FIELD,
    VALIDATE_FIELD,
    FittedOnPage,
    fit_fields,
    log_choices,
    model_choices,
    platform_choices,
    validation_fields,
    validation_result,
)
from batreplay.ui.pages import POLL_MS, TABLE_CELL, form_field, option_groups
from batreplay.ui.run_form import form_choices, scheduler_options_text
from batreplay.ui.sandbox import Sandbox
from batreplay.validation.validation_options import ValidationOptions


def models_page(sandbox: Sandbox) -> html.Div:
    """The Models page: fit a model, validate one, and how to run one (the New-run form)."""
    return html.Div([
        html.H2("Site models"),
        html.P(["A site model describes a site's jobs by job type (Caspart et al. 2019): fit one on a random share of "
                "a log's jobs, validate it on the others, then run it from ", dcc.Link("New run", href="/"),
                ": choose the model as the workload, and the closed or the open replay."]),
        *_fit_section(sandbox),
        *_validate_section(sandbox),
    ])


def _fit_section(sandbox: Sandbox) -> list:
    return [
        html.H3("Fit a model"),
        form_field("Log", dcc.Dropdown(id="fit-log", options=log_choices(sandbox), placeholder="an SWF log")),
        form_field("Job types", dcc.Input(id="fit-job-types", type="text", value="group"),
              "all; a field: group, user, queue, partition or executable; thresholds such as processors:1,8,64; "
              "or a TOML file (docs/site-models.md)"),
        form_field("Select", dcc.Input(id="fit-select", type="text", placeholder="partition=156,157"),
              "fit on the jobs whose field has one of these values only; several separated by ';'"),
        form_field("Name", dcc.Input(id="fit-name", type="text", placeholder="gridka"),
              "written as models/NAME.json in the runs folder, its held-out jobs beside it"),
        *option_groups([(declaration, "fit") for declaration in fit_fields()], FIT_FIELD, "fit-options"),
        html.Button("Fit", id="fit", n_clicks=0),
        html.Div(id="fit-error", className="error"),
        dcc.Loading(html.Div(id="fit-result")),
    ]


def _validate_section(sandbox: Sandbox) -> list:
    choices = form_choices(sandbox)
    own = declared_options(ValidationOptions)  # (names that run options have too: population, seed, warm_up)
    parts = [(declaration, "validation" if declaration in own else FLAT_FIELDS[declaration.name][0])
             for declaration in validation_fields()]
    return [
        html.H3("Validate a model on its held-out jobs"),
        form_field("Model", dcc.Dropdown(id="validate-model", options=model_choices(sandbox),
                                         placeholder="a site model")),
        form_field("Log", dcc.Dropdown(id="validate-log", options=log_choices(sandbox), placeholder="an SWF log"),
              "the log the model was fitted on (its checksum is checked)"),
        form_field("Platform", dcc.Dropdown(id="validate-platform", options=platform_choices(sandbox), value=None,
                                       placeholder="the whole site's platform")),
        form_field("Scheduler", dcc.Dropdown(id="validate-scheduler", options=choices["scheduler"], value="easy",
                                        clearable=False)),
        form_field("Scheduler options (JSON)", dcc.Textarea(id="validate-scheduler-options",
                                                       value=scheduler_options_text("easy"),
                                                       style={"width": "100%", "height": "4em"})),
        form_field("Engine", dcc.RadioItems(id="validate-engine", options=choices["engine"], value="embedded")),
        *option_groups(parts, VALIDATE_FIELD, "validate-options"),
        html.Button("Validate", id="validate", n_clicks=0),
        html.Div(id="validate-error", className="error"),
        html.Div(id="validation-status", className="status"),
        html.Div(id="validation-result"),
        dcc.Store(id="current-validation"),
        dcc.Interval(id="validation-poll", interval=POLL_MS, disabled=True),
    ]


def fit_view(fitted: FittedOnPage, shown: str) -> html.Div:
    """What a fit wrote (``shown``: the model file as the page names it), its job types and its notes."""
    return html.Div([
        html.P(f"wrote {shown} and its held-out jobs {fitted.test_jobs.name}", id="fit-written"),
        dash_table.DataTable(id="fit-types", data=fitted.types,
                             columns=[{"name": key, "id": key} for key in fitted.types[0]] if fitted.types else [],
                             style_cell=TABLE_CELL),
        html.Details([html.Summary("What the fit kept and dropped"),
                      html.Pre("\n".join(fitted.notes), className="notes")]),
    ])


def validation_view(sandbox: Sandbox, validation_id: str) -> html.Div:
    """A finished validation: its table (deviations in %), its figures in the style of Caspart et al.'s Fig. 4, and
    links to its files (``/validations/<id>/...``)."""
    rows, figures = validation_result(sandbox, validation_id)
    base = f"/validations/{validation_id}"
    return html.Div([
        html.P("log: the held-out jobs; simulated: a random share of the simulated site's jobs, the same share; "
               "deviation: (simulated - log) / log; distance: Kolmogorov-Smirnov, or total variation for the "
               "shares; -: not recorded in the log."),
        dash_table.DataTable(id="validation-table", data=rows,
                             columns=[{"name": key, "id": key} for key in rows[0]] if rows else [],
                             style_cell=TABLE_CELL),
        html.P([html.A("validation.csv", href=f"{base}/validation.csv"), " | ",
                html.A("validation.json", href=f"{base}/validation.json")]),
        *[html.Img(src=f"{base}/figures/{name}", className="figure", style={"maxWidth": "100%"})
          for name in figures],
    ], id="validation-view")
