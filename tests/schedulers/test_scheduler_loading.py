"""Scheduler files, scheduler options and the decision process's failures, as a user meets them (issue 9).

- item 9: a scheduler that exits (``sys.exit``, ``raise SystemExit``) anywhere makes the run fail, with the
  embedded engine, with a real Batsim and through the feedback broker;
- item 13: a scheduler file with a SyntaxError or an ImportError, or a scheduler that raises while the
  simulation runs, gives one line naming the file and the line, pointing to ``--debug``;
- item 14: ``--scheduler-options`` must be a JSON object; unknown keys of a built-in scheduler are refused with
  the known keys; the options of a scheduler file are passed through unchecked;
- item 16: ``--sessions`` errors name the option and what is expected; failures inside pybatsim are explained
  (which job, which event, likely cause).

Every command-line case goes through :func:`batreplay.cli.main` on the first 50 jobs of KTH-SP2 and checks the
exit status 2 and a single ``batreplay: error:`` line.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from batreplay.cli import main
from batreplay.schedulers import registry
from batreplay.schedulers.registry import SCHEDULERS, load_scheduler
from conftest import GOLDEN, WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
DELAYS = GOLDEN / "delays"
MARK = "# <- here"


def scheduler_file(directory: Path, stem: str, body: str, header: str = "") -> tuple[Path, int]:
    """Write a pybatsim scheduler file ``directory/stem.py`` whose class (named after the file) has ``body``.

    Returns the path and the number of the line marked with ``# <- here`` (0 if none)."""
    class_name = stem[:1].upper() + stem[1:]
    text = ("import sys\n"
            "from batsim.batsim import BatsimScheduler\n"
            "from batreplay.schedulers.easy import Easy\n"
            + textwrap.dedent(header)
            + f"\n\nclass {class_name}(Easy):\n"
            + textwrap.indent(textwrap.dedent(body), "    "))
    path = directory / f"{stem}.py"
    path.write_text(text)
    lines = [n for n, line in enumerate(text.splitlines(), start=1) if MARK in line]
    return path, (lines[0] if lines else 0)


def run_cli(tmp_path: Path, capsys, scheduler: str | Path, *extra: str, max_jobs: int = 50) -> tuple[int, str]:
    """``batreplay run`` on the first jobs of KTH-SP2; returns (exit status, standard error)."""
    out = tmp_path / "run"
    argv = ["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", str(scheduler),
            "--max-jobs", str(max_jobs), "--out", str(out), "--quiet", *extra]
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code
    return status, capsys.readouterr().err


def one_error_line(status: int, err: str) -> str:
    """The single error line of a failed command, checked."""
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("batreplay: error: ")
    return lines[0]


def assert_nothing_written(tmp_path: Path) -> None:
    assert not (tmp_path / "run").exists()
    assert not list(tmp_path.glob(".run.*.tmp")), "a staging directory was left behind"


@pytest.fixture(autouse=True)
def _needs_the_log():
    if not KTH.is_file():
        pytest.skip(f"shared workload {KTH} not found")


# ------------------------------------------------------------------------------------------------ item 9: exits

EXITS = {
    "onSimulationBegins": """
        def onSimulationBegins(self):
            sys.exit(0)  # <- here
        """,
    "onJobSubmission": """
        def onJobSubmission(self, job):
            sys.exit(0)  # <- here
        """,
    "onNoMoreEvents": """
        def onNoMoreEvents(self):
            super().onNoMoreEvents()
            if self.bs.time() > 0:
                sys.exit()  # <- here
        """,
    "onJobCompletion": """
        def onJobCompletion(self, job):
            raise SystemExit(0)  # <- here
        """,
    "onSimulationEnds": """
        def onSimulationEnds(self):
            sys.exit("done")  # <- here
        """,
    "helper": """
        def onJobSubmission(self, job):
            self.leave()
            super().onJobSubmission(job)

        def leave(self):
            sys.exit(0)  # <- here
        """,
}


@pytest.mark.parametrize("hook", sorted(EXITS))
def test_a_scheduler_that_exits_fails_the_run(tmp_path, capsys, hook):
    path, line = scheduler_file(tmp_path, "exiting", EXITS[hook])
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}" in error
    assert "exited" in error and "before the simulation ended" in error
    assert_nothing_written(tmp_path)


@pytest.mark.parametrize("where", ["module", "__init__"])
def test_a_scheduler_that_exits_while_loaded_fails_the_run(tmp_path, capsys, where):
    if where == "module":
        path, line = scheduler_file(tmp_path, "exiting", "pass\n", header="sys.exit(0)  # <- here\n")
    else:
        path, line = scheduler_file(tmp_path, "exiting", """
            def __init__(self, options):
                sys.exit(0)  # <- here
            """)
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}" in error and "exit" in error
    assert_nothing_written(tmp_path)


def test_an_exit_through_the_feedback_broker_fails_the_run(tmp_path, capsys):
    path, line = scheduler_file(tmp_path, "exiting", EXITS["onJobSubmission"])
    error = one_error_line(*run_cli(tmp_path, capsys, path, "--replay", "feedback", "--sessions", "arrival:60"))
    assert f"{path}, line {line}" in error and "before the simulation ended" in error
    assert_nothing_written(tmp_path)


@pytest.mark.slow
def test_the_launcher_turns_an_exit_into_an_error_and_stops_batsim(tmp_path):
    from batreplay.realbatsim.launcher import run_with_batsim
    from batreplay.schedulers.failures import DecisionProcessError
    from batsim_doubles import wait_until_gone, write_fake_batsim

    (tmp_path / "bin").mkdir()
    fake = write_fake_batsim(tmp_path / "bin")
    scheduler = load_scheduler("easy")

    def leave(job):
        raise SystemExit(0)

    scheduler.onJobSubmission = leave
    with pytest.raises(DecisionProcessError, match="before the simulation ended"):
        run_with_batsim(DELAYS / "platform.xml", DELAYS / "workload.json", scheduler, tmp_path / "out",
                        batsim_path=fake, timeout=120.0)
    pid = json.loads((tmp_path / "out" / "fake_batsim_pids.json").read_text())["batsim"]
    assert wait_until_gone(pid, 30.0), "batsim survived the decision process's exit"


def test_an_exit_with_a_real_batsim_fails_the_run(tmp_path, capsys, real_batsim):
    path, line = scheduler_file(tmp_path, "exiting", EXITS["onJobSubmission"])
    error = one_error_line(*run_cli(tmp_path, capsys, path, "--engine", "batsim"))
    assert f"{path}, line {line}" in error and "before the simulation ended" in error
    assert_nothing_written(tmp_path)


def test_an_exception_with_a_real_batsim_is_one_line(tmp_path, capsys, real_batsim):
    path, line = scheduler_file(tmp_path, "broken", """
        def onJobSubmission(self, job):
            return 1 / 0  # <- here
        """)
    error = one_error_line(*run_cli(tmp_path, capsys, path, "--engine", "batsim"))
    assert f"{path}, line {line}, in onJobSubmission" in error and "ZeroDivisionError" in error
    assert "--debug" in error
    assert_nothing_written(tmp_path)


# ------------------------------------------------------------------------ item 13: broken files, raising code

def test_a_syntax_error_names_the_file_and_line(tmp_path, capsys):
    path, line = scheduler_file(tmp_path, "syntax", """
        def onJobSubmission(self, job)  # <- here
            pass
        """)
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}" in error and "SyntaxError" in error and "--debug" in error
    assert_nothing_written(tmp_path)


def test_an_import_error_names_the_file_and_the_import_line(tmp_path, capsys):
    path, line = scheduler_file(tmp_path, "importing", "pass\n",
                                header="import numpy\nimport no_such_module_for_batreplay  # <- here\n")
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}" in error and "no_such_module_for_batreplay" in error and "--debug" in error
    assert_nothing_written(tmp_path)


def test_a_syntax_error_in_an_imported_module_names_both_files(tmp_path, capsys):
    helper = tmp_path / "helper_of_batreplay_test.py"
    helper.write_text("x = 1\ny = (\n")
    path, line = scheduler_file(tmp_path, "importing", "pass\n", header=textwrap.dedent(f"""
        sys.path.insert(0, {str(tmp_path)!r})
        import helper_of_batreplay_test  # <- here
        """))
    try:
        error = one_error_line(*run_cli(tmp_path, capsys, path))
    finally:
        import sys

        sys.path.remove(str(tmp_path))
    assert f"{path}, line {line}" in error and str(helper) in error and "SyntaxError" in error


def test_an_error_in_the_constructor_names_the_line(tmp_path, capsys):
    path, line = scheduler_file(tmp_path, "constructing", """
        def __init__(self, options):
            super().__init__(options)
            self.depth = options["depth"]  # <- here
        """)
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}, in __init__" in error and "KeyError" in error and "'depth'" in error


RAISES = {
    "onJobSubmission": ("""
        def onJobSubmission(self, job):
            return 1 / 0  # <- here
        """, "ZeroDivisionError: division by zero", "JOB_SUBMITTED of job w0!"),
    "onNoMoreEvents": ("""
        def onNoMoreEvents(self):
            super().onNoMoreEvents()
            if self.bs.time() > 0:
                self.nothing.here  # <- here
        """, "AttributeError", "end of Batsim's message"),
    "helper": ("""
        def onJobCompletion(self, job):
            self.account(job)
            super().onJobCompletion(job)

        def account(self, job):
            {}[job.id]  # <- here
        """, "KeyError", "JOB_COMPLETED of job w0!"),
    "type error": ("""
        def onSimulationBegins(self):
            super().onSimulationBegins()
            len(3)  # <- here
        """, "TypeError", "SIMULATION_BEGINS"),
}


@pytest.mark.parametrize("case", sorted(RAISES))
def test_an_exception_in_the_scheduler_is_one_line_naming_the_user_line(tmp_path, capsys, case):
    body, what, event = RAISES[case]
    path, line = scheduler_file(tmp_path, "broken", body)
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}" in error and what in error and event in error
    assert "--debug" in error
    assert_nothing_written(tmp_path)


def test_debug_shows_the_original_traceback(tmp_path):
    from batreplay.schedulers.failures import DecisionProcessError, SchedulerLoadError

    path, _ = scheduler_file(tmp_path, "broken", RAISES["onJobSubmission"][0])
    argv = ["--debug", "run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", str(path),
            "--max-jobs", "50", "--out", str(tmp_path / "run"), "--quiet"]
    with pytest.raises(DecisionProcessError) as caught:
        main(argv)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)
    syntax, _ = scheduler_file(tmp_path, "syntax", "def f(:\n")
    argv[argv.index(str(path))] = str(syntax)
    with pytest.raises(SchedulerLoadError) as caught:
        main(argv)
    assert isinstance(caught.value.__cause__, SyntaxError)


def test_errors_of_the_engine_are_not_blamed_on_the_scheduler(tmp_path, capsys):
    path, _ = scheduler_file(tmp_path, "outside", """
        def onJobSubmission(self, job):
            from procset import ProcSet
            job.allocation = ProcSet(5000)
            self.bs.execute_jobs([job])
        """)
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert "EXECUTE_JOB" in error and "outside resources" in error
    assert "--debug" not in error


# ------------------------------------------------------------------------------------------- item 14: options

@pytest.mark.parametrize("text", ["[1]", "3", '"easy"', "null", "true"])
def test_scheduler_options_must_be_a_json_object(tmp_path, capsys, text):
    error = one_error_line(*run_cli(tmp_path, capsys, "easy", "--scheduler-options", text))
    assert "--scheduler-options" in error and "JSON object" in error
    assert_nothing_written(tmp_path)


def test_bad_json_in_scheduler_options_names_the_option_and_position(tmp_path, capsys):
    error = one_error_line(*run_cli(tmp_path, capsys, "easy", "--scheduler-options", '{"a": 1,\n oops}'))
    assert "--scheduler-options" in error and "line 2 column 2" in error
    assert_nothing_written(tmp_path)


def test_builtin_schedulers_declare_their_options():
    for name, cls in SCHEDULERS.items():
        assert isinstance(cls.OPTIONS, dict), name
        for key, declared in cls.OPTIONS.items():
            default, doc = declared
            assert isinstance(key, str) and isinstance(doc, str) and doc, (name, key)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_unknown_options_of_a_builtin_scheduler_are_refused(name):
    with pytest.raises(ValueError, match=f"scheduler {name}: unknown option 'depth'") as caught:
        load_scheduler(name, {"depth": 3})
    message = str(caught.value)
    known = list(SCHEDULERS[name].OPTIONS)  # listed as declared
    assert (f"known options: {', '.join(known)}" in message) if known else ("no options" in message)


def test_unknown_options_on_the_command_line(tmp_path, capsys):
    error = one_error_line(*run_cli(tmp_path, capsys, "conservative", "--scheduler-options", '{"depth": 3}'))
    assert "unknown option 'depth'" in error and "conservative" in error
    assert_nothing_written(tmp_path)


def test_declared_options_get_their_defaults_and_unknown_ones_are_listed(monkeypatch):
    from batreplay.schedulers.registry import check_scheduler_options

    class Tuned(SCHEDULERS["easy"]):
        OPTIONS = {"depth": (2, "how deep to look, jobs"), "greedy": (False, "start anything that fits")}

    monkeypatch.setitem(registry.SCHEDULERS, "tuned", Tuned)
    assert check_scheduler_options("tuned", {"greedy": True}) == {"depth": 2, "greedy": True}
    assert load_scheduler("tuned", {"depth": 5}).options == {"depth": 5, "greedy": False}
    with pytest.raises(ValueError, match=r"unknown option 'dpeth'.*known options: depth, greedy"):
        load_scheduler("tuned", {"dpeth": 5})
    with pytest.raises(ValueError, match="scheduler options must be a JSON object"):
        load_scheduler("tuned", [("depth", 5)])


def test_options_of_a_scheduler_file_are_passed_unchecked(tmp_path):
    path, _ = scheduler_file(tmp_path, "mine", "pass\n")
    options = {"anything": [1, 2], "depth": 3}
    assert load_scheduler(path, options).options == options


# ------------------------------------------------------------------------------- item 16: sessions, pybatsim

def test_empty_sessions_option_is_explained(tmp_path, capsys):
    error = one_error_line(*run_cli(tmp_path, capsys, "easy", "--replay", "feedback", "--sessions", ""))
    assert "--sessions" in error and "arrival:60" in error and "Errno" not in error


def test_sessions_directory_without_index_is_explained(tmp_path, capsys):
    folder = tmp_path / "graphs"
    folder.mkdir()
    error = one_error_line(*run_cli(tmp_path, capsys, "easy", "--replay", "feedback", "--sessions", str(folder)))
    assert f"--sessions {folder}" in error and "index.json" in error and "batreplay sessions" in error
    assert "Errno" not in error


def test_sessions_directory_with_a_missing_or_unreadable_user_file(tmp_path, capsys):
    folder = tmp_path / "graphs"
    assert main(["sessions", "--workload", str(KTH), "--max-jobs", "50", "--out", str(folder)]) == 0
    user_file = sorted(folder.glob("user_*.json"))[0]
    user_file.write_bytes(b'{"format": "\xff\xfe"}')
    error = one_error_line(*run_cli(tmp_path, capsys, "easy", "--replay", "feedback", "--sessions", str(folder)))
    assert f"--sessions {folder}" in error and user_file.name in error and "UTF-8" in error
    user_file.unlink()
    error = one_error_line(*run_cli(tmp_path, capsys, "easy", "--replay", "feedback", "--sessions", str(folder)))
    assert f"--sessions {folder}" in error and user_file.name in error and "Errno" not in error


def test_an_unknown_job_id_given_to_pybatsim_is_explained(tmp_path, capsys):
    path, line = scheduler_file(tmp_path, "rejecting", """
        def onJobSubmission(self, job):
            self.bs.reject_jobs_by_id(["w0!nope"])  # <- here
        """)
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}, in onJobSubmission" in error
    assert "job 'w0!nope'" in error and "never submitted" in error and "JOB_SUBMITTED of job w0!" in error
    assert "KeyError" in error


def test_a_pybatsim_assertion_is_explained(tmp_path, capsys):
    path, line = scheduler_file(tmp_path, "unallocated", """
        def onJobSubmission(self, job):
            self.bs.execute_jobs([job])  # <- here
        """)
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}, in onJobSubmission" in error
    assert "pybatsim" in error and "job.allocation is not None" in error and "ProcSet" in error


def test_a_failure_inside_pybatsim_on_a_batsim_message_names_the_event():
    """A Batsim message pybatsim cannot handle (the completion of a job it never saw submitted)."""
    import batsim.batsim as pybatsim

    from batreplay.schedulers.failures import DecisionProcessError, decision_process_guard
    from batsim_doubles import transcript_pairs

    begins = transcript_pairs(DELAYS)[0][0]
    messages = [begins, {"now": 12.5, "events": [{"timestamp": 12.5, "type": "JOB_COMPLETED", "data": {
        "job_id": "w0!77", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0}}]}]

    class Network:
        def __init__(self, *args, **kwargs):
            pass

        def bind(self):
            pass

        def recv(self, blocking=False):
            return messages.pop(0)

        def send(self, message):
            pass

    scheduler = load_scheduler("easy")
    with pytest.raises(DecisionProcessError) as caught:
        with decision_process_guard():
            original = pybatsim.NetworkHandler
            pybatsim.NetworkHandler = Network
            try:
                bs = pybatsim.Batsim(scheduler, network_endpoint="test", timeout=0)
            finally:
                pybatsim.NetworkHandler = original
            bs.start()
    message = str(caught.value)
    assert "\n" not in message
    assert "JOB_COMPLETED of job w0!77 at t = 12.5 s" in message and "KeyError" in message
    assert "never submitted" in message


def test_a_feedback_run_prints_no_pybatsim_warning(tmp_path, capsys, caplog):
    """pybatsim warns at every feedback run that dynamic registration is enabled (the broker handles it):
    that warning would come before the one error line of a failed run."""
    path, _ = scheduler_file(tmp_path, "exiting", EXITS["onJobSubmission"])
    with caplog.at_level("WARNING"):
        one_error_line(*run_cli(tmp_path, capsys, path, "--replay", "feedback"))
    assert not [r for r in caplog.records if "Dynamic registration" in r.getMessage()]


def test_a_scheduler_installed_as_a_package_is_named_by_its_hook(tmp_path, capsys, monkeypatch):
    """A scheduler from an installed package (site-packages) has no frame of "user code": the message names
    the hook method pybatsim called."""
    from batreplay.schedulers import failures

    path, line = scheduler_file(tmp_path, "installed", """
        def onJobSubmission(self, job):
            raise RuntimeError("no more budget")  # <- here
        """)
    directories = dict(failures._directories())
    monkeypatch.setattr(failures, "_DIRECTORIES", {**directories, "library": directories["library"] + (tmp_path,)})
    error = one_error_line(*run_cli(tmp_path, capsys, path))
    assert f"{path}, line {line}, in onJobSubmission: RuntimeError: no more budget" in error


def test_system_errors_and_bare_key_errors_are_said_plainly(tmp_path, capsys, monkeypatch):
    """The CLI's last net: no "[Errno 20]", and a KeyError without a sentence is called an internal error."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(SystemExit) as stop:
        main(["platform", "--nodes", "4", "--out", str(blocker / "x.xml")])
    error = one_error_line(stop.value.code, capsys.readouterr().err)
    assert f"{blocker}" in error and "Errno" not in error

    import batreplay.platforms.generate as generate

    def slip(*args, **kwargs):
        return {}["w0!3"]

    monkeypatch.setattr(generate, "platform_command", slip)
    with pytest.raises(SystemExit) as stop:
        main(["platform", "--nodes", "4", "--out", str(tmp_path / "x.xml")])
    error = one_error_line(stop.value.code, capsys.readouterr().err)
    assert "unexpected KeyError 'w0!3'" in error and "--debug" in error
