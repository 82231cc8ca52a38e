# ibprov — the two commands: `make demo` and `make test`. Both install what they need and are safe to re-run.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Debian packages the simulated-fabric tests need (real OpenSM 3.3.23, infiniband-diags 44, ibsim + umad2sim).
APT_SIM := opensm infiniband-diags ibsim-utils libumad2sim0
APT_RACK := podman runc catatonit netavark aardvark-dns iptables debootstrap zstd openssh-client
STAMP := $(VENV)/.ibprov-installed

.PHONY: venv apt-sim apt-rack apt-browser apt-monitor lint ansible-lint typecheck unit test-debian13 sim molecule test demo golden bench fuzz mutate clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@$(PY) -c 'import sys; assert sys.version_info >= (3, 11), "ibprov needs Python >= 3.11"'
	@$(PY) -c 'import ensurepip' 2>/dev/null || scripts/apt-ensure.sh python3-venv
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

apt-sim:
	@scripts/apt-ensure.sh $(APT_SIM)

# The twin rack (`ibprov twin up`): podman and what it runs containers with; the node image is built
# (or loaded from its cache) on first use by images/ensure-images.sh.
apt-rack:
	@scripts/apt-ensure.sh $(APT_RACK)

# The HTML report is tested the way people look at it: in headless Chromium (Debian's).
apt-browser:
	@scripts/apt-ensure.sh chromium

# Monitoring (monitoring/, issue 27): promtool checks and unit-tests the alerting rules; tests run their own
# prometheus and node_exporter on loopback with their own ports. Debian's packages enable both services on install
# and start them where systemd runs (and no policy-rc.d forbids it), on 9090 and 9100: right after an install (and
# only then) this stops and disables them and node_exporter's collector timers (prometheus-node-exporter-*.timer,
# if prometheus-node-exporter-collectors came along), so nothing of the install is left running or comes back at
# boot. Once installed, a re-run changes nothing: whoever runs the services on that machine later decides.
APT_MONITOR := prometheus prometheus-node-exporter
apt-monitor:
	@missing=; for p in $(APT_MONITOR); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing=1; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	scripts/apt-ensure.sh $(APT_MONITOR) || exit 1; \
	units=; for u in prometheus.service prometheus-node-exporter.service \
			$$(cd /lib/systemd/system && ls prometheus-node-exporter-*.timer 2>/dev/null); do \
		[ -e /lib/systemd/system/$$u ] && units="$$units $$u"; \
	done; \
	[ -n "$$units" ] || exit 0; \
	echo "apt-monitor: stopping and disabling what the install enabled:$$units"; \
	if [ -d /run/systemd/system ]; then \
		systemctl disable --now --quiet $$units; \
	else \
		systemctl disable --quiet $$units 2>/dev/null || true; \
		for s in $(APT_MONITOR); do \
			[ -x /etc/init.d/$$s ] || continue; \
			invoke-rc.d $$s stop >/dev/null 2>&1 || true; update-rc.d $$s disable >/dev/null 2>&1 || true; \
		done; \
	fi

lint: venv
	$(BIN)/ruff check ibprov tests bench scripts
	$(BIN)/ruff format --check ibprov tests bench scripts
	$(BIN)/python scripts/gen_spec_docs.py --check
	$(BIN)/python scripts/gen_verify_docs.py --check
	$(BIN)/python scripts/gen_reader_docs.py --check
	$(BIN)/python scripts/import_graph.py --check

# Roles and playbooks: ansible-lint (production profile, yamllint included) and the generated role READMEs.
ansible-lint: venv
	$(BIN)/ansible-lint
	$(BIN)/python scripts/gen_role_docs.py --check

typecheck: venv
	$(BIN)/mypy

unit: venv apt-monitor
	$(BIN)/pytest -q -n 2 -m 'not sim and not molecule and not twin' tests

sim: venv apt-sim
	$(BIN)/pytest -q -m sim tests

# Molecule scenarios on Debian 12 and 13 nodes (podman containers from locally built images; installs podman etc.).
molecule: venv
	scripts/molecule-suites.sh

# The unit and sim suites on Debian 13's stack as well (Python 3.13, OpenSM, infiniband-diags 56.1, ibsim 0.12),
# in a container of the trixie node image (no network).
test-debian13: venv apt-rack apt-monitor
	scripts/test-debian13.sh

test: venv apt-sim apt-rack apt-browser apt-monitor lint ansible-lint typecheck
	$(BIN)/pytest -q -n 2 -m 'not molecule and not twin' tests
	scripts/test-debian13.sh
	scripts/molecule-suites.sh
	$(BIN)/pytest -q -m twin tests

# The nightly property test: random specs (random seed, FUZZ_EXAMPLES of them) that validate must be taken by
# the real OpenSM on the twin. Counterexamples are saved to out/fuzz-counterexamples/ (add them to REGRESSIONS
# in tests/sim/test_validate_implies_opensm.py with the fix). `make test` runs the same test seeded and short.
FUZZ_EXAMPLES ?= 5000
fuzz: venv apt-sim
	IBPROV_SIM_FUZZ_RANDOM=1 IBPROV_SIM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) \
		$(BIN)/pytest -q -m sim tests/sim/test_validate_implies_opensm.py -k validates

# Rewrite the golden files of rendered output after an intended change (review the diff!).
golden: venv
	$(BIN)/pytest -q tests/unit -k golden --update-golden

# Mutation testing of the ibprov modules changed since MUTATE_BASE (default HEAD~1), or of MODULES="ibprov/x.py ...";
# MUTATE_ARGS=--record updates their rows in docs/mutation.md (scripts/mutate.py; never part of `make test`).
MUTATE_BASE ?= HEAD~1
mutate: venv apt-monitor
	$(BIN)/python scripts/mutate.py --base $(MUTATE_BASE) $(MUTATE_ARGS) $(MODULES)

demo: venv apt-sim apt-rack
	@scripts/demo.sh

# Benchmarks (results go to docs/benchmarks.md; never part of `make test`: these machines are noisy).
bench: venv apt-sim
	$(BIN)/python bench/validate_10k.py --update-docs
	$(BIN)/python bench/render_10k.py
	$(BIN)/python bench/twin_1024.py
	$(BIN)/python bench/verify_1024.py --append
	$(BIN)/python bench/routing_audit.py --offline --twin --update-docs
	$(BIN)/python bench/metrics_10k.py --update-docs
	$(BIN)/python bench/sm_backend_sync.py --update-docs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .mutate
