"""The folders the web GUI may read: every way out is refused with a one-line message naming the parameter."""

from __future__ import annotations

import pytest

from batreplay.ui.sandbox import Sandbox, SandboxError


@pytest.fixture
def sandbox(tmp_path):
    inputs = tmp_path / "inputs"
    (inputs / "logs").mkdir(parents=True)
    (inputs / "logs" / "a.swf").write_text("; nothing\n")
    (tmp_path / "outside.swf").write_text("; secret\n")
    (inputs / "link.swf").symlink_to(tmp_path / "outside.swf")
    (inputs / "inner-link.swf").symlink_to(inputs / "logs" / "a.swf")
    return Sandbox(tmp_path / "runs", [inputs])


def test_a_file_inside_is_found_relative_to_its_folder_or_absolute(sandbox, tmp_path):
    inside = tmp_path / "inputs" / "logs" / "a.swf"
    assert sandbox.resolve("logs/a.swf", "workload") == inside
    assert sandbox.resolve(str(inside), "workload") == inside
    assert sandbox.resolve("inner-link.swf", "workload") == inside  # a link that stays inside is followed


@pytest.mark.parametrize("text, reason", [
    ("../outside.swf", "contains '..'"),
    ("logs/../logs/a.swf", "contains '..'"),  # even when it would land back inside
    ("link.swf", "outside the folders"),  # a symbolic link out
    ("OUTSIDE", "outside the folders"),  # an absolute path out (filled in below)
    ("/etc", "outside the folders"),
    ("missing.swf", "not found"),
    ("", "no path given"),
    ("a\x00b", "not a valid path"),
])
def test_every_way_out_is_refused_naming_the_parameter(sandbox, tmp_path, text, reason):
    if text == "OUTSIDE":
        text = str(tmp_path / "outside.swf")
    with pytest.raises(SandboxError) as caught:
        sandbox.resolve(text, "platform")
    message = str(caught.value)
    assert message.startswith("platform: ") and reason in message and "\n" not in message


def test_kind_is_checked(sandbox):
    with pytest.raises(SandboxError, match="not a file"):
        sandbox.resolve("logs", "workload")
    assert sandbox.resolve("logs", "sessions", kind="dir").name == "logs"


def test_the_file_list_holds_only_what_is_inside(sandbox, tmp_path):
    found = sandbox.files((".swf",))
    assert tmp_path / "inputs" / "logs" / "a.swf" in found
    assert tmp_path / "inputs" / "inner-link.swf" in found
    assert tmp_path / "inputs" / "link.swf" not in found  # its real file is outside
    assert all(sandbox.contains(path) for path in found)


def test_an_allowed_folder_must_exist(tmp_path):
    with pytest.raises(SandboxError, match="--allow .*: not a directory"):
        Sandbox(tmp_path / "runs", [tmp_path / "nope"])


def test_a_path_outside_gets_the_same_message_whether_it_exists_or_not(tmp_path):
    """Issue 25, item 14: no error tells which files exist outside the allowed folders, also through a link of an
    allowed folder that leads out (whose target may or may not exist)."""
    inputs, outside = tmp_path / "inputs", tmp_path / "outside"
    inputs.mkdir()
    outside.mkdir()
    (outside / "there.swf").write_text("; secret\n")
    (inputs / "out").symlink_to(outside)  # a folder link leading out
    (inputs / "dangling").symlink_to(tmp_path / "nowhere")  # a link leading out to nothing
    sandbox = Sandbox(tmp_path / "runs", [inputs])

    def message(text: str, kind: str = "file") -> str:
        with pytest.raises(SandboxError) as caught:
            sandbox.resolve(text, "workload", kind=kind)
        assert str(caught.value).startswith(f"workload: {text} ")
        return str(caught.value).removeprefix(f"workload: {text} ")

    pairs = [("out/there.swf", "out/missing.swf"), (str(inputs / "out/there.swf"), str(inputs / "out/missing.swf")),
             (str(outside / "there.swf"), str(outside / "missing.swf")), ("out", "dangling"),
             ("out/there.swf", "dangling/x.swf")]
    for existing, missing in pairs:
        for kind in ("file", "dir"):
            assert message(existing, kind) == message(missing, kind), (existing, missing, kind)
            assert "is outside the folders this app may read" in message(existing, kind)
    # inside, missing and present are told apart (nothing to hide there)
    assert "not found" in message("missing.swf")


def test_a_path_too_long_is_refused_before_any_lookup(sandbox):
    with pytest.raises(SandboxError, match=r"^platform: a path of 5,000 characters is too long"):
        sandbox.resolve("a" * 5000, "platform")
