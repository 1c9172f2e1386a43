"""The import direction of the package: a straight line along the data path, no import back up.

Layers, lowest first (a module may import its own layer and lower ones only)::

    foundation  batreplay.atomic, batreplay.deadline, batreplay.console (files, wall-clock limits, the console),
                batreplay.options (run options declared once: checks, flags, campaign keys, form fields),
                batreplay.toml_file (TOML input files read with one-line errors),
                batreplay.formats (Batsim's output files: the engine writes them, analysis reads them, so both stand on them)
    inputs      batreplay.workloads, batreplay.platforms, batreplay.sitemodels (site models: fitted from logs, drawn as
                workloads)
    decisions   batreplay.schedulers, batreplay.replay (users)
    engine      batreplay.engine (embedded Batsim, simulate()),
                batreplay.realbatsim (a real Batsim over ZeroMQ, the other engine simulate() may choose)
    analysis    batreplay.analysis
    run         batreplay.run (one run: its specification and run directory)
    learning    batreplay.gym (the Gymnasium environment: episodes are runs' workloads on the embedded engine)
    validation  batreplay.validation (site models against a log's held-out jobs: it makes and reads runs)
    campaign    batreplay.campaign
    reports     batreplay.reports (campaign reports: they read campaign results)
    ui          batreplay.ui (the web GUI: it launches runs and campaigns, and shows their analysis)
    cli         batreplay.cli

Every import statement counts, including those inside functions (lazy imports), as parsed from the source files.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO_ROOT

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("batreplay.atomic", "batreplay.deadline", "batreplay.console", "batreplay.options",
                    "batreplay.toml_file", "batreplay.formats")),
    ("inputs", ("batreplay.workloads", "batreplay.platforms", "batreplay.sitemodels")),
    ("decisions", ("batreplay.schedulers", "batreplay.replay")),
    ("engine", ("batreplay.engine", "batreplay.realbatsim")),
    ("analysis", ("batreplay.analysis",)),
    ("run", ("batreplay.run",)),
    ("learning", ("batreplay.gym",)),
    ("validation", ("batreplay.validation",)),
    ("campaign", ("batreplay.campaign",)),
    ("reports", ("batreplay.reports",)),
    ("ui", ("batreplay.ui",)),
    ("cli", ("batreplay.cli",)),
]

#: Source folder of each package of the ``batreplay`` namespace (pyproject's ``package-dir``).
FOLDERS = {"batreplay": "batreplay", "batreplay.workloads": "workloads", "batreplay.platforms": "platforms",
           "batreplay.sitemodels": "sitemodels",
           "batreplay.formats": "formats", "batreplay.schedulers": "schedulers", "batreplay.replay": "replay",
           "batreplay.engine": "engine", "batreplay.realbatsim": "realbatsim",
           "batreplay.analysis": "analysis", "batreplay.run": "run", "batreplay.validation": "validation",
           "batreplay.campaign": "campaign", "batreplay.reports": "reports", "batreplay.ui": "ui",
           "batreplay.gym": "learning"}


def layer_of(module: str) -> int | None:
    """Index in :data:`LAYERS` of a ``batreplay...`` module name, or None for ``batreplay`` itself."""
    for index, (_name, prefixes) in enumerate(LAYERS):
        if any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes):
            return index
    return None


def source_modules() -> dict[str, Path]:
    """Module name -> source file, for every ``.py`` file of the package folders."""
    modules: dict[str, Path] = {}
    for package, folder in FOLDERS.items():
        for path in sorted((REPO_ROOT / folder).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    return modules


def imported_modules(path: Path, module: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every ``batreplay`` import of the file (absolute and relative)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "batreplay"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "batreplay":
                continue
            if base in FOLDERS or base == "batreplay":  # `from batreplay.engine import simulator`
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def test_every_package_module_has_a_layer():
    unplaced = [name for name in source_modules() if name != "batreplay" and layer_of(name) is None]
    assert unplaced == [], f"modules outside every layer of tests/test_layers.py: {unplaced}"


def test_no_import_runs_back_up_the_layers():
    offences = []
    for module, path in source_modules().items():
        own = layer_of(module)
        if own is None:
            continue
        for line, target in imported_modules(path, module):
            target_layer = layer_of(target)
            if target_layer is not None and target_layer > own:
                offences.append(f"{path.relative_to(REPO_ROOT)}:{line}: {module} ({LAYERS[own][0]}) imports "
                                f"{target} ({LAYERS[target_layer][0]})")
    assert offences == [], "imports against the layer order:\n" + "\n".join(offences)


def test_the_check_sees_a_lower_layer_importing_a_higher_one(tmp_path):
    """The rule is not vacuous: a workloads module importing the runner is caught, lazily imported or not."""
    path = tmp_path / "convert.py"
    path.write_text("import json\n\ndef f():\n    from batreplay.run.runner import run\n    return run\n")
    (line, target), = imported_modules(path, "batreplay.workloads.convert")
    assert (line, target) == (4, "batreplay.run.runner")
    assert layer_of(target) > layer_of("batreplay.workloads.convert")
    path.write_text("from ..engine import simulate\n")
    assert imported_modules(path, "batreplay.workloads.convert") == [(1, "batreplay.engine.simulate")]


@pytest.mark.parametrize("package", sorted(FOLDERS))
def test_every_package_says_what_it_is_and_what_it_may_import(package):
    source = (REPO_ROOT / FOLDERS[package] / "__init__.py").read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source)) or ""
    assert "placeholder" not in docstring.lower() and len(docstring.split()) >= 25, (
        f"{FOLDERS[package]}/__init__.py: give one paragraph on what the package is and what it may import")
    assert "import" in docstring, f"{FOLDERS[package]}/__init__.py does not say what the package may import"
