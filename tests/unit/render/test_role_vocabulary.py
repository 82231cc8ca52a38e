"""One vocabulary: every role variable render writes is declared in that role's meta/argument_specs.yml,
and the rendered values pass Ansible's own argument-spec validation for every host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ibprov.clusterspec import load_spec
from ibprov.render import render_files
from ibprov.resources import roles_dir

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


def _role_specs() -> dict[str, dict[str, Any]]:
    specs = {}
    for path in sorted(roles_dir().glob("ib_*/meta/argument_specs.yml")):
        data = yaml.safe_load(path.read_text())
        specs[path.parent.parent.name] = data["argument_specs"]["main"].get("options", {})
    return specs


def _host_vars(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Effective variables per host: group_vars of the host's groups, then its own (inline in hosts.yml)."""
    hosts_doc = yaml.safe_load(files["inventory/hosts.yml"])
    groups = hosts_doc["all"]["children"]
    out: dict[str, dict[str, Any]] = {}
    every = {h for body in groups.values() for h in (body.get("hosts") or {})}  # a controller outside ib_nodes too
    for host in sorted(every):
        merged: dict[str, Any] = {}
        for group in ("all", *[g for g, body in groups.items() if host in (body.get("hosts") or {})]):
            rel = f"inventory/group_vars/{group}.yml"
            if rel in files:
                merged.update(yaml.safe_load(files[rel]) or {})
        for body in groups.values():  # its own variables, inline wherever hosts.yml lists it with some
            merged.update((body.get("hosts") or {}).get(host) or {})
        out[host] = merged
    return out


def test_every_role_has_an_argument_spec() -> None:
    assert set(_role_specs()) >= {"ib_stack", "ib_sm", "ib_ipoib", "ib_facts", "ib_mpi", "ib_slurm_topology"}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_rendered_role_variables_are_declared_and_valid(example: Path) -> None:
    specs = _role_specs()
    files = render_files(load_spec(example), synthetic_guids=True).files
    for host, variables in _host_vars(files).items():
        for role, options in specs.items():
            mine = {k: v for k, v in variables.items() if k.startswith(role + "_")}
            undeclared = sorted(set(mine) - set(options))
            assert not undeclared, f"{example.name}: {host}: {undeclared} not in roles/{role}/meta/argument_specs.yml"
            result = ArgumentSpecValidator(options).validate(mine)
            assert not result.error_messages, f"{example.name}: {host}: {role}: {result.error_messages}"
        strays = sorted(k for k in variables if k.startswith("ib_") and not any(k.startswith(r + "_") for r in specs))
        assert not strays, f"{example.name}: {host}: variables of no role: {strays}"
