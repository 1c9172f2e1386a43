"""The ``batreplay`` command: one entry point, one subcommand per task.

- ``batreplay run``: simulate a workload (SWF or Batsim JSON) on a platform with a scheduler;
- ``batreplay sessions``: partition an SWF log into user sessions, write the session graphs and statistics;
- ``batreplay analyze``: metrics, figures and an HTML report of one or several runs;
- ``batreplay platform``: write a SimGrid cluster platform (and its scaled variants);
- ``batreplay model fit|generate|validate``: site models fitted on a log, workloads drawn from them, and their
  validation on the log's held-out jobs;
- ``batreplay campaign run|report``: experiment campaigns declared in ``expe/*.toml``;
- ``batreplay fetch``: download a Parallel Workloads Archive log into the local cache.

Errors caused by the inputs are printed as one line (``batreplay: error: ...``) with exit status 2;
``--debug`` shows the full traceback instead.

Start-up: this module and the parser import only light modules (names, choices and defaults: no pandas, numpy,
pybatsim, rich...), so that ``batreplay --help``, a subcommand's help and an argument error answer at once; each
command imports what it uses when it runs (``tests/test_startup_imports.py``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from batreplay.console import make_console

if TYPE_CHECKING:  # rich is imported where a command prints
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table


def _metrics_table(metrics: dict, title: str) -> Table:
    """The console summary of a run: the metrics the registry lists for it, with their labels and formats."""
    from rich.table import Table

    from batreplay.analysis.metric_registry import summary_rows  # lazy: pandas only after a run

    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for label, text in summary_rows(metrics):
        table.add_row(label, text)
    return table


def step_progress(console: Console, label: str, *, disable: bool = False) -> Progress:
    """A progress bar for commands made of counted steps (``on_progress(step, done, total)``), with elapsed time
    and an estimate of the time left; transient, so that it leaves nothing behind in the output."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(TextColumn(f"[bold]{label}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                    TextColumn("{task.description}"), TimeElapsedColumn(), TimeRemainingColumn(),
                    console=console, disable=disable or not console.is_terminal, transient=True)


def _step_callback(bar: Progress):
    task = bar.add_task("", total=None)

    def on_progress(step: str, done: int, total: int) -> None:
        bar.update(task, description=step, completed=done, total=total)

    return on_progress


def _cmd_run(args: argparse.Namespace, console: Console) -> int:
    from batreplay.run.spec import run_options
    from batreplay.schedulers.names import check_scheduler_name

    values = {declaration.name: getattr(args, declaration.name) for declaration in run_options()}
    for declaration in run_options():  # a JSON object given as text (argparse leaves it so): one-line errors
        if declaration.kind is dict and isinstance(values[declaration.name], str):
            values[declaration.name] = declaration.parse_text(values[declaration.name])
    if args.scheduler.strip():  # a blank name is refused by RunSpec below, with its own message
        check_scheduler_name(args.scheduler)  # an unknown name fails here, before the schedulers are imported
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from batreplay.run.runner import run
    from batreplay.run.spec import RunSpec
    from batreplay.schedulers.registry import check_scheduler_options

    check_scheduler_options(args.scheduler, values["scheduler_options"])  # before reading any input
    spec = RunSpec.build(**values)
    columns = [TextColumn("[bold]simulating"), BarColumn(), TextColumn("{task.completed}/{task.total} jobs"),
               TextColumn("t = {task.fields[now]:.0f} s"), TimeElapsedColumn()]
    with Progress(*columns, console=console, disable=args.quiet, transient=True) as bar:
        task = bar.add_task("run", total=None, now=0.0)

        def on_progress(now: float, done: int, total: int) -> None:
            bar.update(task, completed=done, total=total, now=now)

        def on_notes(notes: list[str]) -> None:  # before the simulation starts
            for note in notes:
                bar.console.print(note, highlight=False)

        result = run(spec, on_progress=on_progress, on_notes=on_notes)
    console.print(_metrics_table(result.metrics, f"{spec.scheduler.name} on {Path(spec.platform).stem}"))
    if spec.metrics.warm_up:
        console.print(f"metrics over t = {result.metrics['span_start']:g} to {result.metrics['span_end']:g} s (jobs "
                      f"submitted then): the first {spec.metrics.warm_up:g} s after the first submission left out "
                      "(--warm-up)")
    console.print(f"Batsim outputs in {result.out_dir} ({result.messages} Batsim messages, "
                  f"{result.wall_seconds:.1f} s)")
    return 0


def _cmd_sessions(args: argparse.Namespace, console: Console) -> int:
    from batreplay.replay.session_source import write_sessions

    from batreplay.workloads.resolve import resolve_workload

    workload = resolve_workload(args.workload)  # a path or a fetched log's name
    with step_progress(console, "sessions") as bar:
        index, stats, notes = write_sessions(workload, args.method, args.threshold, args.out,
                                             max_jobs=args.max_jobs, zero_runtime=args.zero_runtime,
                                             on_progress=_step_callback(bar))
    for note in notes:
        console.print(note, highlight=False)
    console.print(stats.summary(), highlight=False)
    console.print(f"session graphs of {len(stats.per_user)} users in {index.parent} (index: {index.name})")
    return 0


def _cmd_analyze(args: argparse.Namespace, console: Console) -> int:
    from batreplay.analysis.analyze_command import analyze
    from batreplay.workloads.resolve import resolve_workload

    swf_log = None if args.swf is None else resolve_workload(args.swf, option="--swf")  # a path or a fetched log
    with step_progress(console, "analyzing") as bar:
        report = analyze(args.run_dirs, Path(args.out), nb_resources=args.nb_resources, tau=args.tau,
                         swf_log=swf_log, window=args.window_days, gantt_window=args.gantt_window,
                         adequacy_requested_times=args.adequacy_requested_times, on_progress=_step_callback(bar),
                         names=args.names)
    console.print(f"tables, figures/ and report in {report.parent}; open {report}")
    return 0


def _cmd_platform(args: argparse.Namespace, console: Console) -> int:
    from batreplay.platforms.generate import platform_command
    from batreplay.platforms.node_types import read_node_types_file

    if args.nodes is None and args.node_types is None:
        raise ValueError("batreplay platform: give --nodes N (a homogeneous cluster) or --node-types FILE")
    types, storage_rate = None, args.storage_rate
    if args.node_types is not None:
        for option, value in (("--io-rate", args.io_rate), ("--storage-rate", args.storage_rate)):
            if value is not None:
                raise ValueError(f"{option} and --node-types: the node types file gives the I/O (key 'io_rate' of "
                                 "each [[node_types]], [storage] rate); leave out " + option)
        machine = read_node_types_file(args.node_types)
        types, storage_rate = list(machine.node_types), machine.storage_rate

    def note(text: str) -> None:  # a variant's rounded node count, in one line
        console.print(f"note: {text}", highlight=False, markup=False)

    for path in platform_command(args.nodes, args.speed, args.out, variants=args.variants, node_types=types,
                                 on_note=note, io_rate=args.io_rate, storage_rate=storage_rate):
        console.print(f"wrote {path}", highlight=False, markup=False)
    return 0


def _cmd_fetch(args: argparse.Namespace, console: Console) -> int:
    from batreplay.workloads.pwa import fetch_log

    path = fetch_log(args.log, cache_dir=Path(args.cache) if args.cache else None, sha256=args.sha256,
                     progress=console)
    console.print(str(path))
    return 0


def _cmd_ui(args: argparse.Namespace, console: Console) -> int:
    import secrets

    from batreplay.ui.app import ALL_ADDRESSES, LOOPBACK_HOSTS, UiConfig, serve

    if args.workers < 1:
        raise ValueError(f"--workers {args.workers}: at least 1 run at a time")
    loopback = args.host in LOOPBACK_HOSTS
    token = args.token or (None if loopback else secrets.token_urlsafe(24))
    campaigns = args.campaigns if args.campaigns is not None else ("expe" if Path("expe").is_dir() else None)
    config = UiConfig(runs_dir=Path(args.runs_dir), allowed=[Path(folder) for folder in args.allow],
                      token=token, workers=args.workers, campaigns=Path(campaigns) if campaigns else None,
                      dask_address=args.dask_address)

    def ready(url: str) -> None:
        console.print(f"batreplay ui: open {url}", highlight=False, soft_wrap=True)
        if args.host in ALL_ADDRESSES:
            console.print(f"listening on every address of this machine (--host {args.host}): from elsewhere, open it "
                          "by a name or address of this machine that reaches it", highlight=False, soft_wrap=True)
        if token and not loopback:
            console.print("access token above: anyone with it can run simulations here", highlight=False)
        console.print("runs in " + str(Path(args.runs_dir).resolve()) + "; stop with Ctrl-C", highlight=False)

    try:
        serve(config, host=args.host, port=args.port, on_ready=ready)
    except KeyboardInterrupt:
        pass
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``batreplay`` command: one subparser per command. Light modules only (the names,
    choices and defaults the layers define, see the module docstring)."""
    parser = argparse.ArgumentParser(prog="batreplay", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    commands = parser.add_subparsers(dest="command", required=True)
    from batreplay.campaign.cli import add_campaign_commands
    from batreplay.reports.cli import add_report_command
    from batreplay.sitemodels.cli import add_model_commands
    from batreplay.validation.cli import add_validate_command

    for add in (_add_run_command, _add_sessions_command, _add_analyze_command, _add_platform_command,
                lambda commands: add_model_commands(commands, add_validate_command),
                lambda commands: add_campaign_commands(commands, add_report_command), _add_ui_command,
                _add_fetch_command):
        add(commands)
    return parser


def _add_run_command(commands) -> None:
    """``batreplay run``: one flag per run option, from its declaration (:func:`batreplay.run.spec.run_options`)."""
    from batreplay.run.spec import run_options

    run = commands.add_parser("run", help="simulate a workload with a scheduler on a platform")
    for declaration in run_options():  # each option declared once, in its part (batreplay.run.spec)
        flag, settings = declaration.argument()
        run.add_argument(flag, **settings)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(handler=_cmd_run)


def _add_sessions_command(commands) -> None:
    """``batreplay sessions``."""
    from batreplay.workloads.choices import DEFAULT_ZERO_RUNTIME, ZERO_RUNTIME_CHOICES

    sessions = commands.add_parser("sessions", help="cut an SWF log into user sessions and write session graphs")
    sessions.add_argument("--workload", required=True,
                          help="SWF log (.swf or .swf.gz), or the name of a log fetched with 'batreplay fetch'")
    sessions.add_argument("--method", choices=["arrival", "last", "max"], default="arrival",
                          help="session delimitation (Madon et al. 2024; Zakay & Feitelson) (default: %(default)s)")
    sessions.add_argument("--threshold", type=float, default=60.0, help="threshold in minutes (default: %(default)s)")
    sessions.add_argument("--max-jobs", type=int, default=None, help="only the first N jobs of the log")
    sessions.add_argument("--zero-runtime", choices=ZERO_RUNTIME_CHOICES, default=DEFAULT_ZERO_RUNTIME,
                          help="jobs whose run time is 0 s: left out of the sessions (drop) or kept with a run time "
                               "of 1 s (min), as 'run --zero-runtime' (default: %(default)s)")
    sessions.add_argument("--out", required=True, help="directory for the graphs (JSON) and statistics")
    sessions.set_defaults(handler=_cmd_sessions)


def _add_analyze_command(commands) -> None:
    """``batreplay analyze``."""
    analyze = commands.add_parser("analyze", help="metrics, figures and an HTML report of runs, side by side")
    analyze.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                         help="batreplay run directory or Batsim output folder")
    analyze.add_argument("--out", required=True, help="output folder (metrics.csv/.json, figures/, report.html)")
    analyze.add_argument("--names", nargs="+", default=None, metavar="NAME",
                         help="what tables and figures call the runs, one distinct name per RUN_DIR in order "
                              "(default: the folder names, with parent folders added until they differ)")
    analyze.add_argument("--swf", default=None,
                         help="recorded SWF log the runs replayed (a path or a fetched log's name): adds the adequacy "
                              "table P (Baranov et al. 2018)")
    analyze.add_argument("--nb-resources", type=int, default=None,
                         help="compute nodes (default: run.json's platform, out_schedule.csv)")
    analyze.add_argument("--window-days", type=float, nargs=2, metavar=("START", "LENGTH"), default=None,
                         help="metrics over [START, START + LENGTH] days of simulated time (the Gantt chart shows "
                              "its first 24 h); default: each run's whole span after its --warm-up")
    analyze.add_argument("--gantt-window", type=float, nargs=2, metavar=("START", "LENGTH"), default=None,
                         help="Gantt chart over [START, START + LENGTH] days of simulated time (default: the first "
                              "24 h of --window-days, else of the runs)")
    analyze.add_argument("--adequacy-requested-times", choices=("run", "log"), default="run",
                         help="requested times compared with the --swf log: 'run' (default) leaves out, with a note, "
                              "runs whose walltimes differ from the log's (P of Baranov et al. 2018 compares runs of "
                              "the same job stream); 'log' uses the log's requested times for both")
    analyze.add_argument("--tau", type=float, default=10.0,
                         help="bounded slowdown threshold in seconds (default: %(default)g)")
    analyze.set_defaults(handler=_cmd_analyze)


def _add_platform_command(commands) -> None:
    """``batreplay platform``."""
    from batreplay.platforms.shipped import REFERENCE_NODE_SPEED

    plat = commands.add_parser("platform", help="write a SimGrid cluster platform that Batsim 4.2 accepts")
    plat.add_argument("--nodes", type=int, default=None, help="number of compute nodes (a homogeneous cluster)")
    plat.add_argument("--node-types", default=None, metavar="FILE",
                      help="TOML file of [[node_types]] tables (name, count, cores, slots, speed in flop/s per "
                           "core): one cluster per type, instead of --nodes")
    plat.add_argument("--speed", type=float, default=None,
                      help=f"node speed in flop/s, with --nodes (default: {REFERENCE_NODE_SPEED:g}); node types give "
                           "their own")
    plat.add_argument("--io-rate", type=float, default=None, metavar="BYTES_PER_S",
                      help="with --nodes: bytes/s between each node and a storage host (a platform with I/O links; "
                           "node types give their own io_rate)")
    plat.add_argument("--storage-rate", type=float, default=None, metavar="BYTES_PER_S",
                      help="with --io-rate: bytes/s of the storage host's link, shared by all nodes' I/O (default: "
                           "nodes x io rate)")
    plat.add_argument("--out", required=True, help="platform file to write (.xml)")
    plat.add_argument("--variants", action="store_true",
                      help="also write the node count x2, /2 and node speed x2, /2 variants")
    plat.set_defaults(handler=_cmd_platform)


def _add_ui_command(commands) -> None:
    """``batreplay ui``."""
    ui = commands.add_parser("ui", help="a local web app to launch, watch and browse simulations")
    ui.add_argument("--runs-dir", default="runs", metavar="DIR",
                    help="where the app keeps its runs, uploads and generated platforms (default: %(default)s)")
    ui.add_argument("--allow", action="append", default=[], metavar="DIR",
                    help="a folder whose files (workloads, platforms, node types, scheduler files) the form may use; "
                         "repeatable (the runs folder and the log cache always are)")
    ui.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default: %(default)s, this machine only); any other needs the token, "
                         "generated and printed unless --token is given")
    ui.add_argument("--port", type=int, default=8050, help="TCP port (default: %(default)s; 0: a free one)")
    ui.add_argument("--token", default=None, help="access token to require (default: none on 127.0.0.1)")
    ui.add_argument("--workers", type=int, default=1, help="runs simulated at once (default: %(default)s)")
    ui.add_argument("--campaigns", default=None, metavar="DIR",
                    help="folder of campaign files for the Campaigns page (default: expe when it is in the current "
                         "folder); their runs go under the runs folder")
    ui.add_argument("--dask-address", default=None, metavar="ADDRESS",
                    help="a Dask scheduler (tcp://HOST:8786) the Campaigns page may run campaigns on")
    ui.set_defaults(handler=_cmd_ui)


def _add_fetch_command(commands) -> None:
    """``batreplay fetch``."""
    fetch = commands.add_parser("fetch", help="download a Parallel Workloads Archive log into the cache")
    fetch.add_argument("log", help="catalogue name (e.g. KTH-SP2-1996-2.1-cln) or URL")
    fetch.add_argument("--cache", default=None,
                       help="folder for downloaded logs (default: $BATREPLAY_CACHE/pwa, else "
                            "$XDG_CACHE_HOME/batreplay/pwa, else ~/.cache/batreplay/pwa)")
    fetch.add_argument("--sha256", default=None, help="expected checksum of the file")
    fetch.set_defaults(handler=_cmd_fetch)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``batreplay`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    console = make_console()
    try:
        return args.handler(args, console)
    except (OSError, ValueError, RuntimeError, KeyError) as err:
        if args.debug:
            raise
        parser.exit(2, f"batreplay: error: {error_message(err)}\n")


def error_message(err: BaseException) -> str:
    """The text of a command-line error: the exception's message, without Python's ``[Errno N]`` prefix for a
    system error (``PATH: reason``), and a bare ``KeyError('x')`` (no sentence, an internal slip) said as such."""
    if isinstance(err, KeyError):
        key = err.args[0] if err.args else None
        if isinstance(key, str) and " " in key.strip():
            return key  # our own KeyError("unknown platform ...") carries a sentence
        return (f"unexpected KeyError {key!r}: an internal error of batreplay, please report it "
                "(batreplay --debug shows the traceback)")
    if isinstance(err, OSError) and err.strerror and err.filename is not None and str(err).startswith("[Errno"):
        paths = f"{err.filename} -> {err.filename2}" if err.filename2 is not None else f"{err.filename}"
        return f"{paths}: {err.strerror}"
    return str(err)


if __name__ == "__main__":
    sys.exit(main())
