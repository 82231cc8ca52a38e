#!/bin/bash
# `make demo`: the main job end to end on the embedded example, against the fabric twin
# (ibsim running the planned fabric, the real OpenSM 3.3.23 with the rendered configuration), then the
# twin rack: one container per node, apply, a no-op second apply, verify, faults, heal, down.
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
$IBPROV twin "$OUT/cluster.yaml" --verify --json "$OUT/twin-proof.json"

step "9. the twin rack: ibsim plus one container per node, reached over SSH like a real rack (and the site's Slurm:
   munge, slurmctld on sm01, slurmd on node01-04)"
export IBPROV_TWIN_DIR="$OUT/twin"
export IBPROV_SM_KEY=${IBPROV_SM_KEY:-0x00000000000d3e40}   # demo only: the twin's SM key
trap '$IBPROV twin down "$OUT/cluster.yaml" >/dev/null 2>&1 || true' EXIT
$IBPROV twin up "$OUT/cluster.yaml"
on_controller() { ssh -F "$IBPROV_TWIN_DIR/rack1/ssh_config" sm01 "$@"; }
step "10. apply: drivers and stack, OpenSM with partitions and QoS, IPoIB, Slurm's topology, on every node of the rack"
$IBPROV apply "$OUT/cluster.yaml" --target twin --no-diff
step "11. apply again: nothing changes"
$IBPROV apply "$OUT/cluster.yaml" --target twin --no-diff | tee "$OUT/second-apply.txt"
if grep -E '│ *[0-9]+ *│ *[1-9]' "$OUT/second-apply.txt"; then echo "the second apply changed something"; exit 1; fi
step "12. verify the rack: the fabric, every node, the routes OpenSM programmed, and Slurm's view of the plan"
on_controller scontrol show topology
# --history keeps each run (day 2: what changed since the previous one), --metrics writes it for Prometheus
mkdir -p "$OUT/metrics"
DAY2=(--history "$OUT/history" --metrics "$OUT/metrics/ibprov.prom")
$IBPROV verify "$OUT/cluster.yaml" --target twin --fabric --nodes --routing --scheduler "${DAY2[@]}" \
  --json "$OUT/report.json" --junit "$OUT/junit.xml" --html "$OUT/report.html"
echo "-- the physical layer: the twin has none, so verify --physical skips every check and says why"
$IBPROV verify "$OUT/cluster.yaml" --target twin --physical --json "$OUT/report-physical.json" | tail -n 4
step "13. acceptance performance: the route-aware perftest schedule (dry run), then verify --perf on the rack"
$IBPROV verify "$OUT/cluster.yaml" --perf --dry-run | sed -n '1,6p'
# the twin's containers have no RDMA device: every perftest run is skipped, found by looking; the TCP probe
# (iperf3) really runs, over the container network
$IBPROV verify "$OUT/cluster.yaml" --perf --target twin --json "$OUT/report-perf.json" --html "$OUT/report-perf.html"
step "14. break it: pull a cable, and a rogue subnet manager; verify finds and names both, and drains the
   nodes they name in Slurm (exit 1 expected); an admin's own drain of node02 is left as it is"
on_controller scontrol update NodeName=node02 State=DRAIN "Reason='admin: BIOS update'"
$IBPROV twin fault "$OUT/cluster.yaml" unlink node03/mlx5_0:1
$IBPROV twin fault "$OUT/cluster.yaml" rogue-sm node04
if $IBPROV verify "$OUT/cluster.yaml" --target twin --fabric --drain "${DAY2[@]}" --json "$OUT/report-faults.json" \
    --html "$OUT/report-faults.html"; then
  echo "verify missed the faults"; exit 1
fi
on_controller sinfo -R -o "'%64E %9u %N'"
step "15. heal, verify passes again, and --resume gives back the nodes ibprov drained (node02 stays drained)"
$IBPROV twin heal "$OUT/cluster.yaml"
for _ in $(seq 30); do  # the healed cable trains and the SM sweeps it in; bounded
  $IBPROV verify "$OUT/cluster.yaml" --target twin --fabric >/dev/null 2>&1 && break
  sleep 3
done
$IBPROV verify "$OUT/cluster.yaml" --target twin --fabric --resume "${DAY2[@]}"
step "15b. day 2: the faulty run against the healed one (findings resolved), and the metrics Prometheus would scrape"
$IBPROV report diff --history "$OUT/history" --spec "$OUT/cluster.yaml"
grep -E '^ibprov_(verify_last_run_exit_code|findings_resolved|sm_master_info)' "$OUT/metrics/ibprov.prom"
on_controller sinfo -N -o "'%N %T %E'"
on_controller scontrol update NodeName=node02 State=RESUME
step "15c. nothing secret on disk: the SM key is in no file the demo wrote (ansible-runner's artifacts, the fact
   cache, the history, metrics and reports, the twin's state and logs)"
# Left out: the log of the rogue SM that step 14 started. It plays a stray OpenSM on node04, and OpenSM 3.3.23
# answers SMInfo with its SM_Key to any SM unless M_Key protection is on (osm_sminfo_rcv.c), so the rogue
# learns the planned key and logs it (ERR 2F18): that is the stray host's disk, and why sm.rogue says to stop it.
if grep -rlF --exclude=rogue-opensm.log -- "$IBPROV_SM_KEY" "$OUT" .ibprov/twin-runs; then
  echo "the SM key was written to disk"; exit 1
fi
echo "the SM key is in none of the $(find "$OUT" .ibprov/twin-runs -type f ! -name rogue-opensm.log | wc -l) files written"
if grep -rqF --include=rogue-opensm.log -- "$IBPROV_SM_KEY" "$OUT"; then
  echo "(the rogue SM of step 14 read it from the planned SMs' SMInfo and logged it: without M_Key protection any SM on the fabric can)"
fi
step "16. the rack goes away, and nothing of it is left"
$IBPROV twin status "$OUT/cluster.yaml"
$IBPROV twin down "$OUT/cluster.yaml"
trap - EXIT
printf '\ndemo finished: reports in %s (report.html, report.json, junit.xml, report-perf.html, report-perf.json, report-faults.json, report-faults.html; history/ and metrics/ibprov.prom: day 2), files in %s\n' "$OUT" "$OUT"
