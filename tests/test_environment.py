"""environment.yml states the same dependencies, with the same version floors, as pyproject.toml."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"pytorch": "torch"}          # conda's name -> pip's
CONDA_ONLY = {"python", "cpuonly"}          # conda's way of pinning the interpreter and the CPU build


def split(requirement: str) -> tuple[str, str]:
    name, spec = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(.*)", requirement).groups()
    return name.lower(), spec.replace(" ", "")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip = dict(split(r) for r in project["dependencies"])
    for extra in project["optional-dependencies"].values():
        pip.update(split(r) for r in extra)
    conda = {}
    for entry in yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]:
        name, spec = split(entry)
        if name not in CONDA_ONLY:
            conda[CONDA_NAMES.get(name, name)] = spec
    assert conda == pip
