"""Node types (Caspart et al., GridKa: CPU rate, cores, job slots, instances per type): reading them from TOML,
writing them as SimGrid clusters, reading them back, scaling them type by type, and the command line.
That real Batsim accepts such a platform and sends the same resources as the embedded engine is checked in
tests/engine/test_real_batsim_compat.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from batreplay.platforms.generate import cluster_platform, scale_platform, write_platform
from batreplay.platforms.model import Host, Platform
from batreplay.platforms.node_types import NodeType, NodeTypeError, read_node_types
from batreplay.platforms.reader import PlatformError, read_platform

TYPES_TOML = """
[[node_types]]
name = "fat"
count = 4
cores = 8
slots = 16
speed = 2.5e9

[[node_types]]
name = "thin"
count = 12
speed = 1e9
"""


def test_types_file_reads_into_node_types(tmp_path):
    path = tmp_path / "types.toml"
    path.write_text(TYPES_TOML)
    assert read_node_types(path) == [NodeType("fat", 4, 2.5e9, cores=8, slots=16), NodeType("thin", 12, 1e9)]
    assert read_node_types(path)[1].slots == 1  # one slot per core by default


@pytest.mark.parametrize(("text", "message"), [
    ('[[node_types]]\nname = "a"\ncount = 0\nspeed = 1e9\n', "node type 1: node type 'a': count = 0"),
    ('[[node_types]]\nname = "a"\ncount = 2\nspeed = -1\n', "node type 1: node type 'a': speed = -1"),
    ('[[node_types]]\nname = "a"\ncount = 2\n', "node type 1: missing key.*speed"),
    ('[[node_types]]\nname = "a"\ncount = 2\nspeed = 1e9\nram = 4\n', "node type 1: unknown key.*ram"),
    ('[[node_types]]\nname = "a b"\ncount = 2\nspeed = 1e9\n', "use letters, digits"),
    ('[[node_types]]\nname = "a"\ncount = 1\nspeed = 1e9\n[[node_types]]\nname = "a"\ncount = 1\nspeed = 2e9\n',
     "node type 2: the name 'a' is given twice"),
    ('[[node_types]]\nname = "a"\ncount = 1\nspeed = 1e9\nslots = 1.5\n', "slots = 1.5"),
    ('node_types = 3\n', "expected one or more"),
    ('[[node_types]\n', "not valid TOML"),
])
def test_bad_types_files_name_file_and_field(tmp_path, text, message):
    path = tmp_path / "types.toml"
    path.write_text(text)
    with pytest.raises(NodeTypeError, match=f"types.toml.*{message}"):
        read_node_types(path)


def test_generated_platform_reads_back_with_types_cores_and_slots(tmp_path):
    types = [NodeType("fat", 4, 2.5e9, cores=8, slots=16), NodeType("thin", 12, 1e9)]
    platform = read_platform(write_platform(tmp_path / "p.xml", node_types=types))
    assert platform.node_types == {"fat": [0, 1, 2, 3], "thin": list(range(4, 16))}
    assert [h.cores for h in platform.hosts] == [8] * 4 + [1] * 12
    assert [h.slots for h in platform.hosts] == [16] * 4 + [1] * 12
    assert [h.speed for h in platform.hosts] == [2.5e9] * 4 + [1e9] * 12
    assert platform.hosts[0].zone_properties == (("node_type", "fat"), ("slots", "16"), ("speed", "2500000000.0"))
    # hosts keep Batsim's numbering: zero-padded names, ids in name order, across the types
    assert platform.names[:5] == ["node_00", "node_01", "node_02", "node_03", "node_04"]


@pytest.mark.parametrize(("nodes", "speed", "counts", "speeds"), [
    (2.0, 1.0, (8, 24), (2.5e9, 1e9)), (0.5, 1.0, (2, 6), (2.5e9, 1e9)), (1.0, 2.0, (4, 12), (5e9, 2e9)),
    (1.0, 0.5, (4, 12), (1.25e9, 0.5e9)),
])
def test_scaled_variants_apply_per_type(tmp_path, nodes, speed, counts, speeds):
    base = write_platform(tmp_path / "p.xml", node_types=[NodeType("fat", 4, 2.5e9, cores=8, slots=16),
                                                          NodeType("thin", 12, 1e9)])
    scaled = tmp_path / "scaled.xml"
    scaled.write_text(scale_platform(base, nodes, speed))
    platform = read_platform(scaled)
    groups = platform.host_groups()
    assert [g[0] for g in groups] == list(counts) and [g[1] for g in groups] == list(speeds)
    assert [(g[2], dict(g[3])) for g in groups] == [
        (8, {"node_type": "fat", "slots": "16", "speed": repr(speeds[0])}),
        (1, {"node_type": "thin", "slots": "1", "speed": repr(speeds[1])})]


def test_untyped_platforms_are_written_as_before():
    """No node types: no core attribute and no property on the compute clusters (the golden form)."""
    text = cluster_platform(4, 1e9)
    assert "core=" not in text and 'id="node_type"' not in text and 'radical="0-3"' in text


def test_a_host_without_the_slots_property_has_one_slot():
    assert Host(0, "n", 1e9, cores=8).slots == 1  # what a scheduler can count: Batsim sends no core count
    assert Host(0, "n", 1e9, cores=8, properties=(("slots", "8"),)).slots == 8


def test_slots_property_must_be_a_whole_number(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text(cluster_platform(2, 1e9).replace(
        'lat="0us" />', 'lat="0us"><prop id="slots" value="two" /></cluster>', 1))
    with pytest.raises(PlatformError, match="property 'slots' = 'two'"):
        read_platform(path)
    with pytest.raises(ValueError, match="slots='0'"):  # the model checks it too
        Platform(hosts=(Host(0, "n", 1e9, properties=(("slots", "0"),)),), master_host="m")


def test_platform_command_with_node_types(tmp_path):
    types = tmp_path / "types.toml"
    types.write_text(TYPES_TOML)
    out = tmp_path / "typed.xml"
    done = subprocess.run([sys.executable, "-m", "batreplay.cli", "platform", "--node-types", str(types), "--out",
                           str(out), "--variants"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert read_platform(out).node_types["fat"] == [0, 1, 2, 3]
    assert read_platform(tmp_path / "typed-nodes-x2.xml").node_types["fat"] == list(range(8))
    done = subprocess.run([sys.executable, "-m", "batreplay.cli", "platform", "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "give --nodes N" in done.stderr
    done = subprocess.run([sys.executable, "-m", "batreplay.cli", "platform", "--nodes", "4", "--node-types",
                           str(types), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode != 0 and "give one of them" in done.stderr
