"""Commands on the nodes for ``verify --perf``: one persistent SSH connection per node (paramiko).

:class:`Remote` is what the orchestration (:mod:`.collect`) needs: run a command to its end with a time
limit, start one in the background (a perftest or iperf3 server) and stop it by its PID. :class:`SshRemote`
is the real thing. Every remote command is also bounded on the node (``timeout``), so a lost connection
never leaves a server behind for long; :meth:`Remote.stop` ends it at once.

SSH settings come from the spec (address, user) and an OpenSSH config file when there is one (the user's
``~/.ssh/config``, or the twin's own ``ssh_config``): HostName, User, Port, IdentityFile,
StrictHostKeyChecking and UserKnownHostsFile are honoured; keys from the SSH agent and ``~/.ssh`` are tried
too. An unknown host key is refused unless the config says ``StrictHostKeyChecking no``.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Completed", "Remote", "RemoteError", "SshRemote", "SshTarget", "Started", "ssh_targets"]

_READ = 32768


class RemoteError(Exception):
    """A node could not be reached or a command could not be started there (the message says why)."""


@dataclass(frozen=True)
class Completed:
    rc: int | None  # None: it did not end in time
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.rc is None


class Started(Protocol):
    node: str
    pid: int | None

    def exited(self) -> bool: ...

    def wait(self, timeout: float) -> Completed: ...


class Remote(Protocol):
    def connect(self, node: str) -> None: ...

    def run(self, node: str, command: str, timeout: float) -> Completed: ...

    def start(self, node: str, command: str) -> Started: ...

    def stop(self, started: Started) -> None: ...

    def address(self, node: str) -> str: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class SshTarget:
    node: str
    hostname: str
    user: str
    port: int = 22
    key_files: tuple[str, ...] = ()
    strict_host_keys: bool = True
    known_hosts: tuple[str, ...] = ()


def ssh_targets(nodes: Iterable[tuple[str, str, str]], config: Path | None = None) -> dict[str, SshTarget]:
    """``(node, address, user)`` of each node, completed by the OpenSSH ``config`` (default ``~/.ssh/config``
    when it exists)."""
    import paramiko

    path = config if config is not None else Path.home() / ".ssh" / "config"
    ssh_config = paramiko.SSHConfig.from_path(str(path)) if path.is_file() else paramiko.SSHConfig()
    out = {}
    for node, address, user in nodes:
        entry: dict[str, Any] = ssh_config.lookup(node)
        hostname = entry.get("hostname", address)
        if hostname == node and address != node:
            hostname = address
        out[node] = SshTarget(
            node=node,
            hostname=hostname,
            user=entry.get("user", user),
            port=int(entry.get("port", 22)),
            key_files=tuple(entry.get("identityfile", ())),
            strict_host_keys=str(entry.get("stricthostkeychecking", "yes")).lower() not in ("no", "off"),
            known_hosts=tuple(str(entry.get("userknownhostsfile", "")).split()),
        )
    return out


@dataclass(eq=False)
class _Background:
    node: str
    channel: Any  # paramiko Channel
    pid: int | None = None
    out: list[bytes] = field(default_factory=list)
    err: list[bytes] = field(default_factory=list)

    def _drain(self) -> None:
        while self.channel.recv_ready():
            self.out.append(self.channel.recv(_READ))
        while self.channel.recv_stderr_ready():
            self.err.append(self.channel.recv_stderr(_READ))

    def exited(self) -> bool:
        self._drain()
        return bool(self.channel.exit_status_ready())

    def wait(self, timeout: float) -> Completed:
        deadline = time.monotonic() + timeout
        while not self.channel.exit_status_ready() and time.monotonic() < deadline:
            self._drain()
            time.sleep(0.05)
        self._drain()
        rc = self.channel.recv_exit_status() if self.channel.exit_status_ready() else None
        stdout = b"".join(self.out).decode(errors="replace")
        if stdout.startswith("@@pid "):  # the wrapper's first line
            stdout = stdout.partition("\n")[2]
        return Completed(rc, stdout, b"".join(self.err).decode(errors="replace"))


class SshRemote:
    """One paramiko connection per node, opened on first use; thread-safe per node."""

    def __init__(self, targets: Mapping[str, SshTarget], *, connect_timeout: float = 10.0) -> None:
        self.targets = dict(targets)
        self.connect_timeout = connect_timeout
        self._clients: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {n: threading.Lock() for n in self.targets}

    def address(self, node: str) -> str:
        target = self.targets.get(node)
        return target.hostname if target is not None else node

    def _client(self, node: str) -> Any:
        import paramiko

        if node not in self.targets:
            raise RemoteError(f"{node}: no SSH target (not a host this run can reach)")
        with self._locks[node]:
            client = self._clients.get(node)
            if client is not None and client.get_transport() is not None and client.get_transport().is_active():
                return client
            target = self.targets[node]
            client = paramiko.SSHClient()
            client.load_system_host_keys()
            for known in target.known_hosts:
                if known and known != "/dev/null" and Path(known).expanduser().is_file():
                    client.load_host_keys(str(Path(known).expanduser()))
            policy = paramiko.RejectPolicy() if target.strict_host_keys else paramiko.AutoAddPolicy()
            client.set_missing_host_key_policy(policy)
            try:
                client.connect(
                    target.hostname,
                    port=target.port,
                    username=target.user,
                    key_filename=[str(Path(k).expanduser()) for k in target.key_files] or None,
                    timeout=self.connect_timeout,
                    banner_timeout=self.connect_timeout,
                    auth_timeout=self.connect_timeout,
                )
            except paramiko.SSHException as err:
                client.close()
                reason = str(err) or type(err).__name__
                if "not found in known_hosts" in reason:
                    reason += " (ssh to it once, or add its key to known_hosts)"
                raise RemoteError(f"SSH to {target.user}@{target.hostname}:{target.port}: {reason}") from err
            except (OSError, EOFError) as err:
                client.close()
                reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err) or type(err).__name__
                raise RemoteError(f"SSH to {target.user}@{target.hostname}:{target.port}: {reason}") from err
            self._clients[node] = client
            return client

    def connect(self, node: str) -> None:
        self._client(node)

    def _channel(self, node: str, command: str) -> Any:
        import paramiko

        try:
            transport = self._client(node).get_transport()
            channel = transport.open_session(timeout=self.connect_timeout)
            channel.exec_command(command)
        except (paramiko.SSHException, OSError, EOFError) as err:
            raise RemoteError(f"{node}: cannot start a command over SSH: {err or type(err).__name__}") from err
        return channel

    def run(self, node: str, command: str, timeout: float) -> Completed:
        background = _Background(node, self._channel(node, command))
        done = background.wait(timeout)
        if done.timed_out:
            background.channel.close()
        return done

    def start(self, node: str, command: str) -> Started:
        """Start ``command`` in the background; its PID is read from the first line the wrapper prints."""
        wrapped = f"sh -c {shlex.quote('echo @@pid $$; exec ' + command)}"
        background = _Background(node, self._channel(node, wrapped))
        deadline = time.monotonic() + self.connect_timeout
        first = b""
        while b"\n" not in first and time.monotonic() < deadline and not background.channel.exit_status_ready():
            if background.channel.recv_ready():
                first += background.channel.recv(_READ)
            else:
                time.sleep(0.02)
        line, _, rest = first.partition(b"\n")
        if line.startswith(b"@@pid ") and line[6:].strip().isdigit():
            background.pid = int(line[6:].strip())
            background.out.append(rest)
        else:
            background.out.append(first)
        return background

    def stop(self, started: Started) -> None:
        """End a background command (TERM, then KILL) and close its channel; never raises."""
        if not isinstance(started, _Background):
            return
        try:
            if started.pid is not None and not started.channel.exit_status_ready():
                pid = started.pid
                self.run(
                    started.node,
                    f"kill {pid} 2>/dev/null; i=0; while kill -0 {pid} 2>/dev/null && [ $i -lt 20 ]; do "
                    f"sleep 0.1; i=$((i+1)); done; kill -9 {pid} 2>/dev/null; true",
                    timeout=10,
                )
        except (OSError, RemoteError, EOFError):
            pass
        finally:
            started.channel.close()

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
