"""What a back end would do and what it did: the actions of a plan (a CLI command, a REST call), in the order
they are sent, each naming the partition it concerns so that a refusal is located at that partition."""

from __future__ import annotations

from dataclasses import dataclass, field

from ibprov.smbackend.state import BackendState

__all__ = ["Action", "BackendPlan", "BackendResult"]


@dataclass(frozen=True)
class Action:
    verb: str  # add | set | remove | delete | enable | disable | priority | save | login
    text: str  # what is sent: the CLI command, or "PUT /ufmRest/resources/pkeys/ {...}" (never a credential)
    pkey: int | None = None  # the partition it concerns (locates a refusal)
    changes_state: bool = True  # a read is not


@dataclass
class BackendPlan:
    backend: str  # "switch" | "ufm"
    desired: BackendState
    current: BackendState | None  # what was read back (None: not read)
    actions: list[Action] = field(default_factory=list)  # in the order they would be sent
    notes: list[str] = field(default_factory=list)  # what is left alone and why (unplanned partitions, ...)

    @property
    def in_sync(self) -> bool:
        return self.current is not None and not any(a.changes_state for a in self.actions)


@dataclass
class BackendResult:
    plan: BackendPlan
    done: list[Action] = field(default_factory=list)  # sent and accepted, in order
    failed: Action | None = None  # the first refused action, or the one being sent when the back end failed
    message: str = ""  # the back end's own words for the refusal, or what failed (HTTP 503, a timeout, a reset)
    # the back end failed while ``failed`` was being sent (a server error, no answer, a reset connection) rather
    # than refusing it: whether it was carried out is unknown (the next plan reads what is left)
    broken: bool = False

    @property
    def ok(self) -> bool:
        return self.failed is None
