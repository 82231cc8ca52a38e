#!/usr/bin/env python3
"""Build a tiny flat apt repository with a dummy `doca-ofed` package (test fixture).

Usage: make-flat-repo.py DIR VERSION
The package depends on rdma-core (like the real DOCA-OFED metapackage), ships a
dummy openibd.service and enables it in postinst, so that ib_stack's OFED code
path (repository definition, version pin, service handling) can be exercised
without the real vendor repository.
"""

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

repo, version = Path(sys.argv[1]), sys.argv[2]
repo.mkdir(parents=True, exist_ok=True)
with tempfile.TemporaryDirectory() as tmp:
    root = Path(tmp)
    (root / "DEBIAN").mkdir()
    (root / "DEBIAN/control").write_text(
        f"Package: doca-ofed\nVersion: {version}\nArchitecture: all\nMaintainer: ibprov tests <root@localhost>\n"
        "Depends: rdma-core\nDescription: dummy DOCA-OFED metapackage for ibprov's molecule tests\n"
    )
    (root / "DEBIAN/postinst").write_text("#!/bin/sh\nset -e\nsystemctl enable openibd.service || true\n")
    (root / "DEBIAN/postinst").chmod(0o755)
    unit = root / "lib/systemd/system/openibd.service"
    unit.parent.mkdir(parents=True)
    unit.write_text(
        "[Unit]\nDescription=dummy openibd (ibprov tests)\n[Service]\nType=oneshot\n"
        "ExecStart=/bin/true\nRemainAfterExit=yes\n[Install]\nWantedBy=multi-user.target\n"
    )
    deb = repo / f"doca-ofed_{version}_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(root), str(deb)], check=True,
                   capture_output=True)

control = subprocess.run(["dpkg-deb", "-f", str(deb)], check=True, capture_output=True, text=True).stdout
data = deb.read_bytes()
packages = (
    control.rstrip("\n")
    + f"\nFilename: ./{deb.name}\nSize: {len(data)}\nSHA256: {hashlib.sha256(data).hexdigest()}\n\n"
)
(repo / "Packages").write_text(packages)
pk = packages.encode()
(repo / "Release").write_text(
    "Origin: ibprov-tests\nLabel: ibprov-tests\nSuite: ./\n"
    f"SHA256:\n {hashlib.sha256(pk).hexdigest()} {len(pk)} Packages\n"
)
