# kafkacore — two commands on a fresh machine: `make run` and `make test`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python
export KAFKACORE_CACHE ?= $(HOME)/.cache/kafkacore
RUST_SOURCES := $(shell find rust -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml
DEV_DEPS := pytest pytest-benchmark pytest-timeout pytest-xdist hypothesis ruff mypy 'maturin>=1.7,<2' \
	google-crc32c lz4 zstandard cramjam confluent-kafka 'pyspark==4.3.0' 'pyarrow>=16' \
	ziglang auditwheel 'kazoo>=2.9' cryptography \
	starlette jinja2 uvicorn python-multipart playwright matplotlib py-spy atheris \
	'mkdocs>=1.6,<2' 'mkdocs-material>=9.5' 'import-linter>=2.1' 'xxhash>=3.4' 'google-re2>=1.1' \
	'obstore>=0.12' boto3

.PHONY: run test test-fast format build wheel bench bench-broker bench-spark lint rust-test py-test \
	kafka-jars spark-jars clean demo test-clients pipeline cluster bench-cluster chaos docs raft-sim

$(BIN)/activate:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.deps: $(BIN)/activate pyproject.toml Makefile
	$(BIN)/pip install -q $(DEV_DEPS)
	touch $@

# The extension, built in release mode into the virtualenv (editable install). Offline once
# the dependencies are installed: the console's npm assets are fetched by the targets that
# serve or ship the console (run, console, the tests, wheel), not by every build.
$(VENV)/.built: $(VENV)/.deps $(RUST_SOURCES)
	. $(BIN)/activate && maturin develop --release -q
	touch $@

build: $(VENV)/.built

# The main job: the single-node broker on localhost:9092, data in ./data, its web console
# at $(CONSOLE) (http://127.0.0.1:8080; `make run CONSOLE=` for none).
run: build console-assets
	$(PYTHON) -m kafkacore.cli server-start config/server.properties --override log.dirs=./data \
		--override console.listeners=$(CONSOLE)

# A local cluster: Apache ZooKeeper (from Kafka 3.9.1's jars) on 127.0.0.1:2181 and three
# brokers on localhost:9092-9094, data in ./cluster-data; Ctrl-C stops everything.
# `make cluster TIERED=1`: with tiered storage on S3Proxy (127.0.0.1:9000, bucket
# kafkacore-tiered; scripts/s3proxy.sh fetches it from Maven Central once).
cluster: build
	KAFKA_VERSION=3.9.1 scripts/kafka-jars.sh >/dev/null
	$(PYTHON) scripts/cluster.py $(if $(TIERED),--tiered)

# The fault campaign (tests/chaos): 20 seeded runs of faults against three brokers
# behind fault-injecting proxies, one table row per seed; histories in ./chaos-runs/seed-N/
# (re-check one: PYTHONPATH=python:tests $(PYTHON) -m chaos.check chaos-runs/seed-N/history.jsonl).
# Mounts a tmpfs for the full-disk fault (root; ARGS=--no-disk-fault to leave it out).
# Then the transaction runs (tests/txn_chaos): 5 seeded runs of transactional producers and
# read_committed readers while the broker is SIGKILLed (one node, then the 3-broker cluster),
# judged by support/txn_checker.py, and 20 crash-sweep rounds; TXN_ARGS go to the campaigns.
chaos: build
	KAFKA_VERSION=3.9.1 scripts/kafka-jars.sh >/dev/null
	PYTHONPATH=python:tests $(PYTHON) -m chaos.campaign --seeds 20 --out chaos-runs $(ARGS)
	PYTHONPATH=python:tests $(PYTHON) -m txn_chaos.campaign --target kafkacore --seeds 5 --out chaos-runs/txn $(TXN_ARGS)
	PYTHONPATH=python:tests $(PYTHON) -m txn_chaos.campaign --target cluster --seeds 5 --out chaos-runs/txn $(TXN_ARGS)
	PYTHONPATH=python:tests $(PYTHON) -m txn_chaos.sweep --rounds 20 --out chaos-runs/txn-sweep

# Raft safety by simulation (tests/raft): many more seeds than `make test` runs, 4 workers,
# of the 3- and 5-voter, dynamic-voter and wire-format scenarios
# (RAFT_SIM_SEEDS per scenario, from RAFT_SIM_FIRST_SEED; RAFT_SIM_RUN_MS of faults each).
RAFT_SIM_SEEDS ?= 500
raft-sim: build
	RAFT_SIM_SEEDS=$(RAFT_SIM_SEEDS) $(BIN)/pytest -q -n 4 -p no:cacheprovider tests/raft/test_simulation.py -k "voters or wire"

# The storage demo: a partition directory with several segments, printed by the dump tool.
demo: build
	$(PYTHON) -m kafkacore.demo ./demo-data

lint: $(VENV)/.deps
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --release -q -- -D warnings
	$(BIN)/ruff check python tests benches examples
	$(BIN)/ruff format --check python tests benches examples
	$(BIN)/mypy
	PYTHONPATH=python $(BIN)/lint-imports --no-cache  # before the build: kafkacore found by path

rust-test:
	cargo test --workspace --release -q

# Third-party clients for tests/compat: kcat (apt), kafka-python 2.x/3.x and aiokafka
# (each pip --target'ed into $(KAFKACORE_CACHE)/pyclients). Cached; quick when present.
test-clients: $(VENV)/.deps
	PYTHON=$(abspath $(PYTHON)) bash scripts/install-test-clients.sh >/dev/null

# Spark's own Kafka connector (spark-sql-kafka-0-10 for the installed pyspark) from Maven
# Central into $(KAFKACORE_CACHE), for tests/spark/test_spark_kafka_connector.py.
spark-jars: $(VENV)/.deps
	PYTHON=$(abspath $(PYTHON)) bash scripts/spark-jars.sh >/dev/null

# The tests in two passes: everything but the `serial` tests on PYTEST_WORKERS pytest-xdist
# workers (most tests wait on JVMs, brokers and sockets, so more workers than cores pay),
# each test module on one worker (its brokers start once: see tests/conftest.py), then the
# timing-sensitive `serial` tests (measured rates) alone.
PYTEST_WORKERS ?= 3
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadgroup --no-loadscope-reorder

py-test: build console-assets test-clients spark-jars
	$(PYTHON) -m mypy.stubtest kafkacore._native --allowlist stubtest-allowlist.txt
	$(BIN)/pytest -q $(PYTEST_PARALLEL) --durations=25 -m "not serial" tests
	$(BIN)/pytest -q --durations=10 -m serial tests

test: lint rust-test docs py-test

# The documentation site (MkDocs, Material theme): docs/ into site/ (gitignored). Strict: a
# broken link or anchor fails the build, and with it `make test`. Builds offline.
# NO_MKDOCS_2_WARNING silences Material's banner about MkDocs 2 (not a build warning).
docs: $(VENV)/.deps
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The quick loop: lint, the Rust tests and every Python test that needs nothing downloaded
# (no Kafka/Spark jars, no third-party clients): `interop` and `downloads` are deselected.
test-fast: build console-assets lint rust-test docs
	$(PYTHON) -m mypy.stubtest kafkacore._native --allowlist stubtest-allowlist.txt
	$(BIN)/pytest -q $(PYTEST_PARALLEL) -m "not interop and not downloads and not serial" tests
	$(BIN)/pytest -q -m "serial and not interop and not downloads" tests

# Rewrites the sources in place: cargo fmt, ruff format, ruff's fixes.
format: $(VENV)/.deps
	cargo fmt --all
	$(BIN)/ruff format python tests benches examples
	$(BIN)/ruff check --fix -q python tests benches examples

kafka-jars:
	bash scripts/kafka-jars.sh

# Wheels for every Linux: abi3 (CPython >= 3.10), cross-compiled with zig (the ziglang
# package) so the glibc tag does not depend on this machine's: manylinux2014 (glibc 2.17)
# and musllinux_1_2, x86_64 and aarch64; plus the sdist. auditwheel confirms the manylinux
# tags (run it on a musl host for the musllinux ones).
WHEEL_TARGETS := x86_64-unknown-linux-gnu:manylinux2014 aarch64-unknown-linux-gnu:manylinux2014 \
	x86_64-unknown-linux-musl:musllinux_1_2 aarch64-unknown-linux-musl:musllinux_1_2
wheel: $(VENV)/.deps console-assets
	rm -rf dist
	rustup target add $(foreach t,$(WHEEL_TARGETS),$(firstword $(subst :, ,$(t))))
	. $(BIN)/activate && for t in $(WHEEL_TARGETS); do \
		maturin build --release -q --zig -o dist --target $${t%%:*} --compatibility $${t##*:} \
		|| exit 1; done
	. $(BIN)/activate && maturin sdist -o dist
	@# auditwheel resolves a wheel's libraries on this host: glibc wheels only (on a glibc
	@# host it takes the musl wheels' libc.so for glibc's linker script and fails).
	@for w in dist/*manylinux*.whl; do echo -n "$$(basename $$w): "; \
		$(BIN)/auditwheel show $$w | tr '\n' ' ' | grep -o 'consistent with[^"]*"[^"]*"' \
		|| exit 1; done

bench: build
	mkdir -p benches/results
	$(BIN)/pytest -q benches --benchmark-only --benchmark-json=benches/results/raw.json -p no:cacheprovider
	$(PYTHON) benches/report.py benches/results/raw.json benches/results/hotpath.json

clean:
	cargo clean
	rm -rf $(VENV) dist data site

# The log-monitoring pipeline: broker + log agent + Spark job, aggregates printed as they come.
pipeline: build
	$(PYTHON) -m kafkacore.cli pipeline demo $(ARGS)

# Spark batch read of 10M records: the kafkacore source (direct and broker path) vs Spark's
# Kafka connector on Apache Kafka 4.3.1; writes benches/results/spark_read.json.
bench-spark: build spark-jars kafka-jars
	mkdir -p benches/results
	$(PYTHON) benches/spark/run.py

# Three kafkacore brokers (on ZooKeeper) vs three Kafka 4.3.1 brokers (KRaft): acks=all,
# RF 3, min.insync.replicas=2, 1 KiB records; writes benches/results/cluster_vs_kafka.json.
bench-cluster: build
	KAFKA_VERSION=3.9.1 scripts/kafka-jars.sh >/dev/null
	$(PYTHON) benches/cluster/run.py $(ARGS)
	$(PYTHON) benches/cluster/reassign.py $(REASSIGN_ARGS)

# Side-by-side produce/consume benchmark: Apache Kafka 4.3.1 (from the jars) vs kafkacore
# (throughput, latency at half load x3, CPU s/GiB, ConsumerPerformance, 1 vs 2 cores; a C
# load generator built from Debian's librdkafka-dev, pinned apart from the broker, with CPU
# and system calls per request, and the spread over 6/1,000/10,000 partitions), 3
# repetitions alternating the brokers. ARGS go to benches/broker/run.py, e.g.
# ARGS="--cases matrix --seconds 10", ARGS=--quick. request_quota_overhead.py: what
# timing requests for request_percentage costs.
bench-broker: build
	$(PYTHON) benches/broker/run.py $(ARGS)

# --- web console ------------------------------------------------------------------------------
# console-assets: htmx, its SSE extension and uPlot from the npm registry (`npm pack`,
# sha256-pinned) into python/kafkacore/console/static/vendor/ (gitignored; in the wheel); a
# no-op, without the network, when the pinned files are already there.
# chromium: Debian's browser for the console's Playwright tests (tests/console), installed
# with apt-get when /usr/bin/chromium is missing (Playwright never downloads one).
# console: the console as its own process against BOOTSTRAP (default localhost:9092), on
# http://127.0.0.1:8081 (make run's broker serves its own on 8080).
# console-kafka-test: `kafkacore console` against Apache Kafka 4.3.1 in the browser (outside
# `make test`: a Kafka JVM's start-up is over the console tests' time budget).
.PHONY: console-assets chromium console console-kafka-test
py-test: chromium

console-assets:
	bash scripts/console-assets.sh

chromium:
	@test -x /usr/bin/chromium || (apt-get update -q && apt-get install -y -q chromium)

CONSOLE ?= http://127.0.0.1:8080
BOOTSTRAP ?= localhost:9092
console: build console-assets
	$(PYTHON) -m kafkacore.cli console --bootstrap-server $(BOOTSTRAP) --listen http://127.0.0.1:8081 $(ARGS)

console-kafka-test: build console-assets chromium kafka-jars
	$(BIN)/pytest -q -p no:cacheprovider tests/console/kafka_core_check.py

# --- web console: Messages and Storage --------------------------------------------------------
# bench-console: a kafkacore broker with the console and a 1 GiB topic; produce latency
# (p50/p99) at rest and while the console's first key search indexes the whole topic, the
# key lookup time after it, CPU seconds of the broker and of the console's scan process;
# writes benches/results/console.json (ARGS: --gib, --seconds, --rate).
.PHONY: bench-console
bench-console: build console-assets
	mkdir -p benches/results
	$(PYTHON) benches/console/run.py $(ARGS)

# --- web console operations ---------------------------------------------------------------------
# test-console-cluster: the Operations view on a three-broker ZooKeeper cluster (decommission
# plan, a throttled reassignment checked with Kafka's kafka-reassign-partitions --verify, a
# scheduled preferred election); too slow for make test's console budget, so a file make test
# does not collect (tests/console/ops_cluster_check.py). bench-console-metrics: what the
# broker's counters cost a Produce request (CPU time of the hooks vs the broker's per request).
.PHONY: test-console-cluster bench-console-metrics
test-console-cluster: build console-assets chromium
	$(BIN)/pytest -q -p no:cacheprovider tests/console/ops_cluster_check.py

bench-console-metrics: build
	$(PYTHON) benches/console/metrics_overhead.py $(ARGS)

# --- scale: 10,000 partitions and 10,000 idle connections on one broker,
# kafkacore vs Apache Kafka 4.3.1 (KRaft, from the jars); ARGS=--quick for a short run.
# Writes benches/results/scale_vs_kafka.json.
.PHONY: bench-scale
bench-scale: build kafka-jars
	$(PYTHON) benches/scale/run.py $(ARGS)

# The network fuzzer, long: mutated frames of every API and version against a running
# kafkacore broker over many connections, a well-behaved client producing and consuming
# throughout (tests/hostile/netfuzz.py; `make test` runs it for 10 s). Prints sends/s and
# the findings (written to netfuzz-findings/); exit status 1 when there are any.
NETFUZZ_SECONDS ?= 600
NETFUZZ_CONNECTIONS ?= 32
NETFUZZ_ARGS ?=
.PHONY: fuzz-net
fuzz-net: build
	cd tests && PYTHONPATH=../python:. $(abspath $(PYTHON)) -m hostile.netfuzz \
		--seconds $(NETFUZZ_SECONDS) --connections $(NETFUZZ_CONNECTIONS) \
		--findings ../netfuzz-findings $(NETFUZZ_ARGS)

# --- Crash sweep and soak -----------------------------------------------------------------------
.PHONY: crash-sweep soak
# The broker crash sweep (tests/broker_crash): 1,000 seeded points of a kafkacore broker
# SIGKILLed under acks=1/acks=all produce, compaction, retention, group commits and topic
# churn, each restart checked (no acknowledged record lost, no phantom, commits present,
# indexes and checkpoints, Kafka's DumpLogSegments). Resumable: rerun to continue from
# CRASH_STATE; CRASH_ARGS (e.g. --points 2000 --seed 7) go to the sweep.
CRASH_STATE ?= crash-sweep-state
crash-sweep: build kafka-jars
	PYTHONPATH=tests $(PYTHON) -m broker_crash.sweep --state $(CRASH_STATE) $(CRASH_ARGS)

# The soak (tests/soak): 30 minutes of mixed load on one broker; RSS, open files, threads,
# CPU, produce p99 and an ApiVersions probe sampled into soak-out/trace.{csv,json} and
# soak-out/soak.png, with a stable/growing verdict. SOAK_ARGS (e.g. --minutes 5) go to it.
soak: build
	PYTHONPATH=tests $(PYTHON) -m soak.soak --out soak-out $(SOAK_ARGS)

# Fuzzing (tests/fuzz, rust/fuzz): the cargo-fuzz (libFuzzer) targets over the
# native parsers - batch_v2, legacy, decompress, columns, index, segment, cleaner -
# FUZZ_RUNS executions each (10 M by default; FUZZ_SECONDS caps each target's time),
# then the atheris protocol-codec fuzzer (ATHERIS_RUNS executions) seeded with real
# frames of every API and version. Prints execs, execs/s and findings per target;
# corpora and findings in rust/fuzz/corpus and rust/fuzz/artifacts (gitignored). Exit 1
# on a finding. cargo-fuzz needs nightly compiler flags: RUSTC_BOOTSTRAP=1 lets the
# stable compiler accept them for this build only (see tests/fuzz/run.py).
FUZZ_RUNS ?= 10000000
FUZZ_SECONDS ?= 0
ATHERIS_RUNS ?= 2000000
.PHONY: fuzz
fuzz: build
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	cd tests && PYTHONPATH=../python:. $(abspath $(PYTHON)) -m fuzz.run --runs $(FUZZ_RUNS) \
		--seconds $(FUZZ_SECONDS) --atheris-runs $(ATHERIS_RUNS) $(ARGS)
