"""environment.yml states the same dependencies, with the same version floors, as pyproject.toml."""

import re
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"pytorch": "torch"}  # conda's name -> pip's
CONDA_ONLY = {"python", "cpuonly", "pip"}  # conda's way of pinning the interpreter and the CPU build, and pip


def split(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"\s*([A-Za-z0-9_.-]+)\s*([^;]*)", requirement).groups()
    return name.lower(), spec.replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip = dict(split(r) for r in project["dependencies"])
    for extra in project["optional-dependencies"].values():
        pip.update(split(r) for r in extra)
    conda = {}
    entries = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    for entry in [e for e in entries if isinstance(e, str)] + [
        p for e in entries if isinstance(e, dict) for p in e["pip"]
    ]:
        name, spec = split(entry)
        if name not in CONDA_ONLY:
            conda[CONDA_NAMES.get(name, name)] = spec
    assert conda == pip
