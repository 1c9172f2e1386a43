"""The smaller subcommands as a user runs them: sessions, platform, analyze, campaign help."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from batreplay.cli import main
from batreplay.platforms.reader import read_platform
from batreplay.replay.session_graph import load_session_graphs
from conftest import WORKLOADS

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"


def test_sessions_command_writes_reusable_graphs(tmp_path, capsys):
    out = tmp_path / "sessions"
    assert main(["sessions", "--workload", str(KTH), "--method", "arrival", "--threshold", "60",
                 "--max-jobs", "2000", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "session rule a60" in printed and "think time" in printed
    graphs = load_session_graphs(out)
    assert sum(g.nb_jobs for g in graphs.values()) == 2000
    per_user = pd.read_csv(out / "statistics_per_user.csv")
    assert per_user["nb_jobs"].sum() == 2000
    assert json.loads((out / "statistics.json").read_text())

    # the directory is accepted by a feedback run of the same jobs, with the same result as the rule itself
    from_dir = tmp_path / "from-dir"
    from_rule = tmp_path / "from-rule"
    common = ["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "easy", "--max-jobs", "2000",
              "--replay", "feedback", "--quiet"]
    assert main([*common, "--sessions", str(out), "--out", str(from_dir)]) == 0
    assert main([*common, "--sessions", "a60", "--out", str(from_rule)]) == 0
    assert (from_dir / "out_jobs.csv").read_bytes() == (from_rule / "out_jobs.csv").read_bytes()


def test_platform_command_with_variants(tmp_path, capsys):
    target = tmp_path / "cluster.xml"
    assert main(["platform", "--nodes", "12", "--speed", "2e9", "--out", str(target), "--variants"]) == 0
    assert capsys.readouterr().out.count("wrote ") == 5
    written = sorted(tmp_path.glob("cluster*.xml"))
    assert [p.name for p in written] == ["cluster-nodes-div2.xml", "cluster-nodes-x2.xml", "cluster-speed-div2.xml",
                                         "cluster-speed-x2.xml", "cluster.xml"]
    base = read_platform(target)
    assert base.nb_compute == 12 and set(base.speeds) == {2e9}
    assert [h.name for h in base.hosts][:3] == ["node_00", "node_01", "node_02"]
    sizes = {path.name: (read_platform(path).nb_compute, read_platform(path).speeds[0]) for path in written}
    assert sizes == {"cluster.xml": (12, 2e9), "cluster-nodes-x2.xml": (24, 2e9), "cluster-nodes-div2.xml": (6, 2e9),
                     "cluster-speed-x2.xml": (12, 4e9), "cluster-speed-div2.xml": (12, 1e9)}


@pytest.mark.slow
def test_analyze_command_on_a_run(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "fcfs", "--max-jobs", "500",
                 "--out", str(run_dir), "--quiet"]) == 0
    report = tmp_path / "report"
    assert main(["analyze", str(run_dir), "--out", str(report)]) == 0
    metrics = pd.read_csv(report / "metrics.csv")
    assert len(metrics) == 1 and metrics["nb_jobs"].iloc[0] == 500
    assert (report / "report.html").is_file()


# --- issue 9: --max-jobs, --timeout / --batsim-timeout, platform size ----------------------------------------------

GOLDEN_DELAYS = WORKLOADS.parent / "batsim-golden" / "delays"


def _run_args(tmp_path, *extra: str) -> list[str]:
    return ["run", "--workload", str(GOLDEN_DELAYS / "workload.json"), "--platform",
            str(GOLDEN_DELAYS / "platform.xml"), "--scheduler", "easy", "--out", str(tmp_path / "run"), "--quiet",
            *extra]


def _one_line_error(capsys, call) -> str:
    import pytest

    with pytest.raises(SystemExit) as stop:
        call()
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("batreplay: error:") and "\n" not in err, err
    return err


def test_max_jobs_below_one_is_refused_everywhere(tmp_path, capsys):
    """A JSON workload sliced with --max-jobs -1 silently lost its last job; 0 kept nothing."""
    for value in ("-1", "0"):
        err = _one_line_error(capsys, lambda: main(_run_args(tmp_path, "--max-jobs", value)))
        assert f"max_jobs (--max-jobs) must be an integer >= 1 (or left out), got {value}" in err
        assert not (tmp_path / "run").exists()
        err = _one_line_error(capsys, lambda: main(["sessions", "--workload", str(KTH), "--max-jobs", value,
                                                    "--out", str(tmp_path / "sessions")]))
        assert f"--max-jobs must be an integer >= 1, got {value}" in err
        assert not (tmp_path / "sessions").exists()


def test_timeout_options_reach_the_run_and_are_checked(tmp_path, capsys):
    assert main(_run_args(tmp_path, "--timeout", "3600", "--batsim-timeout", "30")) == 0
    spec = json.loads((tmp_path / "run" / "run.json").read_text())["spec"]
    assert (spec["timeout"], spec["batsim_timeout"]) == (3600.0, 30.0)
    assert main(_run_args(tmp_path, "--force")) == 0
    spec = json.loads((tmp_path / "run" / "run.json").read_text())["spec"]
    assert (spec["timeout"], spec["batsim_timeout"]) == (None, 600.0)  # no limit; docs/real-batsim.md says 600 s
    for option in ("--timeout", "--batsim-timeout"):
        err = _one_line_error(capsys, lambda: main(_run_args(tmp_path / "x", option, "0")))
        assert f"({option}) must be a number > 0 and <= 1e+09 s" in err and "got 0.0" in err


def _cluster_platform(path, *radicals: str, hosts: int = 0):
    clusters = "".join(f'<cluster id="c{i}" prefix="n{i}_" suffix="" radical="{radical}" speed="1Gf" bw="125MBps" '
                       f'lat="0us"/>\n' for i, radical in enumerate(radicals))
    singles = "".join(f'<host id="h{i}" speed="1Gf"/>\n' for i in range(hosts))
    path.write_text(f'<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Full">\n{clusters}'
                    f'{singles}<host id="master_host" speed="1Gf"/>\n</zone>\n</platform>\n')
    return path


def test_platforms_above_the_size_limit_are_refused_before_expanding(tmp_path, capsys):
    import pytest

    from batreplay.platforms.reader import PlatformError

    just_above = _cluster_platform(tmp_path / "above.xml", "0-1000000")  # one compute host more than the limit
    with pytest.raises(PlatformError, match=r"above\.xml:4: <cluster id='c0'>: attribute 'radical' '0-1000000' "
                                            r"declares 1,000,001 compute hosts; .* more than the 1,000,000 compute "
                                            r"hosts batreplay simulates \(the master host is not counted\)"):
        read_platform(just_above)
    # the typo of the issue: refused at once, by the command, in one line naming the file and line
    huge = _cluster_platform(tmp_path / "huge.xml", "0-50000000")
    err = _one_line_error(capsys, lambda: main(["run", "--workload", str(GOLDEN_DELAYS / "workload.json"),
                                                "--platform", str(huge), "--scheduler", "easy",
                                                "--out", str(tmp_path / "run"), "--quiet"]))
    assert f"{huge}:4: <cluster id='c0'>: attribute 'radical' '0-50000000' declares 50,000,001 compute hosts" in err
    # clusters and hosts count together
    two = _cluster_platform(tmp_path / "two.xml", "0-5", "0-5")
    with pytest.raises(PlatformError, match=r"two\.xml:5: <cluster id='c1'>: .* with the 6 compute hosts before it "
                                            r".* would have 12, more than the 10 compute hosts"):
        read_platform(two, max_hosts=10)
    singles = _cluster_platform(tmp_path / "singles.xml", "0-8", hosts=3)
    with pytest.raises(PlatformError, match=r"singles\.xml:6: <host id='h1'>: host 'h1'; with the 10 compute hosts "
                                            r"before it"):
        read_platform(singles, max_hosts=10)
    assert read_platform(_cluster_platform(tmp_path / "fits.xml", "0-8"), max_hosts=10).nb_compute == 9
    from batreplay.platforms.reader import MAX_HOSTS

    assert MAX_HOSTS == 1_000_000


def test_run_options_take_their_choices_and_defaults_from_the_parts():
    """Allowed values are defined once, in the layer that owns them; ``batreplay run`` derives its own."""
    from batreplay.cli import build_parser
    from batreplay.engine.choices import ENGINES
    from batreplay.replay.registry import USER_MODELS
    from batreplay.run.spec import part_defaults
    from batreplay.schedulers.registry import SCHEDULERS
    from batreplay.workloads.loading import PROFILE_TYPES

    parser = build_parser()
    run = parser._subparsers._group_actions[0].choices["run"]  # argparse keeps subparsers there
    actions = {action.dest: action for action in run._actions}
    assert tuple(actions["profile"].choices) == PROFILE_TYPES
    assert tuple(actions["replay"].choices) == USER_MODELS
    assert tuple(actions["engine"].choices) == ENGINES
    assert all(name in actions["scheduler"].help for name in SCHEDULERS)
    for key in ("profile", "recorded_speed", "replay", "sessions", "engine", "batsim_timeout"):
        assert actions[key].default == part_defaults()[key], key


# --- issue 12: messages a user reads in a log, options that applied, platform checks, zero-runtime jobs -----------

def test_output_that_is_not_a_terminal_keeps_each_message_on_one_line(tmp_path, capsys):
    assert main(["sessions", "--workload", str(KTH), "--max-jobs", "2500", "--out", str(tmp_path / "s")]) == 0
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    # the per-field count of missing values is one message of about 250 characters: one line, not wrapped at 80
    [missing] = [line for line in lines if "missing values (-1) per field" in line]
    assert missing.rstrip().endswith("think_time=28476") and len(missing) > 200
    assert lines[0].startswith("SWF anomalies in")  # no blank line left by a progress bar
    # sessions shows the jobs dropped from the sessions, not the conversion's notes about walltimes
    assert "dropped run_time_zero: 1" in printed and "--zero-runtime min" in printed  # SWF line 2476
    assert "walltime_below_run_time" not in printed and "Batsim stops the job" not in printed


@pytest.mark.parametrize(("argv", "named", "refused"), [
    (["--nodes", "0"], "--nodes 0", "groups["),
    (["--nodes", "8", "--speed", "-1"], "--speed", "groups["),
    (["--nodes", "8", "--out-name", "p8.txt"], "must end in .xml", "Traceback"),
])
def test_platform_command_names_the_bad_option_and_writes_nothing(tmp_path, capsys, argv, named, refused):
    out = tmp_path / (argv[-1] if "--out-name" in argv else "p.xml")
    argv = [a for a in argv if a != "--out-name" and a != "p8.txt"]
    with pytest.raises(SystemExit) as stop:
        main(["platform", *argv, "--out", str(out)])
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip()
    assert message.startswith("batreplay: error:") and named in message and refused not in message
    assert len(message.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_zero_runtime_option_keeps_the_zero_run_time_jobs_and_run_json_records_what_applied(tmp_path):
    kept, dropped = tmp_path / "min", tmp_path / "drop"
    common = ["run", "--workload", str(KTH), "--platform", "kth-sp2", "--scheduler", "fcfs", "--max-jobs", "2500",
              "--quiet"]
    assert main([*common, "--zero-runtime", "min", "--out", str(kept)]) == 0
    assert main([*common, "--out", str(dropped)]) == 0
    # SWF line 2476 of KTH-SP2 is the first job with a recorded run time of 0 s (the reading counts it)
    kept_lines = pd.read_csv(kept / "jobs.csv")["swf_line"]
    assert 2476 in set(kept_lines) and 2476 not in set(pd.read_csv(dropped / "jobs.csv")["swf_line"])
    jobs = pd.read_csv(kept / "jobs.csv").set_index("swf_line")
    out_jobs = pd.read_csv(kept / "out_jobs.csv")
    job_id = jobs.loc[2476, "job_id"]
    assert jobs.loc[2476, "run_time"] == 1.0  # recorded 0 s, run for the minimum of 1 s
    assert out_jobs.loc[out_jobs["job_id"].astype(str) == str(job_id), "execution_time"].item() == pytest.approx(1.0)
    spec = json.loads((kept / "run.json").read_text())["spec"]
    assert spec["zero_runtime"] == "min" and spec["replay"] == "rigid"
    assert "sessions" not in spec  # a rigid replay has no sessions to record


def test_run_takes_a_catalogue_name_for_a_fetched_log(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "cache"))
    argv = ["run", "--workload", "KTH-SP2-1996-2.1-cln", "--platform", "kth-sp2", "--scheduler", "fcfs",
            "--max-jobs", "100", "--quiet", "--out", str(tmp_path / "run")]
    err = _one_line_error(capsys, lambda: main(argv))
    assert "not in the cache yet" in err and "batreplay fetch KTH-SP2-1996-2.1-cln" in err
    assert not (tmp_path / "run").exists()

    cached = tmp_path / "cache" / "pwa" / KTH.name
    cached.parent.mkdir(parents=True)
    shutil.copyfile(KTH, cached)  # what `batreplay fetch` leaves (same bytes, the catalogue's checksum)
    assert main(argv) == 0
    document = json.loads((tmp_path / "run" / "run.json").read_text())
    assert document["spec"]["workload"] == str(cached)
    assert len(pd.read_csv(tmp_path / "run" / "out_jobs.csv")) == 100


def test_res_source_chooses_the_swf_processor_count(tmp_path):
    """Rauch 2022 replays the requested processors (SWF field 8); batreplay's default is the allocated ones (5)."""
    import gzip

    lines = gzip.decompress(KTH.read_bytes()).decode().splitlines()
    header = [line for line in lines if line.startswith(";")]
    jobs = [line.split() for line in lines if line.strip() and not line.startswith(";")][:50]
    jobs[0][7] = str(int(jobs[0][4]) * 2)  # job 1 asked for twice the processors it was given
    log = tmp_path / "asked.swf"
    log.write_text("\n".join(header + [" ".join(job) for job in jobs]) + "\n")
    sizes = {}
    for source in ("allocated", "requested"):
        out = tmp_path / source
        assert main(["run", "--workload", str(log), "--platform", "kth-sp2", "--scheduler", "fcfs", "--quiet",
                     "--res-source", source, "--out", str(out)]) == 0
        sizes[source] = pd.read_csv(out / "jobs.csv").set_index("swf_line")["res"]
        assert json.loads((out / "run.json").read_text())["spec"]["res_source"] == source
    first = sizes["allocated"].index[0]
    assert sizes["requested"][first] == 2 * sizes["allocated"][first]
    assert (sizes["requested"].drop(first) == sizes["allocated"].drop(first)).all()


def test_every_entry_point_prints_unwrapped_when_piped(capsys):
    from batreplay.console import make_console

    console = make_console()  # pytest captures standard output: not a terminal
    console.print("word " * 60)
    assert len(capsys.readouterr().out.splitlines()) == 1
    import batreplay.campaign.__main__ as campaign_main
    import batreplay.campaign.runner as campaign_runner

    assert campaign_main.make_console is make_console and campaign_runner.make_console is make_console


# --- audit issue 25: one platform size limit for `platform` and `run`; --speed with --node-types; variant notes -----

@pytest.mark.parametrize(("argv", "toml", "named"), [
    (["--nodes", "100000000"], None, "--nodes 100000000: more than the 1,000,000 compute nodes batreplay simulates"),
    (["--nodes", "600000", "--variants"], None,
     "--variants: variant nodes-x2 would have 1,200,000 compute nodes, more than the 1,000,000 batreplay simulates"),
    ([], [("a", 10_000_000)], "node type 1: node type 'a': count = 10,000,000, more than the 1,000,000 compute nodes"),
    ([], [("a", 2**62)], "node type 'a': count = 4,611,686,018,427,387,904, more than the 1,000,000 compute nodes"),
    ([], [("a", 600_000), ("b", 600_000)], "node type 2: with it the node types have 1,200,000 nodes in all"),
    (["--variants"], [("a", 300_000), ("b", 300_001)], "variant nodes-x2 would have 1,200,002 compute nodes"),
    (["--speed", "2e9"], [("a", 4)], "--speed and --node-types: each node type gives its own speed"),
])
def test_platform_command_refuses_platforms_run_would_refuse(tmp_path, capsys, argv, toml, named):
    """`batreplay platform` wrote these with exit 0, and `batreplay run` then refused them (or ignored --speed)."""
    if toml is not None:
        types = tmp_path / "types.toml"
        types.write_text("".join(f'[[node_types]]\nname = "{name}"\ncount = {count}\nspeed = 1e9\n'
                                 for name, count in toml))
        argv = [*argv, "--node-types", str(types)]
    out = tmp_path / "out" / "p.xml"
    err = _one_line_error(capsys, lambda: main(["platform", *argv, "--out", str(out)]))
    assert named in err
    assert not out.parent.exists()


def test_platform_variants_tell_their_roundings_in_one_line_each(tmp_path, capsys):
    import warnings

    types = tmp_path / "types.toml"
    types.write_text('[[node_types]]\nname = "a"\ncount = 3\nspeed = 1e9\n'
                     '[[node_types]]\nname = "b"\ncount = 5\ncores = 2\nspeed = 2e9\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["platform", "--node-types", str(types), "--out", str(tmp_path / "o.xml"), "--variants"]) == 0
        assert main(["platform", "--nodes", "3", "--out", str(tmp_path / "p.xml"), "--variants"]) == 0
    assert [str(w.message) for w in caught] == []  # was: PlatformScalingWarning with generate.py's line
    printed = capsys.readouterr()
    notes = [line for line in printed.out.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: o-nodes-div2.xml: node type 'a': 3 nodes x 0.5 = 1.5 is not a whole number >= 1: rounded to 2 nodes",
        "note: o-nodes-div2.xml: node type 'b': 5 nodes x 0.5 = 2.5 is not a whole number >= 1: rounded to 3 nodes",
        "note: p-nodes-div2.xml: 3 nodes x 0.5 = 1.5 is not a whole number >= 1: rounded to 2 nodes",
    ]
    assert printed.err == ""
    assert read_platform(tmp_path / "p.xml").speeds.tolist() == [1e9] * 3  # --speed's default, with --nodes
    with pytest.raises(SystemExit):
        main(["platform", "--help"])
    assert "(default: 1e+09)" in " ".join(capsys.readouterr().out.split())  # still said
