"""The promise of `ibprov validate`: if a spec validates, it renders files the real OpenSM 3.3.23 takes as meant.

A property test generates random specs within the schema (names and descriptions drawn from all of Unicode,
random QoS tables, partitions, routing engines, fat-tree parameters). Every spec either fails validation with
positioned problems, or validates, renders, and passes the twin proof: SUBNET UP under the planned master with
the planned routing engine (no fall-back), no partitions/QoS parse error, every PKey table as planned, and a
node-name-map the diags read with one name per node GUID, that node's own.

Seeded and bounded for `make test`; `make fuzz` runs it longer with a random seed. A counterexample the long
run finds is written to ``IBPROV_FUZZ_SAVE`` (default: out/fuzz-counterexamples/) as a spec: add it to
REGRESSIONS below, with the fix.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from ibprov.clusterspec import LoadedSpec, load_spec_text
from ibprov.clusterspec.units import MTU_CODE, RATE_CODE
from ibprov.errors import SpecError
from ibprov.identity.guids import GuidBook
from ibprov.probes import ibnetdiscover
from ibprov.render import render_files
from ibprov.twin.bringup import TwinRun
from ibprov.twin.prove import prove

pytestmark = pytest.mark.sim

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("IBPROV_SIM_FUZZ_EXAMPLES", "800"))
SEEDED = os.environ.get("IBPROV_SIM_FUZZ_RANDOM", "") == ""
SAVE = Path(os.environ.get("IBPROV_FUZZ_SAVE", str(REPO / "out" / "fuzz-counterexamples")))
STATS: dict[str, int] = {"tried": 0, "valid": 0}

ENGINES = ["minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp"]


def rarely(odd: st.SearchStrategy[Any], usual: st.SearchStrategy[Any], one_in: int = 30) -> st.SearchStrategy[Any]:
    """``odd`` about once in ``one_in`` draws: each spec has dozens of fields, and a spec with one invalid
    field proves only that validation says so."""
    return st.sampled_from(range(one_in)).flatmap(lambda i: odd if i == one_in - 1 else usual)


USUAL_ENGINES = ["minhop", "updn", "dnup", "ftree", "lash", "nue", "dfsssp", "sssp"]
SAFE_NAME = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True)
ANY_TEXT = st.text(max_size=12)  # all of Unicode: control characters, quotes, '#', ',' ...
NAME = rarely(ANY_TEXT, SAFE_NAME)
PRINTABLE = rarely(
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=64),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ._/()=,;:'-]{0,40}[A-Za-z0-9)]", fullmatch=True),
    4,
)
TEXT = st.one_of(st.none(), rarely(st.text(max_size=70), PRINTABLE, one_in=8))
VLARB = rarely(
    st.lists(st.tuples(st.integers(0, 14), st.integers(0, 255)), min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 64)), min_size=1, max_size=4),
    one_in=4,
)
SL2VL = rarely(
    st.lists(st.integers(0, 15), min_size=16, max_size=16), st.lists(st.integers(0, 1), min_size=16, max_size=16), 10
)


def _opt(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


def _tables(draw: st.DrawFn) -> dict[str, Any]:
    def sometimes(strategy: st.SearchStrategy[Any]) -> Any:
        return draw(rarely(strategy, st.none(), one_in=3))

    out = {
        "max_vls": sometimes(rarely(st.just(1), st.sampled_from([2, 4, 8, 15]), 8)),
        "high_limit": sometimes(st.integers(0, 255)),
        "vlarb_high": sometimes(VLARB),
        "vlarb_low": sometimes(VLARB),
        "sl2vl": sometimes(SL2VL),
    }
    return {k: [list(p) for p in v] if k.startswith("vlarb") and v else v for k, v in out.items() if v is not None}


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    prefix = draw(NAME)
    count = draw(st.integers(2, 6))
    names = [f"{prefix}{i + 1:02d}" for i in range(count)]
    nodes = []
    for i, name in enumerate(names):
        node: dict[str, Any] = {
            "name": name,
            "groups": ["infra" if i < 2 else "compute"],
            "hcas": [{"device": "mlx5_0"}],
        }
        description = draw(TEXT)
        if description is not None:
            node["description"] = description
        nodes.append(node)
    spec: dict[str, Any] = {"version": 1, "cluster": {"name": draw(NAME)}, "nodes": nodes}
    spec.update(_fabric(draw, names))
    engines = draw(
        st.lists(rarely(st.sampled_from(ENGINES), st.sampled_from(USUAL_ENGINES), 4), min_size=1, max_size=2)
    )
    instances = [{"node": names[0], "priority": 15}]
    if draw(st.booleans()):
        instances.append({"node": names[1], "priority": draw(st.integers(0, 15))})
    spec["subnet_manager"] = {
        "routing_engine": engines,
        "lmc": draw(st.sampled_from([0, 0, 0, 1, 2])),
        "instances": instances,
    }
    spec["partitions"] = [_partition(draw, names, k) for k in range(draw(st.integers(0, 3)))]
    spec["default_partition"] = {
        "membership": draw(st.sampled_from(["full", "limited"])),
        "ipoib": draw(st.booleans()),
        **_link_params(draw, "mtu", "rate"),
    }
    spec["qos"] = _qos(draw, [p["name"] for p in spec["partitions"]])
    return spec


def _link_params(draw: st.DrawFn, mtu: str, rate: str) -> dict[str, Any]:
    out = {
        mtu: draw(_opt(st.sampled_from(sorted(MTU_CODE)))),
        rate: draw(_opt(st.sampled_from(sorted(RATE_CODE)))),
        "sl": draw(rarely(st.integers(0, 15), st.sampled_from([None, None, None, 0, 1]), 10)),
    }
    return {k: v for k, v in out.items() if v is not None}


def _fabric(draw: st.DrawFn, names: list[str]) -> dict[str, Any]:
    kind = draw(st.sampled_from(["switch", "fat_tree", "fat_tree", "by_hand"]))
    if kind == "by_hand":
        return _tree_by_hand(draw, names)
    if kind == "switch":
        ports = max(4, len(names)) + draw(st.integers(0, 2))
        links = [f"leaf01:{i + 1} <-> {n}/mlx5_0:1" for i, n in enumerate(names)]
        return {
            "switches": [{"name": "leaf01", "role": "leaf", "ports": ports, "description": draw(TEXT) or "leaf01"}],
            "fabric": {"speed": draw(st.sampled_from(["QDR", "FDR", "EDR", "HDR"])), "links": links},
        }
    if draw(st.sampled_from(range(8))) == 0:  # any parameters: mostly ones the generator refuses
        radix = draw(st.sampled_from([4, 6, 8]))
        tree = {
            "radix": radix,
            "leaves": draw(st.integers(1, 3)),
            "spines": draw(st.integers(0, 2)),
            "hosts_per_leaf": draw(st.integers(1, radix)),
            "uplinks_per_leaf": draw(st.integers(0, radix)),
        }
    else:  # parameters that fit: 1-3 leaves, 0-2 spines, every leaf on every spine
        leaves = draw(st.integers(1, 3))
        spines = draw(st.integers(0, 1) if leaves == 1 else st.integers(1, 2))
        uplinks = spines * draw(st.integers(1, 2)) if spines else 0
        hosts = -(-len(names) // leaves) + draw(st.integers(0, 1))
        radix = max(hosts + uplinks, leaves * uplinks // max(spines, 1), 4)
        tree = {
            "radix": radix,
            "leaves": leaves,
            "spines": spines,
            "hosts_per_leaf": hosts,
            "uplinks_per_leaf": uplinks,
        }
    return {"fabric": {"speed": "HDR", "fat_tree": tree}}


def _tree_by_hand(draw: st.DrawFn, names: list[str]) -> dict[str, Any]:
    """Declared leaves and spines, cabled by hand: hosts spread over the leaves (rarely one on a spine),
    each leaf up to each spine (rarely a leaf left without uplinks)."""
    leaves = [f"leaf{i + 1:02d}" for i in range(draw(st.integers(1, 3)))]
    spines = [f"spine{i + 1:02d}" for i in range(draw(st.integers(0, 2)))]
    links, used = [], {sw: 0 for sw in leaves + spines}

    def cable(switch: str, other: str) -> None:
        used[switch] += 1
        links.append(f"{switch}:{used[switch]} <-> {other}")

    for i, name in enumerate(names):
        on_spine = spines and draw(st.sampled_from(range(25))) == 0
        cable(spines[0] if on_spine else leaves[i % len(leaves)], f"{name}/mlx5_0:1")
    for leaf in leaves:
        if spines and draw(st.sampled_from(range(25))) == 0:
            continue
        for spine in spines:
            used[spine] += 1
            cable(leaf, f"{spine}:{used[spine]}")
    ports = max([8, *used.values()])
    switches = [{"name": sw, "role": "leaf", "ports": ports} for sw in leaves]
    switches += [{"name": sw, "role": "spine", "ports": ports} for sw in spines]
    return {"switches": switches, "fabric": {"speed": "EDR", "links": links}}


def _partition(draw: st.DrawFn, names: list[str], k: int) -> dict[str, Any]:
    members = []
    for _ in range(draw(st.integers(1, 3))):
        member: dict[str, Any] = draw(
            st.sampled_from([{"node": n} for n in names] + [{"group": "compute"}, {"group": "infra"}, {"all": True}])
        )
        membership = draw(st.sampled_from([None, "full", "limited", "both"]))
        members.append({**member, **({"membership": membership} if membership else {})})
    return {
        "name": draw(st.one_of(st.just(f"part{k}"), NAME)),
        "pkey": draw(rarely(st.just(0x7FFF), st.one_of(st.integers(1, 0x7FFE), st.just(0x10 + k)))),
        "ipoib": draw(st.booleans()),
        "defmember": draw(st.sampled_from(["full", "limited", "both"])),
        "members": members,
        **_link_params(draw, "mtu", "rate"),
    }


def _qos(draw: st.DrawFn, partitions: list[str]) -> dict[str, Any]:
    qos: dict[str, Any] = {"enabled": draw(st.booleans()), **_tables(draw)}
    qos["default_sl"] = draw(rarely(st.integers(0, 15), st.sampled_from([0, 0, 1]), 10))
    for cls in ("ca", "switch_external", "switch_port0", "router"):
        if draw(st.integers(0, 5)) == 0:
            qos[cls] = _tables(draw)
    levels = []
    for k in range(draw(st.integers(0, 2))):
        level = {"name": draw(st.one_of(st.just(f"level{k}"), NAME)), **_link_params(draw, "mtu_limit", "rate_limit")}
        level["sl"] = draw(rarely(st.integers(0, 15), st.integers(0, 1), 10))
        use = draw(TEXT)
        if use is not None:
            level["use"] = use
        levels.append(level)
    qos["levels"] = levels
    rules = []
    for _ in range(draw(st.integers(0, 2)) if levels else 0):
        rule: dict[str, Any] = {"qos_level": draw(st.sampled_from([lv["name"] for lv in levels]))}
        if partitions and draw(st.booleans()):
            rule["partitions"] = draw(st.lists(st.sampled_from(partitions), min_size=1, max_size=2, unique=True))
        if draw(st.booleans()):
            rule["qos_class"] = draw(st.lists(st.integers(0, 255), min_size=1, max_size=2))
        use = draw(TEXT)
        if use is not None:
            rule["use"] = use
        rules.append(rule)
    qos["match_rules"] = rules
    return qos


def _expected_names(loaded: LoadedSpec) -> dict[int, str]:
    """Node GUID -> the name the plan gives it (the twin's GUIDs)."""
    book = GuidBook.for_spec(loaded, allow_synthetic=True, twin=True)
    out: dict[int, str] = {}
    for node in loaded.spec.nodes:
        for hca in node.hcas:
            guid = book.hca_guid(node.name, hca.device)
            assert guid is not None
            out[guid] = node.description or f"{node.name} {hca.device}"
    for name, sw in loaded.topology.switches.items():
        guid = book.switch_guid(name)
        assert guid is not None
        out[guid] = sw.node_desc
    return out


def check_spec(text: str) -> bool:
    """Validate ``text``; if it validates, render it and prove it on the twin. True if it validated."""
    STATS["tried"] += 1
    problems = []
    try:
        loaded = load_spec_text(text, "fuzz.yaml")
    except SpecError as exc:
        problems = exc.problems
    if problems:  # rejected: every problem has a position and fits on one line
        assert all(p.line >= 1 and p.column >= 1 and "\n" not in str(p) for p in problems)
        return False
    STATS["valid"] += 1
    render_files(loaded, synthetic_guids=True)  # every rendered file, inventory included, without error
    want = _expected_names(loaded)
    seen: dict[int, str] = {}

    def read_names(run: TwinRun, host: str) -> None:
        out = run.sim.run(["ibnetdiscover", "--node-name-map", str(workdir / "opensm" / "node-name-map")], host)
        assert "failed to parse node name map" not in out.stderr, out.stderr
        seen.update({n.guid: n.description for n in ibnetdiscover.parse(out.stdout).nodes if n.guid is not None})

    with tempfile.TemporaryDirectory(prefix="ibprov-fuzz-") as tmp:
        workdir = Path(tmp)
        result = prove(loaded, workdir, timeout=60, while_up=read_names)
    assert result.problems == [], result.problems
    assert seen == want, "node-name-map: the diags read other names than planned"
    return True


def _save(text: str) -> None:
    SAVE.mkdir(parents=True, exist_ok=True)
    path = SAVE / f"{hashlib.sha256(text.encode()).hexdigest()[:12]}.yaml"
    path.write_text(text, encoding="utf-8")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=SEEDED,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
@given(specs())
def test_a_spec_that_validates_is_taken_by_the_real_opensm(spec: dict[str, Any]) -> None:
    text = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)
    note(text)
    try:
        check_spec(text)
    except AssertionError:
        if not SEEDED:
            _save(text)
        raise


# Counterexamples found by the property test, kept as regressions: each once validated and then broke OpenSM.
_BASE = """\
version: 1
cluster: {name: r}
nodes:
  - {name: a01, hcas: [{device: mlx5_0}]}
  - {name: a02, hcas: [{device: mlx5_0}]}
subnet_manager: {routing_engine: ROUTING, instances: [{node: a01, priority: 15}]}
"""
REGRESSIONS: dict[str, str] = {
    # ftree on one leaf under one spine: "Failed to find leaf switches - topology is not fat-tree", minhop instead
    "ftree-one-leaf": _BASE.replace("ROUTING", "ftree")
    + "fabric:\n  speed: HDR\n  fat_tree: {radix: 4, leaves: 1, spines: 1, hosts_per_leaf: 2, uplinks_per_leaf: 1}\n",
    # VLArb entry 8:184 (below max_vls 15, but the ports have 8 data VLs): OpenSM wrote it as 0:184
    "vlarb-vl-8": _BASE.replace("ROUTING", "minhop")
    + "switches: [{name: leaf01, role: leaf, ports: 4}]\n"
    + "fabric: {speed: QDR, links: ['leaf01:1 <-> a01/mlx5_0:1', 'leaf01:2 <-> a02/mlx5_0:1']}\n"
    + "qos: {enabled: true, vlarb_low: [[1, 51], [7, 59], [8, 184]]}\n",
    # two leaves and no cable between them: the SM on a01 never saw a02 ("port ... is not on the twin")
    "two-pieces": _BASE.replace("ROUTING", "minhop")
    + "switches: [{name: leaf01, role: leaf, ports: 8}, {name: leaf02, role: leaf, ports: 8}]\n"
    + "fabric: {speed: EDR, links: ['leaf01:1 <-> a01/mlx5_0:1', 'leaf02:1 <-> a02/mlx5_0:1']}\n",
}


@pytest.mark.parametrize("text", list(REGRESSIONS.values()), ids=list(REGRESSIONS))
def test_a_former_counterexample_no_longer_breaks_opensm(text: str) -> None:
    check_spec(text)


def test_twin_takes_a_relative_work_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `ibprov twin SPEC -w DIR` with a relative DIR failed: "ibsim did not start ... can't open net configuration file"
    from click.testing import CliRunner

    from ibprov.cli import cli

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["twin", str(REPO / "examples" / "rack.yaml"), "-w", "twin-work"])
    assert result.exit_code == 0, result.output
    assert "SUBNET UP" in result.output
    assert (tmp_path / "twin-work" / "twin.net").is_file()
