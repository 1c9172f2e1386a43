"""docker/: the decision-process image and the compose file that runs it next to a Batsim 4.2 container.

No Docker engine is needed: ``docker compose config`` (or the older ``docker-compose config``) only reads and
renders the file; those tests are skipped when no compose client is installed. The Dockerfile is checked
against pyproject.toml without Docker.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib

import pytest

from conftest import REPO_ROOT

DOCKER = REPO_ROOT / "docker"
COMPOSE_FILE = DOCKER / "compose.yaml"
COMPOSE_VARIABLES = ("BATSIM_IMAGE", "SCHEDULER", "SCHEDULER_ARGS", "BATSIM_ARGS", "PLATFORM", "WORKLOAD",
                     "BATREPLAY_IN", "BATREPLAY_PLATFORMS", "BATREPLAY_SCHEDULERS", "BATREPLAY_OUT", "HOST_UID",
                     "HOST_GID")


def _compose_client() -> list[str] | None:
    """``docker compose`` (plugin) if it answers, else ``docker-compose``, else None."""
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


@pytest.fixture(scope="module")
def compose(tmp_path_factory):
    """Run ``<compose client> --env-file EMPTY -f docker/compose.yaml ARGS`` with the given variables only."""
    client = _compose_client()
    if client is None:
        pytest.skip("no Docker Compose client (neither `docker compose` nor `docker-compose`) to validate "
                    "docker/compose.yaml")
    empty_env = tmp_path_factory.mktemp("compose") / "empty.env"
    empty_env.write_text("")

    def run(*args: str, **variables: str) -> str:
        env = {k: v for k, v in os.environ.items() if k not in COMPOSE_VARIABLES}
        env.update(variables)
        done = subprocess.run([*client, "--env-file", str(empty_env), "-f", str(COMPOSE_FILE), *args],
                              capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, f"{' '.join(client)} {' '.join(args)} failed:\n{done.stderr}"
        return done.stdout

    return run


def test_compose_file_is_valid_and_has_both_services(compose):
    assert set(compose("config", "--services").split()) == {"batsim", "scheduler"}


def test_compose_wires_batsim_to_the_decision_process(compose):
    rendered = compose("config")
    bound = re.findall(r"tcp://\*:(\d+)", rendered)
    connected = re.findall(r"tcp://scheduler:(\d+)", rendered)
    assert bound and bound == connected, "Batsim must connect to the port the scheduler service binds"
    assert "oarteam/batsim:4.2.1" in rendered  # the default image, a build argument
    assert "-e /data/out/out" in rendered  # out_jobs.csv etc. in the outputs volume
    assert re.search(r"/in:/data/in:ro", rendered) and re.search(r"/out:/data/out", rendered)
    assert re.search(r"/platforms:/data/platforms:ro", rendered)  # the shipped platforms by default
    assert re.search(r"/schedulers:/data/schedulers:ro", rendered)  # a user's own scheduler files
    assert "-p /data/platforms/kth-sp2.xml" in rendered and "-w /data/in/workload.json" in rendered
    assert "schedulers/easy.py" in rendered and "-t 0" in rendered


def test_compose_variables_choose_image_scheduler_and_flags(compose):
    rendered = compose("config", BATSIM_IMAGE="example.org/batsim:4.2.0", SCHEDULER="/data/schedulers/mySched.py",
                       BATSIM_ARGS="--enable-dynamic-jobs --acknowledge-dynamic-jobs", WORKLOAD="kth.json",
                       BATREPLAY_SCHEDULERS="/home/me/scheds", BATREPLAY_IN="/home/me/runs/kth")
    assert "example.org/batsim:4.2.0" in rendered and "oarteam/batsim" not in rendered
    assert "/data/schedulers/mySched.py" in rendered and "schedulers/easy.py" not in rendered
    assert "/home/me/scheds:/data/schedulers:ro" in rendered and "/home/me/runs/kth:/data/in:ro" in rendered
    assert "--enable-dynamic-jobs --acknowledge-dynamic-jobs" in rendered
    assert "-w /data/in/kth.json" in rendered


def test_compose_yaml_parses():
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (the compose tests validate the file)")
    document = yaml.safe_load(COMPOSE_FILE.read_text())
    assert set(document["services"]) == {"batsim", "scheduler"}
    assert document["services"]["batsim"]["build"]["args"]["BATSIM_IMAGE"] == "${BATSIM_IMAGE:-oarteam/batsim:4.2.1}"


def _copied_sources(dockerfile) -> set[str]:
    sources = set()
    for line in dockerfile.read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"]:
            sources.update(word.rstrip("/") for word in words[1:-1] if not word.startswith("--"))
    return sources


def test_image_gets_every_folder_the_package_is_built_from():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    needed = set(project["tool"]["setuptools"]["package-dir"].values())
    needed |= {"pyproject.toml", "uv.lock", project["project"]["readme"]}
    copied = _copied_sources(DOCKER / "Dockerfile")
    assert needed <= copied, f"docker/Dockerfile does not copy {sorted(needed - copied)}"
    assert all((REPO_ROOT / source).exists() for source in copied)
    text = (DOCKER / "Dockerfile").read_text()
    assert "FROM python:3.11-slim" in text and "uv sync --frozen --no-dev" in text


def test_batsim_built_from_source_as_ci_builds_it():
    """The from-source Batsim image runs the very build command of .ci/run (same script, same Batsim 4.2.x)."""
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    dockerfile = (DOCKER / "batsim-from-source.Dockerfile").read_text()
    assert "SKIP_PYBATSIM=1 bash" in ci and "build.sh" in ci
    assert re.search(r"SKIP_PYBATSIM=1 bash \S*build\.sh", dockerfile)
    assert "4.2.*" in ci and "FROM debian:bookworm" in dockerfile  # build.sh targets Debian 12 (SimGrid 3.32)
    assert 'ENTRYPOINT ["batsim"]' in dockerfile
