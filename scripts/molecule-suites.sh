#!/bin/bash
# Every molecule scenario on Debian 12 and on Debian 13 nodes: the two node images first (built by debootstrap
# or loaded from the cache), then scripts/molecule.sh once per release, both at once (the scenarios mostly wait
# on apt and systemd in their containers; each run has its own run id, so their containers and networks never
# meet). Exit 1 when a scenario failed on either release; both tables are printed.
#   scripts/molecule-suites.sh [SCENARIO...]      IBPROV_SUITES="bookworm trixie" (the default) to choose
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SUITES=${IBPROV_SUITES:-bookworm trixie}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$REPO/images/containers.conf}
OUT=${TMPDIR:-/tmp}/ibprov-molecule-suites-$$
mkdir -p "$OUT"
rc=0
declare -A pid
# one release at a time: apt, the venv's molecule plugin, the collections and the images (two debootstraps at
# once only compete for the mirror, and two extractions of the collections would race)
for suite in $SUITES; do
  IBPROV_SUITE=$suite IBPROV_MOLECULE_PREPARE_ONLY=1 "$REPO/scripts/molecule.sh" \
    || { echo "molecule-suites: cannot prepare the $suite nodes" >&2; exit 2; }
done
for suite in $SUITES; do
  IBPROV_SUITE=$suite IBPROV_RUN_ID="${suite:0:3}$$" "$REPO/scripts/molecule.sh" "$@" >"$OUT/$suite.out" 2>&1 &
  pid[$suite]=$!
done
for suite in $SUITES; do
  failed=0
  wait "${pid[$suite]}" || { failed=1; rc=1; }
  echo "=== molecule on $suite nodes (log: $OUT/$suite.out)"
  if [ "$failed" = 1 ]; then  # what molecule.sh printed of the failing scenarios, without pip's noise
    grep -v '^WARNING: Location' "$OUT/$suite.out" | tail -n 150
  else
    sed -n '/^scenario /,$p' "$OUT/$suite.out"
  fi
done
exit $rc
