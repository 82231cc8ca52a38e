#!/bin/bash
# The unit and simulated-fabric suites (what `make test` runs before molecule) on Debian 13's own stack: its
# Python 3.13, OpenSM 3.3.23-3.1, infiniband-diags 56.1, ibsim and libumad2sim 0.12, in a container of the
# trixie node image, with no network. ibprov and its test dependencies are installed from wheels downloaded
# here for Python 3.13 (cached in ${IBPROV_WHEELHOUSE_CACHE:-/var/cache/ibprov/wheelhouse}/py313-dev-<key>); the
# image's own OpenSM and diags from the .debs it holds; the checkout is copied in (read-only mount); the host's
# promtool, prometheus and node_exporter (they link only libc) are lent to the monitoring tests. Headless
# Chromium is not in the image: the HTML tests skip there (they run on the host).
#   scripts/test-debian13.sh [PYTEST ARGS...]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
VENV=${VENV:-$REPO/.venv}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$REPO/images/containers.conf}
log() { echo "test-debian13: $*" >&2; }

IMAGE=$(IBPROV_SUITE=trixie "$REPO/images/ensure-images.sh" | tail -n1)
WHEELS_ROOT=${IBPROV_WHEELHOUSE_CACHE:-/var/cache/ibprov/wheelhouse}
key=$( (cat "$REPO/pyproject.toml"; echo "python 3.13 dev pip hatchling editables pyyaml-ft") | sha256sum | cut -c1-12)
WHEELS=$WHEELS_ROOT/py313-dev-$key
if [ ! -f "$WHEELS/.complete" ]; then
  log "downloading the dependencies' wheels for Python 3.13 into $WHEELS"
  rm -rf "$WHEELS.tmp.$$" && mkdir -p "$WHEELS.tmp.$$"
  # pip evaluates environment markers for the Python it runs on, not for --python-version: what the dependencies
  # need only on 3.13 is named here (libcst: pyyaml-ft; python_version >= "3.13")
  "$VENV/bin/pip" download -q --only-binary=:all: --python-version 3.13 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --dest "$WHEELS.tmp.$$" "$REPO[dev]" pip "hatchling>=1.21" editables "pyyaml-ft>=8.0.0" 2> >(grep -v '^WARNING: Location' >&2)
  rm -f "$WHEELS.tmp.$$"/ibprov-*
  rm -rf "$WHEELS" && mv "$WHEELS.tmp.$$" "$WHEELS" && touch "$WHEELS/.complete"
fi
LENT=()
for tool in /usr/bin/promtool /usr/bin/prometheus /usr/bin/prometheus-node-exporter; do
  if [ -x "$tool" ]; then LENT+=(-v "$tool:$tool:ro"); fi
done

name=ibprov-debian13-$$
log "container $name ($IMAGE): $(podman run --rm --network none "$IMAGE" python3 --version)"
# shellcheck disable=SC2016  # expanded in the container
podman run --rm --name "$name" --network none -v "$REPO:/src:ro" -v "$WHEELS:/wheels:ro" "${LENT[@]}" \
  -e PYTHONDONTWRITEBYTECODE=1 -e NO_COLOR=1 "$IMAGE" bash -c '
    set -euo pipefail
    apt-get install -y -qq --no-download opensm infiniband-diags >/dev/null
    dpkg-query -W -f "\${Package} \${Version}\n" python3 opensm infiniband-diags ibsim-utils libumad2sim0 >&2
    mkdir -p /tmp/src && cd /src
    tar --exclude=./.venv --exclude=./.git --exclude=./.mutate --exclude="*/__pycache__" -cf - . | tar -C /tmp/src -xf -
    # the image has python3-venv downloaded, not installed: a venv without pip, and pip from its wheel
    python3 -m venv --without-pip /tmp/venv
    /tmp/venv/bin/python3 "$(ls /wheels/pip-*.whl)/pip" install -q --no-index --find-links /wheels pip
    /tmp/venv/bin/pip install -q --no-index --find-links /wheels -e "/tmp/src[dev]"
    cd /tmp/src
    exec /tmp/venv/bin/pytest -q -n 2 -p no:cacheprovider -m "not molecule and not twin" -rs "$@" tests
  ' test-debian13 "$@"
