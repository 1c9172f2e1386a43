"""``batreplay model fit|generate``: the command-line side of site models (``docs/site-models.md``).

:func:`add_model_commands` adds the ``model`` command to the ``batreplay`` parser; each subcommand's handler has the
signature ``handler(args, console) -> exit status`` used by :mod:`batreplay.cli`. Only light modules are imported
here (the fit's declared options, :mod:`batreplay.sitemodels.fit_options`); each handler imports what it uses.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from batreplay.sitemodels.choices import FIELD_COLUMNS
from batreplay.sitemodels.fit_options import FitOptions, fit_options

if TYPE_CHECKING:
    from rich.console import Console


def selection(text: str) -> tuple[str, list[int]]:
    """``--select FIELD=V1,V2,...`` -> ``(FIELD, [V1, V2, ...])`` (argparse type: errors become usage errors)."""
    name, sep, values = text.partition("=")
    try:
        numbers = [int(value) for value in values.split(",")] if sep else []
    except ValueError:
        numbers = []
    if name not in FIELD_COLUMNS or not numbers:
        raise argparse.ArgumentTypeError(f"{text!r}: expected FIELD=V1,V2,... with FIELD one of "
                                         f"{', '.join(FIELD_COLUMNS)} and whole numbers")
    return name, numbers


def _cmd_fit(args: argparse.Namespace, console: Console) -> int:
    from batreplay.sitemodels.fit import check_model_path, fit_site_model, save_fit
    from batreplay.sitemodels.job_types import JobTypeRule
    from batreplay.workloads.resolve import resolve_workload

    check_model_path(args.out, force=args.force)  # before the log is read
    rule = JobTypeRule.parse(args.job_types)
    select: dict[str, list[int]] = {}
    for name, values in args.select or []:
        select.setdefault(name, []).extend(values)
    options = FitOptions(select=select or None,
                         **{declaration.field: getattr(args, declaration.name) for declaration in fit_options()})
    fitted = fit_site_model(resolve_workload(args.log), rule, options)
    for note in fitted.notes:
        console.print(note, highlight=False, markup=False)
    console.print(_types_table(fitted))
    model_path, test_path = save_fit(fitted, args.out, force=args.force)
    console.print(f"wrote {model_path} and its test jobs {test_path}", highlight=False, markup=False)
    return 0


def _types_table(fitted):
    """The job types of a fit as a rich table: share, calibration jobs, mean slots, mean CPU and I/O seconds alone
    on a recorded node, their sum beside the calibration jobs' mean run time (what drawing within bins moves)."""
    from rich.table import Table

    table = Table(title="job types (means: slots; seconds alone on a recorded node: CPU, I/O, both; the "
                        "calibration jobs' run time)")
    table.add_column("type", no_wrap=True)
    for name in ("share", "jobs", "slots", "CPU s", "I/O s", "model s", "log s", "CPU-I/O rank corr."):
        table.add_column(name, justify="right")
    model = fitted.model
    speed, rate = model.reference["node_speed"], model.reference["reference_io_rate"]
    for t in model.types:
        cpu, io = t.cpu_demand.mean() / speed, t.io_demand.mean() / rate
        table.add_row(t.name, f"{t.share:.3f}", str(t.jobs), f"{t.job_slots.mean():.2f}", f"{cpu:.0f}", f"{io:.0f}",
                      f"{cpu + io:.0f}", f"{fitted.mean_run_times[t.name]:.0f}", f"{t.cpu_io_correlation:.2f}")
    return table


def _cmd_generate(args: argparse.Namespace, console: Console) -> int:
    from batreplay.sitemodels.generate import GenerateOptions, write_generated
    from batreplay.sitemodels.model_file import read_model

    options = GenerateOptions(jobs=args.jobs, days=args.days, seed=args.seed, rate_scale=args.rate_scale)
    model = read_model(args.model)
    path, log, notes = write_generated(model, options, args.out, model_path=args.model, force=args.force)
    for note in notes:
        console.print(note, highlight=False, markup=False)
    span = float(log.jobs["submission_time"].iloc[-1]) / 86_400
    console.print(f"wrote {path}: {log.n_jobs} jobs submitted over {span:.2f} days (seed {args.seed})",
                  highlight=False, markup=False)
    return 0


def add_model_commands(subparsers: argparse._SubParsersAction,
                       *more: Callable[[argparse._SubParsersAction], object]) -> argparse.ArgumentParser:
    """Add ``model fit`` and ``model generate`` to the ``batreplay`` subcommands, then each of ``more``'s (a function
    given the ``model`` subcommands, e.g. :func:`batreplay.validation.cli.add_validate_command`, of a layer above
    this one); returns the ``model`` parser."""
    model = subparsers.add_parser("model", help="site models (Caspart et al. 2019): fit one on a log, draw "
                                                "workloads from it")
    commands = model.add_subparsers(dest="model_command", required=True)
    fit = commands.add_parser("fit", help="fit a site model on a random share of a log's jobs, keep the others "
                                          "to test it")
    fit.add_argument("log", help="SWF log (.swf, .swf.gz), or the name of a log fetched with 'batreplay fetch'")
    fit.add_argument("--job-types", default="all", metavar="RULE",
                     help="how jobs are grouped into types: all, a field (" + ", ".join(FIELD_COLUMNS) + "), "
                          "thresholds FIELD:T1,T2,... on a numeric field (processors, run_time, ...), or a TOML "
                          "file (docs/site-models.md) (default: %(default)s)")
    fit.add_argument("--select", type=selection, action="append", metavar="FIELD=V1,V2",
                     help="fit on the jobs whose FIELD has one of these values only (e.g. partition=156,157, the "
                          "GridKa sites of the LCG log); repeatable (all must hold)")
    for declaration in fit_options():  # --split, --seed, --speed, --io-share...: their declarations
        flag, settings = declaration.argument()
        fit.add_argument(flag, **settings)
    fit.add_argument("--out", required=True, help="model file to write (JSON); the test jobs go beside it")
    fit.add_argument("--force", action="store_true", help="replace the model file and its test jobs if they exist")
    fit.set_defaults(handler=_cmd_fit)

    generate = commands.add_parser("generate", help="draw an open workload from a site model")
    generate.add_argument("model", help="model file written by 'batreplay model fit'")
    size = generate.add_mutually_exclusive_group(required=True)
    size.add_argument("--jobs", type=int, help="number of jobs to draw")
    size.add_argument("--days", type=float, help="days of submissions to draw")
    generate.add_argument("--seed", type=int, default=0, help="seed of the draw (default: %(default)s)")
    generate.add_argument("--rate-scale", type=float, default=1.0,
                          help="arrival rate x this factor (default: %(default)s, the site's)")
    generate.add_argument("--out", required=True, help="workload to write: .swf (SWF log) or .json (Batsim)")
    generate.add_argument("--force", action="store_true", help="replace the --out file if it exists")
    generate.set_defaults(handler=_cmd_generate)
    for add in more:
        add(commands)
    return model
