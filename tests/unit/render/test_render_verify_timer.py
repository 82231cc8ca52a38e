"""The verify timer (issue 27) as render writes it: its host in group ib_verify_timer, the role's variables in
group_vars/ib_verify_timer.yml, and the spec (with its GUID lock file) beside the inventory, where the role
copies it from; a spec without a timer renders none of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from ibprov.clusterspec import load_spec
from ibprov.render import render_files

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_the_timer_host_its_variables_and_the_spec_it_reads_are_rendered(tmp_path: Path) -> None:
    spec = tmp_path / "site.yaml"
    text = (EXAMPLES / "qos-partitions.yaml").read_text()
    text = text.replace(
        "    sections: [fabric, routing]\n", "    sections: [fabric]\n    keep: 30\n    wheelhouse: /srv/wheels\n"
    )
    spec.write_text(text)
    (tmp_path / "site.lock.yaml").write_text("# the GUID lock file discover wrote\nswitches: {}\n")
    files = render_files(load_spec(spec), synthetic_guids=True).files

    inventory = yaml.safe_load(files["inventory/hosts.yml"])
    assert inventory["all"]["children"]["ib_verify_timer"] == {"hosts": {"login01": None}}
    variables = yaml.safe_load(files["inventory/group_vars/ib_verify_timer.yml"])
    assert variables == {
        "ib_verify_timer_spec_src": "{{ inventory_dir }}/../verify/cluster.yaml",
        "ib_verify_timer_guid_lock_src": "{{ inventory_dir }}/../verify/cluster.lock.yaml",
        "ib_verify_timer_sections": ["fabric"],
        "ib_verify_timer_on_calendar": "*-*-* 00/6:00:00",
        "ib_verify_timer_history_dir": "/var/lib/ibprov/history",
        "ib_verify_timer_keep": 30,
        "ib_verify_timer_textfile_dir": "/var/lib/prometheus/node-exporter",
        "ib_verify_timer_install": True,
        "ib_verify_timer_wheelhouse": "/srv/wheels",
    }
    assert files["verify/cluster.yaml"] == text, "the spec as written, comments and all"
    assert files["verify/cluster.lock.yaml"].startswith("# the GUID lock file discover wrote")


def test_a_spec_without_a_lock_file_or_a_timer_renders_no_more_than_it_has(tmp_path: Path) -> None:
    spec = tmp_path / "qos.yaml"
    shutil.copy(EXAMPLES / "qos-partitions.yaml", spec)
    files = render_files(load_spec(spec), synthetic_guids=True).files
    assert yaml.safe_load(files["inventory/group_vars/ib_verify_timer.yml"])["ib_verify_timer_guid_lock_src"] is None
    assert "verify/cluster.lock.yaml" not in files

    plain = render_files(load_spec(EXAMPLES / "rack.yaml"), synthetic_guids=True).files
    assert not [f for f in plain if f.startswith("verify/") or "ib_verify_timer" in f]
    assert "ib_verify_timer" not in yaml.safe_load(plain["inventory/hosts.yml"])["all"]["children"]
