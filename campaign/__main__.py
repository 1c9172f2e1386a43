"""``python -m batreplay.campaign run SPEC ...``: running a campaign without the rest of ``batreplay`` (reports are
``batreplay campaign report``, :mod:`batreplay.reports`, a layer above campaigns).

Same arguments and exit statuses as ``batreplay campaign ...`` (:mod:`batreplay.campaign.cli`); errors caused by
the inputs are printed as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from batreplay.campaign.cli import add_campaign_commands
from batreplay.console import make_console


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` as ``campaign`` subcommands and run the handler; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m batreplay.campaign", description=__doc__.splitlines()[0])
    campaign = add_campaign_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["campaign", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.handler(args, make_console())
    except (OSError, ValueError, RuntimeError, KeyError) as err:
        campaign.exit(2, f"batreplay campaign: error: {err}\n")


if __name__ == "__main__":
    sys.exit(main())
