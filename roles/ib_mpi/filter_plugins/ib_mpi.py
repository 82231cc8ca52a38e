# Copyright: ibprov contributors
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Filters for the ib_mpi role: validate the MPI/UCX/NCCL settings and derive the device lists.

ib_mpi_problems(settings)    -> list of human-readable problems ([] when valid); settings is a dict
                                with the role's variables without the ib_mpi_ prefix
ib_mpi_net_devices(rails)    -> the rails' HCA ports in rail order, each once (UCX_NET_DEVICES)
ib_mpi_nccl_ib_hca(devices)  -> NCCL_IB_HCA value: exact-match list ("=mlx5_0:1,mlx5_1:1")
ib_mpi_mca_files(flavours, default_file) -> [{path, flavours}]: one MCA file per path, its flavours' names
ib_mpi_nccl_env(settings)    -> {NCCL_*: value} for /etc/nccl.conf and the profile script
"""

from __future__ import annotations

import re

# UCX transport names and aliases accepted in UCX_TLS (ucx_info -d / the UCX FAQ), optionally
# negated with a leading ^ (whole list) or suffixed with :aux.
UCX_TLS = (
    "all", "sm", "shm", "self", "posix", "sysv", "cma", "knem", "xpmem",
    "rc", "rc_v", "rc_verbs", "rc_x", "rc_mlx5", "ud", "ud_v", "ud_verbs", "ud_x", "ud_mlx5",
    "dc", "dc_x", "dc_mlx5", "ib", "rdmacm", "tcp", "sockcm",
    "cuda", "cuda_copy", "cuda_ipc", "gdr_copy", "rocm", "rocm_copy", "rocm_ipc", "rocm_gdr", "ze_copy",
)  # fmt: skip
_DEVICE_RE = re.compile(r"^[a-z][a-z0-9_]*:\d+$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_IFNAME_RE = re.compile(r"^[=^]?[A-Za-z0-9_.:-]+(,[A-Za-z0-9_.:-]+)*$")
_ENV_KEY_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_MCA_KEY_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def ib_mpi_net_devices(rails):
    """HCA ports of all rails, first seen first, each once."""
    out = []
    for rail in rails or []:
        for dev in rail.get("devices") or []:
            if dev not in out:
                out.append(dev)
    return out


def ib_mpi_nccl_ib_hca(devices):
    """NCCL_IB_HCA for exactly these ports: a leading '=' stops NCCL's prefix match (mlx5_1 vs mlx5_10)."""
    devices = list(devices or [])
    return "=" + ",".join(devices) if devices else ""


def ib_mpi_mca_files(flavours, default_file):
    """One entry per distinct openmpi-mca-params.conf, in first-seen order, with the flavours sharing it."""
    out = []
    for flavour in flavours or []:
        path = flavour.get("mca_params_file") or default_file
        for entry in out:
            if entry["path"] == path:
                entry["flavours"].append(flavour["name"])
                break
        else:
            out.append({"path": path, "flavours": [flavour["name"]]})
    return out


def ib_mpi_nccl_env(settings):
    """NCCL settings (keys without the ib_mpi_ prefix) as environment variables.

    NCCL_IB_HCA: nccl_ib_hca, else the rails' ports; NCCL_NET=IB when forbid_tcp (unless nccl_options
    names another network module, e.g. a plugin's IBext).
    """
    env = {}
    hcas = settings.get("nccl_ib_hca") or ib_mpi_net_devices(settings.get("rails") or [])
    if hcas:
        env["NCCL_IB_HCA"] = ib_mpi_nccl_ib_hca(hcas)
    if settings.get("nccl_ib_gid_index") is not None:
        env["NCCL_IB_GID_INDEX"] = str(settings["nccl_ib_gid_index"])
    if settings.get("nccl_socket_ifname"):
        env["NCCL_SOCKET_IFNAME"] = str(settings["nccl_socket_ifname"])
    if settings.get("forbid_tcp", True):
        env["NCCL_NET"] = "IB"
    for key, value in (settings.get("nccl_options") or {}).items():
        env[str(key)] = str(value)
    return env


def _tls_problems(tls, forbid_tcp):
    problems = []
    if not tls:
        return ["ucx_tls: at least one transport is needed (e.g. [rc, ud, sm, self])"]
    names = [str(t) for t in tls]
    if any(n.startswith("^") for n in names[1:]):
        problems.append("ucx_tls: only the first entry may start with ^ (it negates the whole list)")
    for name in names:
        bare = name.lstrip("^").split(":", 1)[0]
        if bare not in UCX_TLS:
            problems.append(f"ucx_tls: unknown UCX transport {name!r} (known: {', '.join(UCX_TLS)})")
    negated = names[0].startswith("^")
    bare_names = {n.lstrip("^").split(":", 1)[0] for n in names}
    if forbid_tcp and not negated and ("tcp" in bare_names or "all" in bare_names):
        problems.append(
            "ucx_tls: forbid_tcp is true, but the transports include "
            + ("tcp" if "tcp" in bare_names else "all (which includes tcp)")
        )
    if forbid_tcp and negated and "tcp" not in bare_names:
        problems.append("ucx_tls: forbid_tcp is true, but the negated list does not exclude tcp")
    return problems


def _rail_problems(rails):
    problems = []
    seen_names = {}
    seen_devices = {}
    for i, rail in enumerate(rails or []):
        where = f"rails[{i}]"
        if not isinstance(rail, dict):
            problems.append(f"{where}: expected a mapping with name and devices")
            continue
        name = str(rail.get("name") or "")
        if not _NAME_RE.match(name):
            problems.append(f"{where}: name {name!r} is not a valid rail name")
        elif name in seen_names:
            problems.append(f"{where}: rail name {name!r} already used by rails[{seen_names[name]}]")
        else:
            seen_names[name] = i
        devices = rail.get("devices") or []
        if not devices:
            problems.append(f"{where}: rail {name!r} lists no devices")
        for dev in devices:
            if not _DEVICE_RE.match(str(dev)):
                problems.append(f"{where}: device {dev!r} is not DEVICE:PORT (e.g. mlx5_0:1)")
            elif dev in seen_devices and seen_devices[dev] != name:
                problems.append(f"{where}: device {dev} is already in rail {seen_devices[dev]!r}")
            else:
                seen_devices[dev] = name
    return problems


def _flavour_problems(flavours):
    problems = []
    names = set()
    for i, flavour in enumerate(flavours or []):
        where = f"flavours[{i}]"
        name = str((flavour or {}).get("name") or "")
        if name in names:
            problems.append(f"{where}: flavour {name!r} is listed twice")
        names.add(name)
        path = flavour.get("mca_params_file")
        if name != "openmpi" and not path:
            problems.append(
                f"{where}: flavour {name!r} needs mca_params_file (only the distribution's 'openmpi' has a known path)"
            )
        if path and not str(path).startswith("/"):
            problems.append(f"{where}: mca_params_file {path!r} is not an absolute path")
    return problems


def _option_problems(what, options, key_re, example):
    problems = []
    for key, value in (options or {}).items():
        if not key_re.match(str(key)):
            problems.append(f"{what}: key {key!r} is not a valid name (e.g. {example})")
        if isinstance(value, (dict, list)) or "\n" in str(value):
            problems.append(f"{what}: value of {key} must be a single-line scalar")
    return problems


def ib_mpi_problems(settings):
    """All problems of the role's settings (keys without the ib_mpi_ prefix)."""
    forbid_tcp = bool(settings.get("forbid_tcp", True))
    problems = _tls_problems(settings.get("ucx_tls") or [], forbid_tcp)
    problems += _rail_problems(settings.get("rails") or [])
    problems += _flavour_problems(settings.get("flavours") or [])
    problems += _option_problems("ucx_options", settings.get("ucx_options"), _ENV_KEY_RE, "UCX_RNDV_THRESH")
    problems += _option_problems("nccl_options", settings.get("nccl_options"), _ENV_KEY_RE, "NCCL_DEBUG")
    problems += _option_problems(
        "openmpi_mca_params", settings.get("openmpi_mca_params"), _MCA_KEY_RE, "mpi_leave_pinned"
    )
    for key in settings.get("ucx_options") or {}:
        if key in ("UCX_TLS", "UCX_NET_DEVICES"):
            problems.append(f"ucx_options: {key} comes from ucx_tls / rails, do not set it here")
    if settings.get("nccl_enabled"):
        gid = settings.get("nccl_ib_gid_index")
        if gid is not None and not (isinstance(gid, int) and 0 <= gid <= 255):
            problems.append(f"nccl_ib_gid_index: {gid!r} is not a GID table index 0-255")
        ifname = settings.get("nccl_socket_ifname")
        if ifname and not _IFNAME_RE.match(str(ifname)):
            problems.append(f"nccl_socket_ifname: {ifname!r} is not an interface list (e.g. eth0, =eth0 or ^docker)")
        hcas = settings.get("nccl_ib_hca") or ib_mpi_net_devices(settings.get("rails") or [])
        if not hcas:
            problems.append("nccl_enabled: NCCL needs HCA ports: list rails or nccl_ib_hca")
        for dev in settings.get("nccl_ib_hca") or []:
            if not _DEVICE_RE.match(str(dev)):
                problems.append(f"nccl_ib_hca: {dev!r} is not DEVICE:PORT (e.g. mlx5_0:1)")
        for key in settings.get("nccl_options") or {}:
            if key in ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME"):
                problems.append(f"nccl_options: {key} has its own variable, do not set it here")
    return problems


class FilterModule:
    def filters(self):
        return {
            "ib_mpi_problems": ib_mpi_problems,
            "ib_mpi_net_devices": ib_mpi_net_devices,
            "ib_mpi_nccl_ib_hca": ib_mpi_nccl_ib_hca,
            "ib_mpi_mca_files": ib_mpi_mca_files,
            "ib_mpi_nccl_env": ib_mpi_nccl_env,
        }
