"""A log's machine given as a node types file (``[[logs]] node_types``): read and checked when the campaign file is
loaded (one-line errors naming the key), generated into ``<output_root>/platforms/<log>.xml`` exactly as ``batreplay
platform --node-types`` writes it, scaled type by type for the variants, and run end to end by the worker; campaigns
that do not use the key keep their instance ids."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO_ROOT, WORKLOADS

from batreplay.campaign.platforms import prepare_platforms, recorded_platform_path
from batreplay.campaign.spec import CampaignSpecError, instance_id, load_campaign
from batreplay.campaign.worker import execute, task_for
from batreplay.platforms.generate import platform_command
from batreplay.platforms.node_types import read_node_types
from batreplay.platforms.reader import read_platform

KTH = WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz"
#: Two node types, 40 nodes (with job slots, a job of n processors takes one slot on each of n nodes: the first 50
#: KTH-SP2 jobs ask for at most 36).
TYPES = """
[[node_types]]
name = "small"
count = 24
cores = 2
speed = 1e9

[[node_types]]
name = "big"
count = 16
cores = 4
slots = 3
speed = 2e9
"""
EASY_SLOTS = """
[[experiments]]
name = "least loaded"
scheduler = "easy"
scheduler_options = { slots = true, node_selection = "least-loaded" }
compute_sharing = true
"""
#: The instance parameters campaigns have without the optional keys.
OLD_PARAMS = {"workload", "platform", "nodes_factor", "speed_factor", "scheduler", "scheduler_options", "profile",
              "recorded_speed", "max_jobs", "walltime_factor", "replay", "sessions", "seed", "engine"}


def spec_text(machine: str = 'node_types = "types.toml"', experiments: str = EASY_SLOTS) -> str:
    """A campaign on the first 50 KTH-SP2 jobs, the log's machine given by ``machine`` ([[logs]] lines)."""
    return f"""
[campaign]
name = "t"
output_root = "out"

[[logs]]
name = "kth"
workload = "{KTH.as_posix()}"
{machine}
max_jobs = 50
{experiments}
"""


def load(folder: Path, text: str, types: str | None = TYPES):
    if types is not None:
        (folder / "types.toml").write_text(types)
    path = folder / "c.toml"
    path.write_text(text)
    return load_campaign(path)


def one_line_error(folder: Path, text: str, types: str | None = TYPES) -> str:
    with pytest.raises(CampaignSpecError) as info:
        load(folder, text, types)
    message = str(info.value)
    assert "\n" not in message, message
    assert message.startswith(f"{folder / 'c.toml'}: "), message
    return message


def test_the_campaign_loads_with_the_node_types_path_as_written(tmp_path):
    spec = load(tmp_path, spec_text())
    (log,) = spec.logs
    assert (log.node_types, log.platform, log.nodes) == ("types.toml", None, 40)
    (instance,) = spec.instances()
    assert instance.params["platform"] == {"node_types": "types.toml"}
    assert set(instance.params) == OLD_PARAMS | {"compute_sharing"}
    assert recorded_platform_path(spec, log) == spec.output_root / "platforms" / "kth.xml"


def test_other_machines_keep_their_parameters_and_ids(tmp_path):
    """``platform`` and ``nodes`` enter the parameters as before the key existed; the same 40 nodes given as node
    types are another simulation (another id)."""
    plain = '[[experiments]]\nname = "E"\nscheduler = "easy"\n'
    shipped = load(tmp_path, spec_text('platform = "kth-sp2"', plain)).instances()[0]
    cluster = load(tmp_path, spec_text("nodes = 40", plain)).instances()[0]
    typed = load(tmp_path, spec_text(experiments=plain)).instances()[0]
    assert shipped.params["platform"] == "kth-sp2"
    assert cluster.params["platform"] == {"nodes": 40, "speed": 1e9}
    for instance in (shipped, cluster):
        assert set(instance.params) == OLD_PARAMS
        assert instance.id == instance_id(["kth", "easy", "recorded", "rigid", "s0"], instance.params)
    assert typed.id not in (shipped.id, cluster.id)


def test_the_generated_platform_is_the_one_of_batreplay_platform(tmp_path):
    """The hosts carry the node types; the text is what ``batreplay platform --node-types`` writes (same
    function), and it is not rewritten when unchanged."""
    spec = load(tmp_path, spec_text())
    (instance,) = spec.instances()
    assert prepare_platforms(spec, [instance]) == [spec.output_root / "platforms" / "kth.xml"]
    generated = spec.output_root / "platforms" / "kth.xml"
    platform = read_platform(generated)
    assert platform.node_types == {"small": list(range(24)), "big": list(range(24, 40))}
    assert platform.cores == [2] * 24 + [4] * 16
    assert [(h.prop("node_type"), h.prop("slots"), float(h.prop("speed")), h.speed) for h in platform.hosts] == \
        [("small", "2", 1e9, 1e9)] * 24 + [("big", "3", 2e9, 2e9)] * 16
    (cli,) = platform_command(None, None, tmp_path / "cli.xml", node_types=read_node_types(tmp_path / "types.toml"))
    assert generated.read_text() == cli.read_text()
    before = generated.stat().st_mtime_ns
    prepare_platforms(spec, [instance])
    assert generated.stat().st_mtime_ns == before


def test_the_shipped_lcg_node_types_give_the_shipped_lcg_platform(tmp_path):
    spec = load(tmp_path, spec_text(f'node_types = "{(REPO_ROOT / "expe/platforms/lcg-grid.toml").as_posix()}"'),
                types=None)
    prepare_platforms(spec, spec.instances())
    assert (spec.output_root / "platforms" / "kth.xml").read_text() == \
        (REPO_ROOT / "expe/platforms/lcg-grid.xml").read_text()


def test_a_variant_scales_each_node_type(tmp_path):
    spec = load(tmp_path, spec_text(experiments=EASY_SLOTS + 'platform = "nodes-x2+speed-d2"\n'))
    (instance,) = spec.instances()
    (path,) = prepare_platforms(spec, [instance])
    assert path == spec.output_root / "platforms" / "kth__nodes-x2+speed-d2.xml"
    platform = read_platform(path)
    assert {name: len(ids) for name, ids in platform.node_types.items()} == {"small": 48, "big": 32}
    assert platform.cores == [2] * 48 + [4] * 32
    assert [(h.prop("slots"), float(h.prop("speed")), h.speed) for h in platform.hosts] == \
        [("2", 0.5e9, 0.5e9)] * 48 + [("3", 1e9, 1e9)] * 32


def test_a_variant_must_give_whole_counts_on_each_node_type(tmp_path):
    """25 + 15 nodes halve to 20 in all, but not type by type: refused when the file is loaded."""
    types = TYPES.replace("count = 24", "count = 25").replace("count = 16", "count = 15")
    message = one_line_error(tmp_path, spec_text(experiments=EASY_SLOTS + 'platform = "nodes-d2"\n'), types)
    assert re.search(r"\[\[experiments\]\] #1, key 'platform': variant nodes-d2 of log 'kth': 25 nodes x 0.5 = 12.5",
                     message), message


@pytest.mark.parametrize(("machine", "types", "pattern"), [
    ('node_types = "nosuch.toml"', None, r"nosuch.toml: no such node types file"),
    ('node_types = "types.toml"', TYPES.replace("count = 16", "count = 0"), r"node type 2: .*count = 0"),
    ('node_types = "types.toml"', TYPES.replace("cores = 4", "cores = 4 4"), r"not valid TOML.*line 11, column 11"),
    ('node_types = "types.toml"', TYPES + "colour = 'red'\n", r"unknown key\(s\) colour"),
    ("node_types = 3", TYPES, "expected a string"),
], ids=["missing", "bad count", "bad TOML", "unknown key", "not a string"])
def test_a_bad_node_types_file_is_one_line_naming_the_key(tmp_path, machine, types, pattern):
    message = one_line_error(tmp_path, spec_text(machine), types)
    assert f"{tmp_path / 'c.toml'}: [[logs]] #1, key 'node_types': " in message, message
    assert re.search(pattern, message), message


@pytest.mark.parametrize(("machine", "how"), [
    ('platform = "kth-sp2"\nnode_types = "types.toml"', "both 'platform' and 'node_types'"),
    ('nodes = 40\nnode_types = "types.toml"', "both 'nodes' and 'node_types'"),
    ('platform = "kth-sp2"\nnodes = 40\nnode_types = "types.toml"', "all three"),
    ("", "neither"),
])
def test_exactly_one_machine_key(tmp_path, machine, how):
    message = one_line_error(tmp_path, spec_text(machine))
    assert "[[logs]] #1: give one of 'platform'" in message and "'nodes'" in message and "'node_types'" in message
    assert message.endswith(f"not {how}"), message


def test_an_instance_runs_through_the_worker_on_the_generated_platform(tmp_path, monkeypatch):
    """EASY on job slots, least-loaded node selection, compute sharing: the worker runs the instance from the
    campaign root, and its run.json names the generated platform file."""
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the worker goes to the root itself (monkeypatch restores the cwd)
    spec = load(tmp_path, spec_text())
    (instance,) = spec.instances()
    prepare_platforms(spec, [instance])
    task = task_for(instance, spec)
    generated = spec.output_root / "platforms" / "kth.xml"
    assert task["platform"] == str(generated)
    assert execute(task) == 0
    run_dir = spec.output_root / instance.id
    run = json.loads((run_dir / "run.json").read_text())
    assert run["spec"]["platform"] == str(generated)
    assert run["spec"]["scheduler_options"] == {"slots": True, "node_selection": "least-loaded"}
    assert run["spec"]["compute_sharing"] is True
    assert Path(run["platform_file"]).resolve() == generated.resolve()
    manifest = json.loads((run_dir / "instance.json").read_text())
    assert manifest["platform_file"] == str(generated)
    rows = (run_dir / "out_jobs.csv").read_text().splitlines()
    assert len(rows) == 1 + 50 and not any(",REJECTED," in row for row in rows)  # every job found its slots
