"""Campaign specification files: the shipped campaigns expand as the papers describe, ids are stable hashes of the
parameters, relative paths follow the documented rule, and bad files are refused with the file and key named."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT, WORKLOADS
from hypothesis import given
from hypothesis import strategies as st

from batreplay.campaign.spec import (
    CampaignSpecError,
    PlatformVariant,
    canonical_json,
    default_output_root,
    instance_id,
    load_campaign,
    parse_variant,
)

EXPE = REPO_ROOT / "expe"
KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
ID_PATTERN = re.compile(r"^[A-Za-z0-9.+_-]+__[0-9a-f]{8}$")


def write_spec(folder: Path, text: str, name: str = "c.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def minimal(workload: Path = KTH, extra: str = "", log_extra: str = 'platform = "kth-sp2"') -> str:
    return f"""
[campaign]
name = "t"
output_root = "out"
{extra}

[[logs]]
name = "kth"
workload = "{workload.as_posix()}"
{log_extra}

[matrix]
schedulers = ["easy"]
"""


def test_replay_feedback_2024_is_the_papers_campaign():
    # Madon et al. 2024, Sect. 5.2: 2 logs x 6 experiments x {rigid, a0, a60} = 36 simulations
    spec = load_campaign(EXPE / "replay-feedback-2024.toml")
    instances = spec.instances()
    assert len(instances) == 36
    assert [log.name for log in spec.logs] == ["kth-sp2", "sdsc-sp2"]
    assert [r.label for r in spec.replays] == ["rigid", "a0", "a60"]
    experiments = {e.name: (e.scheduler, e.variant.nodes_factor, e.variant.speed_factor) for e in spec.experiments}
    assert experiments == {
        "EASY": ("easy", 1.0, 1.0), "FCFS": ("fcfs", 1.0, 1.0),
        "perf*2": ("easy", 1.0, 2.0), "perf/2": ("easy", 1.0, 0.5),
        "infra*2": ("easy", 2.0, 1.0), "infra/2": ("easy", 0.5, 1.0),
    }
    assert len({i.id for i in instances}) == 36
    assert all(ID_PATTERN.match(i.id) for i in instances)
    # logs resolved against the repository (root = ".." of expe/)
    assert spec.root == REPO_ROOT.resolve()
    assert spec.resolve(spec.logs[0].workload).resolve() == KTH.resolve()
    assert spec.output_root == (REPO_ROOT / "runs" / "campaigns" / "replay-feedback-2024").resolve()
    feedback = [i for i in instances if i.replay.model == "feedback"]
    assert sorted({i.params["sessions"] for i in feedback}) == ["a0", "a60"]
    assert all(i.params["sessions"] is None for i in instances if i.replay.model == "rigid")


def test_other_shipped_campaigns():
    quick = load_campaign(EXPE / "quick.toml")
    assert len(quick.instances()) == 8
    assert {i.params["max_jobs"] for i in quick.instances()} == {3000}
    fcfs_easy = load_campaign(EXPE / "fcfs-vs-easy.toml")
    assert len(fcfs_easy.instances()) == 9  # 3 logs x FCFS, EASY, EASY (Schedulus)
    assert {log.name: log.nodes for log in fcfs_easy.logs} == {"hpc2n": 240, "ctc-sp2": 338, "metacentrum": 806}
    assert {i.replay.label for i in fcfs_easy.instances()} == {"rigid"}
    models = load_campaign(EXPE / "user-models.toml")  # the user models compared (issue 29)
    assert len(models.instances()) == 72
    assert [r.label for r in models.replays] == ["rigid", "a60", "adjusted-a60", "distribution-a60", "fluid-a60",
                                                 "schlagkamp-a60"]
    reference = load_campaign(EXPE / "user-models-reference.toml")
    assert len(reference.instances()) == 24 and {i.replay.label for i in reference.instances()} == {"rigid"}
    assert {(log.name, log.options["overheads"], log.options["overhead_seed"]) for log in reference.logs} == {
        (f"{name}-o{seed}", 30.0, seed) for name in ("kth-sp2", "sdsc-sp2") for seed in (1, 2)}


def test_id_is_prefix_plus_sha256_of_canonical_parameters(tmp_path, monkeypatch):
    spec = load_campaign(EXPE / "quick.toml")
    for instance in spec.instances():
        text = json.dumps(instance.params, sort_keys=True, separators=(",", ":"))
        assert instance.id.endswith("__" + hashlib.sha256(text.encode()).hexdigest()[:8])
        labels = instance.labels
        assert instance.id.startswith(f"{labels['log']}__{labels['scheduler']}__{labels['platform_variant']}__"
                                      f"{labels['replay']}__s{labels['seed']}__")
    # the same file read from another working directory, through another path: same ids
    monkeypatch.chdir(tmp_path)
    again = load_campaign(Path("/".join([".."] * len(tmp_path.parts))) / (EXPE / "quick.toml").relative_to("/"))
    assert [i.id for i in again.instances()] == [i.id for i in spec.instances()]


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.one_of(st.integers(), st.floats(allow_nan=False,
       allow_infinity=False), st.text(max_size=5), st.none()), min_size=1, max_size=6))
def test_ids_do_not_depend_on_key_order(params):
    reordered = dict(reversed(list(params.items())))
    assert canonical_json(params) == canonical_json(reordered)
    assert instance_id(["a"], params) == instance_id(["a"], reordered)


@given(st.dictionaries(st.sampled_from("abcdef"), st.integers(-5, 5), min_size=1), st.sampled_from("abcdef"),
       st.integers(-5, 5))
def test_changing_one_parameter_changes_the_id(params, key, value):
    changed = dict(params, **{key: value})
    if changed != params:
        assert instance_id(["x"], changed) != instance_id(["x"], params)


@pytest.mark.parametrize("text, nodes, speed, label", [
    ("recorded", 1.0, 1.0, "recorded"),
    ("nodes-x2", 2.0, 1.0, "nodes-x2"),
    ("nodes-d2", 0.5, 1.0, "nodes-d2"),
    ("speed-x2", 1.0, 2.0, "speed-x2"),
    ("speed-d4", 1.0, 0.25, "speed-d4"),
    ("speed-d2+nodes-x3", 3.0, 0.5, "nodes-x3+speed-d2"),
    ("nodes-x1.5", 1.5, 1.0, "nodes-x1.5"),
])
def test_platform_variants(text, nodes, speed, label):
    variant = parse_variant(text)
    assert (variant.nodes_factor, variant.speed_factor) == (nodes, speed)
    assert variant.label == label
    assert parse_variant(variant.label) == variant


@given(st.integers(-4, 4), st.integers(-4, 4))
def test_variant_label_round_trip_for_powers_of_two(n, s):
    variant = PlatformVariant(2.0 ** n, 2.0 ** s)
    assert parse_variant(variant.label) == variant


@pytest.mark.parametrize("text", ["nodes", "nodes-x0", "cpu-x2", "nodes-x2+nodes-d2", "speed-*2"])
def test_bad_variants(text):
    with pytest.raises(ValueError, match="platform variant"):
        parse_variant(text)


def test_relative_paths_follow_root(tmp_path):
    # a spec in a sub-folder whose root is its parent: paths are written relative to the parent
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "kth.swf.gz"
    log.write_bytes(KTH.read_bytes())
    sub = tmp_path / "expe"
    sub.mkdir()
    spec = load_campaign(write_spec(sub, minimal(Path("logs/kth.swf.gz"), 'root = ".."')))
    assert spec.root == tmp_path.resolve()
    assert spec.output_root == (tmp_path / "out").resolve()
    assert spec.resolve(spec.logs[0].workload) == tmp_path.resolve() / "logs" / "kth.swf.gz"
    # without root, relative to the spec's own folder: the log is not found there
    with pytest.raises(CampaignSpecError,
                       match=r"\[\[logs\]\] #1, key 'workload': .*/expe/logs/kth\.swf\.gz: no such file"):
        load_campaign(write_spec(sub, minimal(Path("logs/kth.swf.gz"))))


def test_default_output_root(tmp_path, monkeypatch):
    monkeypatch.setenv("BATREPLAY_CACHE", str(tmp_path / "cache"))
    assert default_output_root("abc") == tmp_path / "cache" / "campaigns" / "abc"
    spec = load_campaign(write_spec(tmp_path, minimal().replace('output_root = "out"', "")))
    assert spec.output_root == (tmp_path / "cache" / "campaigns" / "t").resolve()
    override = load_campaign(write_spec(tmp_path, minimal()), output_root=tmp_path / "elsewhere")
    assert override.output_root == tmp_path / "elsewhere"


def test_rigid_is_not_crossed_with_session_methods(tmp_path):
    text = minimal().replace('schedulers = ["easy"]', 'schedulers = ["easy", "fcfs"]\nreplay_models = ["rigid", '
                                                       '"feedback"]\nsession_methods = ["a0", "arrival:60", "l30"]')
    spec = load_campaign(write_spec(tmp_path, text))
    assert [r.label for r in spec.replays] == ["rigid", "a0", "a60", "l30"]
    assert len(spec.instances()) == 2 * 4


def test_batch_models_are_crossed_with_session_methods_and_the_seeds_seed_the_draws(tmp_path):
    text = minimal().replace('schedulers = ["easy"]', 'schedulers = ["easy"]\nreplay_models = ["rigid", "feedback", '
                                                       '"adjusted", "distribution"]\nsession_methods = ["a60"]\n'
                                                       'seeds = [0, 4]')
    spec = load_campaign(write_spec(tmp_path, text))
    assert [r.label for r in spec.replays] == ["rigid", "a60", "adjusted-a60", "distribution-a60"]
    seeds = {(i.replay.label, i.seed): i.params.get("model_seed") for i in spec.instances()}
    # only distribution draws: its seed is the seed of its draws (0, model_seed's default, is left out of the
    # parameters like any default); the other ids keep their parameters
    assert seeds == {("rigid", 0): None, ("rigid", 4): None, ("a60", 0): None, ("a60", 4): None,
                     ("adjusted-a60", 0): None, ("adjusted-a60", 4): None,
                     ("distribution-a60", 0): None, ("distribution-a60", 4): 4}


def test_select(tmp_path):
    spec = load_campaign(EXPE / "quick.toml")
    assert len(spec.select("fcfs")) == 4
    assert len(spec.select("*__speed-d2__a60__*")) == 2
    with pytest.raises(CampaignSpecError, match="no instance of quick matches"):
        spec.select("conservative")


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('name = "t"', 'name = "t"\ncolour = "red"'), r"\[campaign\]: unknown key\(s\) 'colour'"),
    (lambda t: t.replace('name = "t"', 'name = "a b"'), r"\[campaign\], key 'name'"),
    (lambda t: t.replace('platform = "kth-sp2"', 'platform = "kth-sp2"\nnodes = 100'), "not both"),
    (lambda t: t.replace('platform = "kth-sp2"', ""), "not neither"),
    (lambda t: t.replace('platform = "kth-sp2"', 'platform = "nowhere.xml"'), "neither a shipped platform"),
    (lambda t: t.replace('platform = "kth-sp2"', 'platform = "kth-sp2"\nmax_jobs = 0'), "key 'max_jobs': must be an integer >= 1"),
    (lambda t: t.replace('platform = "kth-sp2"', 'platform = "kth-sp2"\nmax_jobs = "10"'), "expected an integer"),
    (lambda t: t + 'session_methods = ["z9"]\n', "key 'session_methods'"),
    (lambda t: t + 'replay_models = ["elastic"]\n', "key 'replay_models'"),
    (lambda t: t + 'replay_models = ["closed"]\n', "key 'replay_models': 'closed' replays a site model"),
    (lambda t: t + 'platforms = ["nodes-x0"]\n', "key 'platforms'"),
    (lambda t: t + 'seeds = [1, 1]\n', "key 'seeds'"),
    (lambda t: t.replace('name = "t"', 'name = "t"\nengine = "simgrid"'), "key 'engine'"),
    (lambda t: t + '[report]\ntables = ["table9"]\n', r"\[report\], key 'tables'"),
    (lambda t: t + '[report]\npublished = "none.csv"\n', "key 'published': no such file"),
    (lambda t: t.replace("[[logs]]", "[[logs]\n"), "not valid TOML"),
])
def test_bad_specs_name_file_and_key(tmp_path, change, message):
    path = write_spec(tmp_path, change(minimal()))
    with pytest.raises(CampaignSpecError, match=message) as info:
        load_campaign(path)
    assert str(path) in str(info.value)


def test_two_names_for_one_simulation_are_refused(tmp_path):
    text = minimal().replace('[matrix]\nschedulers = ["easy"]', """
[[experiments]]
name = "EASY"
scheduler = "easy"

[[experiments]]
name = "baseline"
scheduler = "easy"
platform = "recorded"
""")
    with pytest.raises(CampaignSpecError, match="are the same simulation"):
        load_campaign(write_spec(tmp_path, text))


def test_experiments_and_matrix_product_are_exclusive(tmp_path):
    text = minimal() + '\n[[experiments]]\nname = "E"\nscheduler = "easy"\n'
    with pytest.raises(CampaignSpecError, match="either \\[\\[experiments\\]\\] or \\[matrix\\]"):
        load_campaign(write_spec(tmp_path, text))


# ------------------------------------------------------------------ issue 9 item 15: the whole spec checked at load

def experiments(*lines: str, scheduler: str = "easy"):
    """A change replacing the [matrix] product by one [[experiments]] table with extra lines."""
    table = f'[[experiments]]\nname = "E"\nscheduler = "{scheduler}"\n' + "\n".join(lines)
    return lambda t: t.replace('[matrix]\nschedulers = ["easy"]', table)


def in_log(*lines: str):
    """A change adding lines to the [[logs]] table (after its platform line)."""
    return lambda t: t.replace('platform = "kth-sp2"', "\n".join(['platform = "kth-sp2"', *lines]))


def in_defaults(line: str):
    """A change adding a [defaults] table holding ``line``."""
    return lambda t: t.replace("[[logs]]", f"[defaults]\n{line}\n\n[[logs]]")


def replaced(old: str, new: str, tail: str = ""):
    return lambda t: t.replace(old, new) + tail


WHOLE_SPEC_CASES = {
    # schedulers: unknown names, missing files, options a built-in scheduler does not take
    "unknown scheduler": (replaced('["easy"]', '["easy", "nope"]'),
                          r"\[matrix\], key 'schedulers': unknown scheduler 'nope'.*conservative, .*easy, .*fcfs"),
    "empty scheduler": (replaced('["easy"]', '[""]'), r"\[matrix\], key 'schedulers': unknown scheduler ''"),
    "missing scheduler file": (replaced('["easy"]', '["mine.py"]'),
                               r"\[matrix\], key 'schedulers': scheduler file 'mine.py' not found"),
    "unknown experiment scheduler": (experiments(scheduler="Easy"),
                                     r"\[\[experiments\]\] #1, key 'scheduler': unknown scheduler 'Easy'"),
    "unknown scheduler option": (experiments('scheduler_options = {colour = "red"}'),
                                 r"\[\[experiments\]\] #1, key 'scheduler_options': .*unknown option 'colour'"),
    "no experiment": (lambda t: "experiments = []\n" + t.replace('[matrix]\nschedulers = ["easy"]', ""),
                      r"\[\[experiments\]\]: none given"),
    # platforms: unreadable file, variants that cannot be built from the recorded machine
    "platform not XML": (replaced('platform = "kth-sp2"', 'platform = "bad.xml"'),
                         r"\[\[logs\]\] #1, key 'platform': .*bad.xml"),
    "variant below one node": (
        replaced("", "", 'platforms = ["recorded", "nodes-d1000"]\n'),
        r"\[matrix\], key 'platforms': variant nodes-d1000 of log 'kth': 100 nodes x 0.001 = 0.1"),
    "variant not whole": (
        experiments('platform = "nodes-d3"'),
        r"\[\[experiments\]\] #1, key 'platform': variant nodes-d3 of log 'kth': 100 nodes x 0.333333"),
    "generated variant not whole": (replaced('platform = "kth-sp2"', "nodes = 5", 'platforms = ["nodes-d2"]\n'),
                                    r"\[matrix\], key 'platforms': variant nodes-d2 of log 'kth': 5 nodes x 0.5 = 2.5"),
    # logs: what the runner cannot read, or cannot replay
    "workload not a log": (replaced(KTH.as_posix(), "log.txt"),
                           r"\[\[logs\]\] #1, key 'workload': .*log.txt.*\.swf, \.swf\.gz or \.json"),
    "feedback of JSON": (replaced(KTH.as_posix(), "w.json", 'replay_models = ["rigid", "feedback"]\n'),
                         r"\[\[logs\]\] #1, key 'workload': .*w.json.*feedback replay needs an SWF log"),
    # numbers and session specs
    "default max_jobs 0": (in_defaults("max_jobs = 0"), r"\[defaults\], key 'max_jobs': must be an integer >= 1"),
    "default walltime_factor": (in_defaults("walltime_factor = -1.0"),
                                r"\[defaults\], key 'walltime_factor': must be a number > 0"),
    "default speed inf": (in_defaults("recorded_speed = inf"), r"\[defaults\], key 'recorded_speed': must be a number from 1 to below"),
    "default profile": (in_defaults('profile = "fast"'), r"\[defaults\], key 'profile': 'fast'"),
    "negative max_jobs": (in_log("max_jobs = -3"), r"\[\[logs\]\] #1, key 'max_jobs': must be an integer >= 1"),
    "node_speed nan": (in_log("node_speed = nan"), r"\[\[logs\]\] #1, key 'node_speed': must be > 0"),
    "zero nodes": (replaced('platform = "kth-sp2"', "nodes = 0"), r"\[\[logs\]\] #1, key 'nodes': must be >= 1"),
    "negative session threshold": (
        replaced("", "", 'replay_models = ["feedback"]\nsession_methods = ["arrival:-5"]\n'),
        r"\[matrix\], key 'session_methods': 'arrival:-5': .*threshold.*>= 0"),
    "NaN session threshold": (replaced("", "", 'replay_models = ["feedback"]\nsession_methods = ["arrival:nan"]\n'),
                              r"\[matrix\], key 'session_methods': 'arrival:nan': .*threshold"),
    # the output folder
    "output_root a file": (replaced('output_root = "out"', 'output_root = "log.txt"'),
                           r"\[campaign\], key 'output_root': .*not a folder"),
}


@pytest.mark.parametrize("change, message", list(WHOLE_SPEC_CASES.values()), ids=list(WHOLE_SPEC_CASES))
def test_whole_spec_is_checked_when_loaded(tmp_path, change, message):
    """Issue 9 item 15: what used to fail only when an instance ran is refused by load_campaign, in one line naming
    the spec file and the table and key."""
    (tmp_path / "bad.xml").write_text("<platform version='4.1'>\n  <zone id='z' routing='Full'>\n")
    (tmp_path / "log.txt").write_text("1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": [], "profiles": {}}))
    path = write_spec(tmp_path, change(minimal()))
    with pytest.raises(CampaignSpecError, match=message) as info:
        load_campaign(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ")
    assert "\n" not in text


# ------------------------------------------------------------------ issue 25 item 3: one limit on platform sizes

LIMIT_CASES = {
    "nodes above the limit": (replaced('platform = "kth-sp2"', "nodes = 1000001"),
                              r"\[\[logs\]\] #1, key 'nodes': 1,000,001 nodes, more than the 1,000,000 compute "
                              r"nodes batreplay simulates"),
    "nodes of 2**62": (replaced('platform = "kth-sp2"', f"nodes = {2**62}"),
                       r"key 'nodes': 4,611,686,018,427,387,904 nodes, more than the 1,000,000"),
    "a node type above the limit": (replaced('platform = "kth-sp2"', 'node_types = "huge.toml"'),
                                    r"\[\[logs\]\] #1, key 'node_types': .*huge.toml: node type 1: node type 'h': "
                                    r"count = 10,000,000, more than the 1,000,000 compute nodes"),
    "node types above the limit": (replaced('platform = "kth-sp2"', 'node_types = "two.toml"'),
                                   r"key 'node_types': .*two.toml: node type 2: with it the node types have 1,200,000"),
    "x2 variant of 600,000 nodes": (replaced('platform = "kth-sp2"', "nodes = 600000",
                                             'platforms = ["recorded", "nodes-x2"]\n'),
                                    r"\[matrix\], key 'platforms': variant nodes-x2 of log 'kth': 600,000 nodes x 2 = "
                                    r"1,200,000 compute nodes, more than the 1,000,000 batreplay simulates"),
    "x2 variant of node types": (replaced('platform = "kth-sp2"', 'node_types = "half.toml"',
                                          'platforms = ["nodes-x2"]\n'),
                                 r"key 'platforms': variant nodes-x2 of log 'kth': 500,001 nodes x 2 = 1,000,002"),
    "experiment variant": (lambda t: experiments('platform = "nodes-x3"')(t).replace('platform = "kth-sp2"',
                                                                                     "nodes = 400000"),
                           r"\[\[experiments\]\] #1, key 'platform': variant nodes-x3 .* 1,200,000 compute nodes"),
    "speed variant beyond a float": (replaced('platform = "kth-sp2"', "nodes = 4\nnode_speed = 1e308",
                                              'platforms = ["speed-x2"]\n'),
                                     r"key 'platforms': variant speed-x2 of log 'kth': nodes of 1e\+308 flop/s x 2 = "
                                     r"inf flop/s, not a finite speed >= 2.23e-308"),
    "factor beyond a float": (replaced("", "", f'platforms = ["nodes-x{"9" * 400}"]\n'),
                              r"\[matrix\], key 'platforms': platform variant .*: factor must be > 0 and below"),
    "speed SimGrid cannot read": (replaced('platform = "kth-sp2"', "nodes = 4\nnode_speed = 5e-324"),
                                  r"key 'node_speed': 5e-324 flop/s, below 2.23e-308, the smallest speed SimGrid reads"),
    "integer beyond a float": (in_log("node_speed = 1" + "0" * 400),
                               r"\[\[logs\]\] #1, key 'node_speed': 1000.* is beyond the range of a number"),
}


@pytest.mark.parametrize("change, message", list(LIMIT_CASES.values()), ids=list(LIMIT_CASES))
def test_platforms_above_the_limit_are_refused_when_loaded(tmp_path, change, message):
    """A campaign's machine or variant beyond MAX_HOSTS compute nodes was accepted, and every instance on it then
    failed; a factor or integer beyond a float's range raised OverflowError."""
    (tmp_path / "huge.toml").write_text('[[node_types]]\nname = "h"\ncount = 10000000\nspeed = 1e9\n')
    (tmp_path / "two.toml").write_text('[[node_types]]\nname = "a"\ncount = 600000\nspeed = 1e9\n'
                                       '[[node_types]]\nname = "b"\ncount = 600000\nspeed = 1e9\n')
    (tmp_path / "half.toml").write_text('[[node_types]]\nname = "a"\ncount = 500000\nspeed = 1e9\n'
                                        '[[node_types]]\nname = "b"\ncount = 1\nspeed = 1e9\n')
    path = write_spec(tmp_path, change(minimal()))
    with pytest.raises(CampaignSpecError, match=message) as info:
        load_campaign(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


def test_variants_at_the_limit_are_accepted_and_one_node_more_refused(tmp_path):
    def spec(nodes: int) -> Path:
        return write_spec(tmp_path, replaced('platform = "kth-sp2"', f"nodes = {nodes}",
                                             'platforms = ["recorded", "nodes-x2"]\n')(minimal()))

    instances = load_campaign(spec(500_000)).instances()
    assert [(i.params["platform"]["nodes"], i.params["nodes_factor"]) for i in instances] == \
        [(500000, 1.0), (500000, 2.0)]
    with pytest.raises(CampaignSpecError, match="500,001 nodes x 2 = 1,000,002 compute nodes"):
        load_campaign(spec(500_001))


def test_scheduler_files_and_generated_variants_that_exist_are_accepted(tmp_path):
    (tmp_path / "sched").mkdir()
    (tmp_path / "sched" / "mine.py").write_text("# a pybatsim scheduler file\n")
    text = minimal().replace('platform = "kth-sp2"', "nodes = 6").replace(
        '["easy"]', '["easy", "sched/mine.py", "conservative"]\nplatforms = ["recorded", "nodes-d2", "nodes-x3"]')
    spec = load_campaign(write_spec(tmp_path, text))
    assert len(spec.instances()) == 9
    # relative to the campaign root, as the worker runs instances from there
    sub = tmp_path / "expe"
    sub.mkdir()
    moved = load_campaign(write_spec(sub, text.replace('name = "t"', 'name = "t"\nroot = ".."')))
    assert {e.scheduler for e in moved.experiments} == {"easy", "sched/mine.py", "conservative"}
    with pytest.raises(CampaignSpecError, match="scheduler file 'sched/mine.py' not found"):
        load_campaign(write_spec(sub, text))


def test_an_experiment_with_compute_sharing_reaches_the_run(tmp_path):
    """``compute_sharing = true`` in an experiment becomes the run's ``--compute-sharing``; off, the instance
    parameters (hence the ids of earlier campaigns) do not mention it."""
    from batreplay.run.spec import FLAT_FIELDS, RunSpec

    text = experiments("compute_sharing = true")(minimal())
    text = text.replace('[[experiments]]\nname = "E"', '[[experiments]]\nname = "plain"\nscheduler = "easy"\n\n'
                        '[[experiments]]\nname = "E"')
    plain, shared = load_campaign(write_spec(tmp_path, text)).instances()
    assert "compute_sharing" not in plain.params and shared.params["compute_sharing"] is True
    options = {key: shared.params[key] for key in FLAT_FIELDS if shared.params.get(key) is not None}
    spec = RunSpec.build(workload="w.swf", platform="kth-sp2", out_dir="o", **options)
    assert spec.engine.compute_sharing is True
    with pytest.raises(CampaignSpecError, match="compute_sharing"):
        load_campaign(write_spec(tmp_path, experiments('compute_sharing = "yes"')(minimal()), name="bad.toml"))
    with pytest.raises(CampaignSpecError, match="key 'compute_sharing': scheduler option slots"):
        load_campaign(write_spec(tmp_path, experiments("scheduler_options = { slots = true }")(minimal()),
                                 name="slots.toml"))


@pytest.mark.skipif(not WORKLOADS.is_dir(), reason="shared workloads not available")
def test_input_files_name_every_file_a_campaign_reads():
    """What the web GUI checks against its allowed folders: logs, speedup tables, the report's files."""
    co = load_campaign(EXPE / "co-scheduling.toml")
    found = {(what, path.resolve()) for what, path in co.input_files()}
    assert ("[[logs]] kth, workload", (WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz").resolve()) in found
    tables = {path for what, path in found if what.endswith("speedup_options table")}
    assert tables == {(EXPE / "speedups" / "two-classes.csv").resolve()}
    feedback = load_campaign(EXPE / "replay-feedback-2024.toml")
    reported = {what: path.resolve() for what, path in feedback.input_files() if what.startswith("[report]")}
    assert reported == {"[report] published": (EXPE / "published" / "madon2024-fgcs.csv").resolve(),
                        "[report] explanations": (EXPE / "explanations" / "replay-feedback-2024.md").resolve()}
    assert all(path.exists() for _what, path in co.input_files() + feedback.input_files())
