"""``batreplay campaign run``: the command-line side of campaigns.

:func:`add_campaign_commands` adds the ``campaign`` command to the ``batreplay`` parser, with ``run`` and the
subcommands of the layers above given to it (``campaign report``: :func:`batreplay.reports.cli.add_report_command`;
this layer does not import them); each subcommand's handler has the signature ``handler(args, console) -> exit
status`` used by :mod:`batreplay.cli`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from batreplay.campaign.executors import EXECUTORS

if TYPE_CHECKING:
    from rich.console import Console

#: Exit status after Ctrl-C (128 + SIGINT), and when some instances failed.
EXIT_INTERRUPTED = 130
EXIT_FAILED_INSTANCES = 1


def _cmd_campaign_run(args: argparse.Namespace, console: Console) -> int:
    from batreplay.campaign.executors import make_executor
    from batreplay.campaign.runner import run_campaign
    from batreplay.campaign.spec import load_campaign

    spec = load_campaign(args.spec, output_root=args.output_root)
    if args.dry_run:
        for instance in spec.select(args.only):
            console.print(instance.id, highlight=False)
        return 0
    executor = make_executor(args.executor, workers=args.workers, scheduler_address=args.scheduler_address)
    try:
        summary = run_campaign(spec, executor=executor, only=args.only, console=console,
                               show_progress=not args.quiet)
    except KeyboardInterrupt:
        console.print(f"interrupted: finished instances are kept in {spec.output_root}; run the same command "
                      f"again to run the others", highlight=False)
        return EXIT_INTERRUPTED
    console.print(f"campaign {spec.name}: {summary.already_finished + len(summary.done)}/{summary.total} finished "
                  f"({len(summary.done)} in this run), {len(summary.failed)} failed, wall time "
                  f"{summary.wall_seconds:.1f} s", highlight=False)
    if summary.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED_INSTANCES if summary.failed else 0


def add_campaign_commands(subparsers: argparse._SubParsersAction,
                          *more: Callable[[argparse._SubParsersAction], object]) -> argparse.ArgumentParser:
    """Add ``campaign run`` to the ``batreplay`` subcommands, then each of ``more``'s subcommands (a function
    given the ``campaign`` subcommands, e.g. :func:`batreplay.reports.cli.add_report_command`); returns the
    ``campaign`` parser. Handlers are set with ``set_defaults(handler=...)``."""
    campaign = subparsers.add_parser("campaign", help="run and report experiment campaigns (TOML specs, see expe/)")
    commands = campaign.add_subparsers(dest="campaign_command", required=True)

    run = commands.add_parser("run", help="run the instances of a campaign that are not finished yet")
    run.add_argument("spec", help="campaign file (TOML), e.g. expe/quick.toml")
    run.add_argument("--workers", type=int, default=None,
                     help="local worker processes (default: every core); --executor local only")
    run.add_argument("--executor", choices=list(EXECUTORS), default="local",
                     help="where instances run: local processes, or an existing Dask cluster (default: %(default)s)")
    run.add_argument("--scheduler-address", default=None,
                     help="Dask scheduler address for --executor dask (e.g. tcp://127.0.0.1:8786)")
    run.add_argument("--only", default=None, metavar="PATTERN",
                     help="only instances whose id matches PATTERN (shell wildcards; a plain word matches anywhere)")
    run.add_argument("--output-root", default=None,
                     help="folder of the run directories (default: the spec's output_root)")
    run.add_argument("--dry-run", action="store_true", help="list the instance ids and stop")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(handler=_cmd_campaign_run)
    for add in more:
        add(commands)
    return campaign
