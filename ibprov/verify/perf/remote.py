"""Commands on the nodes for ``verify --perf``: one persistent SSH connection per node (paramiko).

:class:`Remote` is what the orchestration (:mod:`.collect`) needs: run a command to its end with a time
limit, start one in the background (a perftest or iperf3 server) and stop it by its PID. :class:`SshRemote`
is the real thing. Every remote command is also bounded on the node (``timeout``), so a lost connection
never leaves a server behind for long; :meth:`Remote.stop` ends it at once.

SSH settings come from the spec (address, user) and an OpenSSH config file when there is one (the user's
``~/.ssh/config``, or the twin's own ``ssh_config``): HostName, User, Port, IdentityFile,
StrictHostKeyChecking, UserKnownHostsFile, ProxyJump and ProxyCommand are honoured; keys from the SSH agent
and ``~/.ssh`` are tried too. An unknown host key is refused unless the config says
``StrictHostKeyChecking no``. A ProxyJump chain (``a,b``) is followed hop by hop, each hop completed by the
same config and connected once for all the nodes behind it (a bastion in front of a rack).
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
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
    proxy_command: str | None = None  # ProxyCommand, its %h/%p expanded
    jump: SshTarget | None = None  # the last hop of ProxyJump (its own jump: the hop before)

    def __str__(self) -> str:
        via = f" via {self.jump}" if self.jump is not None else " via ProxyCommand" if self.proxy_command else ""
        return f"{self.user}@{self.hostname}:{self.port}{via}"


def ssh_targets(nodes: Iterable[tuple[str, str, str]], config: Path | None = None) -> dict[str, SshTarget]:
    """``(node, address, user)`` of each node, completed by the OpenSSH ``config`` (default ``~/.ssh/config``
    when it exists)."""
    import paramiko  # lazy: 120 ms to import; only verify --perf's SSH needs it

    path = config if config is not None else Path.home() / ".ssh" / "config"
    ssh_config = paramiko.SSHConfig.from_path(str(path)) if path.is_file() else paramiko.SSHConfig()
    return {node: _target(ssh_config, node, address, user) for node, address, user in nodes}


def _target(ssh_config: Any, node: str, address: str, user: str, depth: int = 0) -> SshTarget:
    entry: dict[str, Any] = ssh_config.lookup(node)
    hostname = entry.get("hostname", address)
    if hostname == node and address != node:
        hostname = address
    proxy = entry.get("proxycommand")
    jump = None
    hops = [h.strip() for h in str(entry.get("proxyjump", "")).split(",") if h.strip()]
    if hops and hops != ["none"] and depth < 8:
        jump = _jump(ssh_config, hops, user, depth)
    return SshTarget(
        node=node,
        hostname=hostname,
        user=entry.get("user", user),
        port=int(entry.get("port", 22)),
        key_files=tuple(entry.get("identityfile", ())),
        strict_host_keys=str(entry.get("stricthostkeychecking", "yes")).lower() not in ("no", "off"),
        known_hosts=tuple(str(entry.get("userknownhostsfile", "")).split()),
        proxy_command=proxy if proxy and proxy.lower() != "none" and jump is None else None,
        jump=jump,
    )


def _jump(ssh_config: Any, hops: list[str], user: str, depth: int) -> SshTarget:
    """The last of ProxyJump's ``[user@]host[:port]`` hops, reached through the ones before it."""
    before: SshTarget | None = None
    for hop in hops:
        who, _, rest = hop.rpartition("@")
        host, _, port = rest.partition(":")
        target = _target(ssh_config, host, host, user, depth + 1)
        # the first hop as the config reaches it (its own ProxyJump or ProxyCommand); each later one through
        # the hop before it
        changes: dict[str, Any] = {} if before is None else {"jump": before, "proxy_command": None}
        if who:
            changes["user"] = who
        if port:
            changes["port"] = int(port)
        before = replace(target, **changes)
    assert before is not None
    return before


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
        self._hops: dict[str, Any] = {}
        self._proxies: list[Any] = []  # ProxyCommand processes, reaped at close
        self._hop_lock = threading.RLock()  # a hop behind a hop opens its own hop first

    def address(self, node: str) -> str:
        target = self.targets.get(node)
        return target.hostname if target is not None else node

    def _client(self, node: str) -> Any:
        if node not in self.targets:
            raise RemoteError(f"{node}: no SSH target (not a host this run can reach)")
        with self._locks[node]:
            client = self._clients.get(node)
            if not _alive(client):
                client = self._clients[node] = self._open(self.targets[node])
            return client

    def _hop(self, target: SshTarget) -> Any:
        """The connection to a ProxyJump hop, opened once for every node behind it."""
        key = str(target)
        with self._hop_lock:
            client = self._hops.get(key)
            if not _alive(client):
                client = self._hops[key] = self._open(target)
            return client

    def _open(self, target: SshTarget) -> Any:
        import paramiko  # lazy: 120 ms to import; only verify --perf's SSH needs it

        client = paramiko.SSHClient()
        client.load_system_host_keys()
        for known in target.known_hosts:
            if known and known != "/dev/null" and Path(known).expanduser().is_file():
                client.load_host_keys(str(Path(known).expanduser()))
        policy = paramiko.RejectPolicy() if target.strict_host_keys else paramiko.AutoAddPolicy()
        client.set_missing_host_key_policy(policy)
        try:
            sock: Any = None
            if target.jump is not None:  # a direct-tcpip channel through the hop (what ssh -J does)
                hop = self._hop(target.jump).get_transport()
                sock = hop.open_channel(
                    "direct-tcpip", (target.hostname, target.port), ("127.0.0.1", 0), timeout=self.connect_timeout
                )
            elif target.proxy_command:
                sock = _proxy_command(target.proxy_command)
                self._proxies.append(sock)
            client.connect(
                target.hostname,
                port=target.port,
                username=target.user,
                key_filename=[str(Path(k).expanduser()) for k in target.key_files] or None,
                timeout=self.connect_timeout,
                banner_timeout=self.connect_timeout,
                auth_timeout=self.connect_timeout,
                sock=sock,
            )
        except RemoteError:
            client.close()
            raise
        except paramiko.SSHException as err:
            client.close()
            reason = str(err) or type(err).__name__
            if "not found in known_hosts" in reason:
                reason += " (ssh to it once, or add its key to known_hosts)"
            raise RemoteError(f"SSH to {target}: {reason}") from err
        except (OSError, EOFError) as err:
            client.close()
            reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err) or type(err).__name__
            raise RemoteError(f"SSH to {target}: {reason}") from err
        return client

    def connect(self, node: str) -> None:
        self._client(node)

    def _channel(self, node: str, command: str) -> Any:
        import paramiko  # lazy: 120 ms to import; only verify --perf's SSH needs it

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
        for client in [*self._clients.values(), *reversed(self._hops.values())]:
            client.close()
        self._clients.clear()
        self._hops.clear()
        for proxy in self._proxies:  # the transport's thread closes its ProxyCommand too: either may be first
            proxy.close()
        self._proxies.clear()


def _proxy_command(command: str) -> Any:
    """paramiko's ProxyCommand whose close may run twice (the client's and its transport thread's) and
    reaps the process (paramiko's raises ProcessLookupError in that thread when the command already ended)."""
    import paramiko  # lazy: 120 ms to import; only verify --perf's SSH needs it

    class Proxy(paramiko.ProxyCommand):  # type: ignore[misc]
        def close(self) -> None:
            with contextlib.suppress(ProcessLookupError):
                super().close()
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                self.process.wait(timeout=5)
            for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
                if pipe is not None:
                    pipe.close()

    return Proxy(command)


def _alive(client: Any) -> bool:
    transport = client.get_transport() if client is not None else None
    return transport is not None and bool(transport.is_active())
