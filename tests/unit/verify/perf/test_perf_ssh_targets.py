"""How verify --perf reaches a node: the spec's address and user, completed by an OpenSSH config file the way
`ssh` reads it (HostName, User, Port, IdentityFile, host-key settings, ProxyJump chains, ProxyCommand)."""

from __future__ import annotations

from pathlib import Path

from ibprov.verify.perf.remote import ssh_targets

CONFIG = """\
Host cn02
  ProxyJump ops@bastion:2200,gw
Host cn03
  ProxyCommand ssh -W %h:%p bastion
  Port 2022
Host cn04
  ProxyJump none
Host gw
  HostName 10.0.0.254
  User gwuser
Host bastion
  HostName 192.0.2.10
  IdentityFile ~/.ssh/bastion_key
Host cn*
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
"""


def test_a_proxyjump_chain_is_followed_hop_by_hop_each_hop_completed_by_the_config(tmp_path: Path) -> None:
    (cn02,) = ssh_targets([("cn02", "10.1.0.2", "root")], config=_write(tmp_path)).values()
    assert (cn02.hostname, cn02.user, cn02.port, cn02.strict_host_keys) == ("10.1.0.2", "root", 22, False)
    gw = cn02.jump
    assert gw is not None, "a jump host"
    assert (gw.hostname, gw.user, gw.port) == ("10.0.0.254", "gwuser", 22), "the last hop"
    bastion = gw.jump
    assert bastion is not None
    assert (bastion.hostname, bastion.user, bastion.port) == ("192.0.2.10", "ops", 2200)
    assert bastion.key_files == (str(Path.home() / ".ssh" / "bastion_key"),)
    assert bastion.jump is None
    assert str(cn02) == "root@10.1.0.2:22 via gwuser@10.0.0.254:22 via ops@192.0.2.10:2200"


def test_a_proxycommand_is_kept_with_its_host_and_port_expanded(tmp_path: Path) -> None:
    (cn03,) = ssh_targets([("cn03", "10.1.0.3", "root")], config=_write(tmp_path)).values()
    assert cn03.jump is None
    assert cn03.proxy_command == "ssh -W cn03:2022 bastion", "%h is the host as named: no HostName given for it"
    assert cn03.port == 2022


def test_proxyjump_none_and_a_node_the_config_does_not_name_connect_directly_to_the_spec_address(
    tmp_path: Path,
) -> None:
    found = ssh_targets([("cn04", "10.1.0.4", "root"), ("sm01", "10.1.9.1", "admin")], config=_write(tmp_path))
    assert (found["cn04"].jump, found["cn04"].proxy_command, found["cn04"].hostname) == (None, None, "10.1.0.4")
    sm01 = found["sm01"]
    assert (sm01.hostname, sm01.user, sm01.strict_host_keys, sm01.jump) == ("10.1.9.1", "admin", True, None)


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "ssh_config"
    path.write_text(CONFIG)
    return path
