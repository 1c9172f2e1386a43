"""``batreplay model validate``: the command-line side of :mod:`batreplay.validation.validate`.

:func:`add_validate_command` adds ``validate`` to the ``model`` subcommands that
:func:`batreplay.sitemodels.cli.add_model_commands` makes (this layer is above it). Light imports only; the handler
imports what it uses.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from batreplay.options import declared_options
from batreplay.validation.validation_options import ValidationOptions

if TYPE_CHECKING:
    from rich.console import Console


#: The parts of a run description whose options ``model validate`` takes, as ``batreplay run`` declares them.
RUN_PARTS = ("scheduler", "engine")


def _run_values(args: argparse.Namespace) -> dict:
    """The scheduler's and the engine's run options given (declared once, :func:`batreplay.run.spec.run_options`),
    a JSON object given as text parsed by its declaration."""
    from batreplay.run.spec import FLAT_FIELDS, run_options

    values = {}
    for declaration in run_options():
        if FLAT_FIELDS.get(declaration.name, ("",))[0] in RUN_PARTS:
            value = getattr(args, declaration.name)
            if declaration.kind is dict and isinstance(value, str):
                value = declaration.parse_text(value)
            values[declaration.name] = value
    return values


def _cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from batreplay.validation.validate import validate_model
    from batreplay.workloads.resolve import resolve_workload

    options = ValidationOptions(run=_run_values(args), **{declaration.field: getattr(args, declaration.name)
                                                          for declaration in declared_options(ValidationOptions)})
    printed: list[str] = []

    def show(notes: list[str]) -> None:  # the held-out jobs' notes, before the simulation
        for note in notes:
            console.print(note, highlight=False, markup=False)
            printed.append(note)

    result = validate_model(args.model, resolve_workload(args.log), args.platform, args.out, options,
                            against=args.against, on_notes=show)
    console.print(_table(result))
    show([note for note in result.notes if note not in printed])
    console.print(f"validation.csv, validation.json, figures/ and the simulation in {result.out_dir}",
                  highlight=False, markup=False)
    return 0


def _table(result):
    """The comparisons as a rich table (values with 4 significant digits, deviations in %)."""
    from rich.table import Table

    window = f"{result.window[0]:.0f} to {result.window[1]:.0f} s"
    table = Table(title=f"validation on the held-out jobs, window {window}",
                  caption="log: the held-out jobs; model: the simulation; dev.: (model - log) / log; dist.: KS, or "
                          "total variation for shares; -: not recorded in the log")
    table.add_column("measure (unit)", no_wrap=True)
    for name in ("log", "model", "dev.", "dist."):
        table.add_column(name, justify="right", no_wrap=True)
    for row in result.rows:
        table.add_row(f"{row.measure} ({row.unit})", _number(row.measured), _number(row.simulated),
                      "-" if row.deviation is None else f"{100 * row.deviation:+.1f} %", _number(row.distance))
    return table


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def add_validate_command(models: argparse._SubParsersAction) -> None:
    """Add ``validate`` to the ``model`` subcommands."""
    validate = models.add_parser("validate", help="simulate a site model and compare it with the log's held-out jobs")
    validate.add_argument("model", help="model file written by 'batreplay model fit'")
    validate.add_argument("--log", required=True,
                          help="the SWF log the model was fitted on (a path or a fetched log's name; checksum checked)")
    validate.add_argument("--against", default=None, metavar="TEST_JOBS",
                          help="the held-out jobs (default: the model's NAME.test-jobs.csv beside it)")
    validate.add_argument("--platform", required=True, help="platform file or shipped platform name")
    from batreplay.run.spec import FLAT_FIELDS, run_options

    for declaration in run_options():  # the scheduler's and the engine's options, as batreplay run declares them
        if FLAT_FIELDS.get(declaration.name, ("",))[0] in RUN_PARTS:
            flag, settings = declaration.argument()
            if declaration.name == "scheduler":
                settings = {**settings, "required": False, "default": "easy",
                            "help": "scheduler name or file (default: easy)"}
            validate.add_argument(flag, **settings)
    for declaration in declared_options(ValidationOptions):  # --mode, --population, --seed, --warm-up
        flag, settings = declaration.argument()
        validate.add_argument(flag, **settings)
    validate.add_argument("--out", required=True, help="folder to write (must not exist)")
    validate.set_defaults(handler=_cmd_validate)
