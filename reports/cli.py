"""``batreplay campaign report``: the command-line side of campaign reports.

:func:`add_report_command` adds ``report`` to the subcommands of ``batreplay campaign``
(:func:`batreplay.campaign.cli.add_campaign_commands` takes it, so that the campaign layer does not import the
reports); its handler has the signature ``handler(args, console) -> exit status`` used by :mod:`batreplay.cli`.
Light at import, as every parser module (``tests/test_startup_imports.py``): the report's libraries are imported
when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def _cmd_campaign_report(args: argparse.Namespace, console: Console) -> int:
    from batreplay.campaign.spec import load_campaign
    from batreplay.reports.report import build_report

    spec = load_campaign(args.spec, output_root=args.output_root)
    result = build_report(spec, Path(args.out) if args.out else None, console=console)
    for line in result.notes:
        console.print(line, highlight=False)
    console.print(f"report of {spec.name}: {result.instances_found}/{result.instances_total} instances; "
                  f"{result.html}", highlight=False)
    return 0


def add_report_command(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``report`` to ``commands``, the subcommands of ``batreplay campaign``; returns its parser. The handler
    is set with ``set_defaults(handler=...)``."""
    report = commands.add_parser("report", help="gather a campaign's instances into tables, figures and HTML")
    report.add_argument("spec", help="campaign file (TOML)")
    report.add_argument("--out", default=None, help="report folder (default: the spec's report_dir)")
    report.add_argument("--output-root", default=None,
                        help="folder of the run directories (default: the spec's output_root)")
    report.set_defaults(handler=_cmd_campaign_report)
    return report
