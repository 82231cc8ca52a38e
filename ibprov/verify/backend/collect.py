"""Reading the back end: log in with the spec's credential references and read its state with the same reader
``ibprov plan`` and ``apply`` use (the switch's ``show running-config``, UFM's pkeys), so that verify and apply
cannot disagree on what the product holds. Nothing is changed.

A back end that cannot be reached or refuses the login is a view with ``error`` set (located at the spec field
to fix, as ``apply`` prints it), never an exception: the report shows it as ``backend.reachable``.
"""

from __future__ import annotations

from ibprov.clusterspec import LoadedSpec
from ibprov.smbackend.errors import BackendError
from ibprov.smbackend.sync import backend_state
from ibprov.verify.backend.observation import BackendView
from ibprov.verify.backend.plan import backend_place

__all__ = ["read_backend"]


def read_backend(loaded: LoadedSpec) -> BackendView:
    """The back end's state as it answers now, or the located reason it did not answer."""
    kind, _backend, where = backend_place(loaded)
    try:
        state = backend_state(loaded)
    except BackendError as exc:
        return BackendView(kind, where, None, str(loaded.source.problem(exc.path, exc.message)))
    return BackendView(kind, where, state)
