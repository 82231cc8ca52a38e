"""What render writes for a switch or UFM SM: the whole desired configuration in the product's own form, for
review and for a site's change records (apply does not read these files: it reads the back end and sends
only the difference). ``sm-backend/switch-commands.txt``: the CLI commands an empty switch would get;
``sm-backend/ufm-pkeys.json``: the PUT bodies of UFM's /resources/pkeys/ per partition."""

from __future__ import annotations

import json

from ibprov.clusterspec import LoadedSpec
from ibprov.clusterspec.model import CONTRACT_TESTED
from ibprov.identity.guids import GuidBook
from ibprov.smbackend.desired import desired_state
from ibprov.smbackend.switch.commands import render_commands
from ibprov.smbackend.ufm.payload import render_payload

__all__ = ["backend_files"]


def backend_files(loaded: LoadedSpec, book: GuidBook, header: str) -> dict[str, str]:
    sm = loaded.spec.subnet_manager
    desired, _ = desired_state(loaded, book)
    if sm.backend == "switch" and sm.switch is not None:
        lines = [
            f"## {header}",
            f"## switch {sm.switch.name}: the configuration from an empty switch ({CONTRACT_TESTED})",
            *render_commands(desired, save=sm.switch.save),
        ]
        return {"sm-backend/switch-commands.txt": "\n".join(lines) + "\n"}
    body = {
        "_comment": f"{header}; UFM PUT /resources/pkeys/ bodies ({CONTRACT_TESTED})",
        "pkeys": render_payload(desired),
    }
    return {"sm-backend/ufm-pkeys.json": json.dumps(body, indent=2) + "\n"}
