"""Filters of the ib_verify_timer role: input problems (validate.yml), systemd quoting for the units.

Standard library only (a role runs without ibprov)."""

import re

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Arguments written as they are in ExecStart= (anything else is double-quoted)
_PLAIN = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")
# The role's own options; in extra_args they would contradict the role's variables
_OWN = ("--history", "--keep", "--metrics")
_SECTIONS = ("fabric", "nodes", "routing", "scheduler", "mpi", "perf", "backend")


def _line_problem(name, value):
    if not isinstance(value, str):
        return f"{name}: {value!r} is not a string"
    if "\n" in value or "\r" in value or "\0" in value:
        return f"{name}: {value!r} holds a line break or NUL"
    return None


def _path_problems(settings):
    out = []
    for key in ("spec_path", "history_dir", "textfile_dir", "lock_file", "venv", "command", "wheelhouse_dest"):
        value = settings.get(key)
        problem = _line_problem(f"ib_verify_timer_{key}", value)
        if problem:
            out.append(problem)
        elif not value.startswith("/"):
            out.append(f"ib_verify_timer_{key}: {value!r} is not an absolute path")
    metrics = settings.get("metrics_file")
    if not isinstance(metrics, str) or not re.match(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.prom$", metrics):
        out.append(
            f"ib_verify_timer_metrics_file: {metrics!r} must be a file name ending in .prom "
            "(node_exporter's textfile collector reads no other files)"
        )
    return out


def _run_problems(settings):
    out = []
    keep = settings.get("keep")
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        out.append(f"ib_verify_timer_keep: {keep!r} is not a number of runs (1 or more)")
    sections = settings.get("sections") or []
    for i, section in enumerate(sections):
        if section not in _SECTIONS:
            out.append(f"ib_verify_timer_sections[{i}]: {section!r} is none of {', '.join(_SECTIONS)}")
    if len(set(sections)) != len(sections):
        out.append(f"ib_verify_timer_sections: {sections!r} names a section twice")
    for i, arg in enumerate(settings.get("extra_args") or []):
        problem = _line_problem(f"ib_verify_timer_extra_args[{i}]", arg)
        if problem:
            out.append(problem)
        elif arg.split("=", 1)[0] in _OWN:
            out.append(
                f"ib_verify_timer_extra_args[{i}]: {arg} is set by the role "
                "(ib_verify_timer_history_dir, ib_verify_timer_keep, ib_verify_timer_metrics_file)"
            )
    return out


def _unit_problems(settings):
    out = []
    for key in ("on_calendar", "randomized_delay_sec", "timeout_sec"):
        value = settings.get(key)
        problem = _line_problem(f"ib_verify_timer_{key}", value)
        if problem or not value.strip():
            out.append(problem or f"ib_verify_timer_{key}: must not be empty")
    for name, value in (settings.get("environment") or {}).items():
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            out.append(f"ib_verify_timer_environment: {name!r} is not an environment variable name")
        elif _line_problem(name, str(value)):
            # the value is likely a secret: name the variable only
            out.append(f"ib_verify_timer_environment.{name}: the value holds a line break or NUL")
    return out


def ib_verify_timer_problems(settings):
    """Every problem with the role's input, at once (empty: fine)."""
    return _path_problems(settings) + _run_problems(settings) + _unit_problems(settings)


def ib_verify_timer_exec_args(argv):
    """argv as one systemd command line (ExecStart=): plain words as they are, others double-quoted;
    '%' doubled (specifiers) and '$' doubled (variable expansion) everywhere."""
    out = []
    for arg in argv:
        text = str(arg).replace("%", "%%")
        if _PLAIN.match(text):
            out.append(text)
        else:
            text = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$")
            out.append(f'"{text}"')
    return " ".join(out)


def ib_verify_timer_env_lines(environment):
    """The environment as EnvironmentFile= lines: NAME="value" with \\ " ` $ escaped, sorted by name."""
    lines = []
    for name in sorted(environment):
        value = str(environment[name])
        for char in ("\\", '"', "`", "$"):
            value = value.replace(char, "\\" + char)
        lines.append(f'{name}="{value}"')
    return lines


def _by_name(files):
    return {f["path"].rsplit("/", 1)[-1]: f.get("checksum") for f in files or []}


def ib_verify_timer_wheels_to_copy(controller_files, host_files):
    """Paths (on the controller) of the wheels the host lacks or holds with another checksum (find results)."""
    host = _by_name(host_files)
    return sorted(
        f["path"] for f in controller_files or [] if host.get(f["path"].rsplit("/", 1)[-1]) != f.get("checksum")
    )


def ib_verify_timer_wheels_to_remove(host_files, controller_files):
    """Paths (on the host) of the wheels the controller's wheelhouse no longer holds (find results)."""
    keep = _by_name(controller_files)
    return sorted(f["path"] for f in host_files or [] if f["path"].rsplit("/", 1)[-1] not in keep)


class FilterModule:
    def filters(self):
        return {
            "ib_verify_timer_problems": ib_verify_timer_problems,
            "ib_verify_timer_exec_args": ib_verify_timer_exec_args,
            "ib_verify_timer_env_lines": ib_verify_timer_env_lines,
            "ib_verify_timer_wheels_to_copy": ib_verify_timer_wheels_to_copy,
            "ib_verify_timer_wheels_to_remove": ib_verify_timer_wheels_to_remove,
        }
