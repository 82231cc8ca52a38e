#!/bin/bash
# Run ibprov's molecule scenarios (podman containers, simulated IB fabric).
#
#   scripts/molecule.sh                 every scenario in molecule/*/ (shared/ excluded)
#   scripts/molecule.sh ib_sm fabric    only these
#   MOLECULE_CMD=converge scripts/molecule.sh ib_sm     another molecule subcommand
#
# Installs what is missing first (needs root for apt):
#   apt : podman runc catatonit netavark aardvark-dns iptables debootstrap zstd
#   venv: the repo venv (.venv, `make venv`) must have molecule + molecule-plugins[podman]
#   collections: containers.podman, community.general, ansible.posix extracted from the
#         `ansible` wheel (PyPI) into .venv/ansible-collections (Galaxy is not used)
#   images: images/ensure-images.sh (local store -> zstd cache -> debootstrap build)
#   wheels: only for ib_verify_timer: ibprov's wheelhouse (this checkout + its dependencies, pip wheel
#         from PyPI on this host) in ${IBPROV_WHEELHOUSE_CACHE:-/var/cache/ibprov/wheelhouse}, reused while
#         pyproject.toml and the sources are unchanged; IBPROV_WHEELHOUSE=DIR brings one of your own
#
# Every container and network name carries IBPROV_RUN_ID (default: this script's PID),
# and each scenario gets its own molecule ephemeral directory, so concurrent runs
# cannot collide. Exits non-zero if any scenario fails; prints the time per scenario.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
VENV=${VENV:-$REPO/.venv}
ANSIBLE_BUNDLE_VERSION=${ANSIBLE_BUNDLE_VERSION:-12.3.0}
COLLECTIONS=$VENV/ansible-collections
export IBPROV_RUN_ID=${IBPROV_RUN_ID:-$$}
RUN_DIR=${IBPROV_MOLECULE_RUN_DIR:-${TMPDIR:-/tmp}/ibprov-molecule-$IBPROV_RUN_ID}

log() { echo "molecule.sh: $*" >&2; }

# --- host packages --------------------------------------------------------------
APT_PKGS=(podman runc catatonit netavark aardvark-dns iptables debootstrap zstd)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- python tools -------------------------------------------------------------
[ -x "$VENV/bin/molecule" ] || { log "$VENV/bin/molecule missing: run 'make venv' first"; exit 2; }
"$VENV/bin/python" -c 'import molecule_plugins.podman' 2>/dev/null \
  || "$VENV/bin/pip" install -q 'molecule-plugins[podman]'

# --- collections (from the ansible wheel; Galaxy is not reachable) --------------
if [ ! -f "$COLLECTIONS/.bundle-$ANSIBLE_BUNDLE_VERSION" ]; then
  log "extracting collections from ansible==$ANSIBLE_BUNDLE_VERSION"
  dl=$(mktemp -d)
  "$VENV/bin/pip" download -q --no-deps -d "$dl" "ansible==$ANSIBLE_BUNDLE_VERSION"
  rm -rf "$COLLECTIONS"
  "$VENV/bin/python" - "$dl" "$COLLECTIONS" <<'PY'
import glob, sys, zipfile
dl, dest = sys.argv[1], sys.argv[2]
wanted = ("containers/podman/", "community/general/", "ansible/posix/")
with zipfile.ZipFile(glob.glob(f"{dl}/ansible-*.whl")[0]) as z:
    for m in z.namelist():
        if m.startswith("ansible_collections/") and m[len("ansible_collections/"):].startswith(wanted):
            z.extract(m, dest)
PY
  rm -rf "$dl"
  touch "$COLLECTIONS/.bundle-$ANSIBLE_BUNDLE_VERSION"
fi

# --- environment ------------------------------------------------------------------
export PATH="$VENV/bin:$PATH"
export VIRTUAL_ENV=$VENV
export CONTAINERS_CONF=$REPO/images/containers.conf
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0 ANSIBLE_NOCOLOR=1 NO_COLOR=1
mkdir -p "$RUN_DIR/tmp"
export ANSIBLE_LOCAL_TEMP=$RUN_DIR/tmp
IBPROV_NODE_IMAGE=$("$REPO/images/ensure-images.sh" | tail -n1)
export IBPROV_NODE_IMAGE
# scripts/molecule-suites.sh sets everything up once per release before it runs the releases side by side
[ -z "${IBPROV_MOLECULE_PREPARE_ONLY:-}" ] || exit 0

# --- scenarios ---------------------------------------------------------------------
if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  scenarios=()
  for f in molecule/*/molecule.yml; do scenarios+=("$(basename "$(dirname "$f")")"); done
fi
cmd=${MOLECULE_CMD:-test}

# --- ibprov wheelhouse (scenario ib_verify_timer: installs ibprov in a container, which reaches no index) ---
# $WHEELS/deps-<hash of pyproject.toml>/ : every dependency's wheel (pip wheel, from PyPI on this host)
# $WHEELS/ibprov-<hash of the sources>/ : that + the ibprov wheel of this checkout (hard links), the scenario's
#                                          ib_verify_timer_wheelhouse; the newest 3 are kept
wheelhouse() {
  local wheels=${IBPROV_WHEELHOUSE_CACHE:-/var/cache/ibprov/wheelhouse} deps_key src_key deps house tmp
  mkdir -p "$wheels"
  # the nodes' Python (Debian 12: 3.11, Debian 13: 3.13), not this host's: binary wheels are per Python version
  local node_py
  case "${IBPROV_SUITE:-bookworm}" in trixie) node_py=3.13 ;; *) node_py=3.11 ;; esac
  deps_key=$( (cat pyproject.toml; echo "python $node_py") | sha256sum | cut -c1-12)
  src_key=$(find pyproject.toml README.md ibprov -type f ! -name '*.pyc' -print0 \
    | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
  deps=$wheels/deps-$deps_key
  house=$wheels/ibprov-$(echo "$src_key $deps_key" | sha256sum | cut -c1-12)  # this source, for these nodes
  if [ ! -f "$deps/.complete" ]; then
    log "wheelhouse: building the dependencies' wheels into $deps"
    rm -rf "$deps.tmp.$$" && mkdir -p "$deps.tmp.$$"
    "$VENV/bin/pip" download -q --only-binary=:all: --python-version "$node_py" --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      --dest "$deps.tmp.$$" "$REPO" >&2 || return 1
    rm -f "$deps.tmp.$$"/ibprov-*
    rm -rf "$deps" && mv "$deps.tmp.$$" "$deps" && touch "$deps/.complete"
  fi
  if [ ! -f "$house/.complete" ]; then
    log "wheelhouse: building ibprov's wheel into $house"
    tmp=$house.tmp.$$
    rm -rf "$tmp" && mkdir -p "$tmp"
    "$VENV/bin/pip" wheel -q --no-deps --wheel-dir "$tmp" "$REPO" >&2 || return 1
    cp -l "$deps"/*.whl "$tmp"/ 2>/dev/null || cp "$deps"/*.whl "$tmp"/
    rm -rf "$house" && mv "$tmp" "$house" && touch "$house/.complete"
  fi
  touch "$house"   # the newest use first: the pruning below keeps it
  # shellcheck disable=SC2012  # the names are ours: ibprov-<12 hex digits> (not the .tmp.<pid> of a build)
  ls -1td "$wheels"/ibprov-????????????/ 2>/dev/null | tail -n +4 | xargs -r rm -rf
  echo "$house"
}
needs_wheelhouse=false
for s in "${scenarios[@]}"; do
  if [ "$s" = ib_verify_timer ]; then needs_wheelhouse=true; fi
done
if $needs_wheelhouse && [ "$cmd" != destroy ] && [ -z "${IBPROV_WHEELHOUSE:-}" ]; then
  IBPROV_WHEELHOUSE=$(wheelhouse)
  export IBPROV_WHEELHOUSE
  log "wheelhouse: $IBPROV_WHEELHOUSE ($(ls "$IBPROV_WHEELHOUSE" | wc -l) wheels)"
fi

STAMP='import sys, time
t0 = time.monotonic()
for line in sys.stdin:
    sys.stdout.write(f"{time.monotonic() - t0:6.1f} {line}")'
phases() {  # phases <log>: seconds per molecule action
  awk '/\] Executing/ { if (a) printf "%s=%.0f ", a, $1 - t; a = $0; sub(/.*> /, "", a); sub(/\].*/, "", a); t = $1 }
       END { if (a) printf "%s=%.0f", a, $1 - t }' "$1"
}
run_scenario() {  # run_scenario <scenario> <log>: every log line gets the seconds since the start
  MOLECULE_EPHEMERAL_DIRECTORY=$RUN_DIR/$1 molecule "$cmd" -s "$1" 2>&1 \
    | "$VENV/bin/python" -u -c "$STAMP" >"$2"
  return "${PIPESTATUS[0]}"
}
declare -A took result
rc=0
for s in "${scenarios[@]}"; do
  start=$(date +%s%N)
  log "=== $s ($cmd, run $IBPROV_RUN_ID, log $RUN_DIR/$s.log)"
  if run_scenario "$s" "$RUN_DIR/$s.log"; then
    result[$s]=ok
  else
    result[$s]=FAILED; rc=1
    tail -n 60 "$RUN_DIR/$s.log" >&2
  fi
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  took[$s]=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
done
echo "scenario        result  seconds  phases (s)"
for s in "${scenarios[@]}"; do
  printf '%-15s %-7s %6s   %s\n' "$s" "${result[$s]}" "${took[$s]}" "$(phases "$RUN_DIR/$s.log")"
done
exit $rc
