#!/bin/bash
# `make demo`: the main job end to end on the embedded example, against the fabric twin
# (ibsim running the planned fabric, the real OpenSM 3.3.23 with the rendered configuration).
set -euo pipefail
cd "$(dirname "$0")/.."
IBPROV=.venv/bin/ibprov
OUT=${IBPROV_DEMO_DIR:-out/demo}
mkdir -p "$OUT"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. the embedded example spec (ibprov example)"
$IBPROV example -o "$OUT/cluster.yaml" --force
step "2. validate"
$IBPROV validate "$OUT/cluster.yaml"
step "3. a spec with mistakes is rejected with every problem located (exit 2 expected)"
sed -e 's/pkey: 0x0010/pkey: 0x7fff/' -e 's/priority: 14/priority: 15/' "$OUT/cluster.yaml" > "$OUT/broken.yaml"
if $IBPROV validate "$OUT/broken.yaml"; then echo "expected a failure"; exit 1; fi
step "4. render: partitions need port GUIDs, which this spec does not name yet (exit 2 expected)"
rm -f "$OUT/cluster.lock.yaml"
if $IBPROV render "$OUT/cluster.yaml" -o "$OUT/rendered"; then echo "expected a failure"; exit 1; fi
step "5. bring the plan up on the twin (stand-in GUIDs) with the real OpenSM, and save what ibnetdiscover sees"
$IBPROV twin "$OUT/cluster.yaml" --save-ibnetdiscover "$OUT/fabric.ibnetdiscover"
step "6. discover: match the discovered fabric to the spec and write the GUID lock file"
$IBPROV discover --from "$OUT/fabric.ibnetdiscover" -o "$OUT/cluster.yaml"
step "7. render: inventory, role variables, OpenSM files, expected topology, twin"
$IBPROV render "$OUT/cluster.yaml" -o "$OUT/rendered"
$IBPROV render "$OUT/cluster.yaml" -o "$OUT/rendered" --check
sed -n '1,40p' "$OUT/rendered/opensm/partitions.conf"
step "8. the rendered configuration on the twin, then verify --fabric against it (cabling, links, counters, SMs, PKeys)"
$IBPROV twin "$OUT/cluster.yaml" --verify --json "$OUT/report.json" --junit "$OUT/junit.xml"
step "9. the examples, on the twin too"
for spec in examples/*.yaml; do
  echo "-- $spec"
  $IBPROV twin "$spec"
done
printf '\ndemo finished: files in %s\n' "$OUT"
