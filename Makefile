# herdr-remote: the two commands a new machine needs are `make demo` and `make test`.
# Each installs what is missing (apt-get, pip) and builds first.

SWIFT ?= swift
SWIFT_FLAGS ?=
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps bench-deps build release install uninstall test demo bench fuzz format lint clean

all: build

deps:
	@bash scripts/install-deps.sh

# What only the benchmarks use besides: mosh (herdr-bench wan's anchor) and matplotlib (the plots).
bench-deps:
	@bash scripts/install-deps.sh --bench

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

release: deps
	$(SWIFT) build -c release $(SWIFT_FLAGS)

# The four programs into $(DESTDIR)$(PREFIX)/bin, with their bash, zsh and fish completions and man
# pages (which the freshly built programs print from their command specs), the systemd units (their
# ExecStart names $(PREFIX)/bin), the relay's env file example and the web client's static files
# ($(PREFIX)/share/herdr-remote/web, which `herdr-relay serve --web-client` serves by default).
# `make uninstall` (same PREFIX and DESTDIR) removes exactly that: scripts/install.sh keeps a manifest.
install: release
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" bash scripts/install.sh install "$$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)"

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" bash scripts/install.sh uninstall

# The tests start their own sshd, tmux, Python peers and network namespaces; they need root (as
# CI runs them). They run one at a time: many start real servers and measure real timeouts, and
# on a 2-core machine parallel tests starve each other's threads (about a minute in all).
test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build --no-parallel $(SWIFT_FLAGS)
	bash scripts/web-check.sh
	FUZZ_RUNS=3000 FUZZ_SEED=1 bash scripts/fuzz.sh

# Every parser under libFuzzer with AddressSanitizer, FUZZ_RUNS executions each (default
# 1,000,000); FUZZ_TARGETS="a b" runs some. docs/fuzzing.md lists the targets and their last run.
fuzz: deps
	bash scripts/fuzz.sh

demo: build
	@bash scripts/demo.sh

# Benchmarks run our code and the anchor (OpenSSH, openssl speed, a raw socket) in the same run
# and print the ratio; the latest results are kept in docs/benchmarks.md, and the wan suite's
# plots are drawn from .build/bench/wan.json into docs/ (scripts/plot-bench.py). BENCH_SUITES
# picks suites (`make bench BENCH_SUITES=wan`); empty runs them all.
BENCH_SUITES ?=
bench: bench-deps release
	@mkdir -p .build/bench && touch .build/bench/started
	.build/release/herdr-bench $(BENCH_SUITES)
	@if [ .build/bench/wan.json -nt .build/bench/started ]; then python3 scripts/plot-bench.py .build/bench/wan.json docs; fi

format:
	$(SWIFT) format -i -r Sources Tests Benchmarks Fuzz Package.swift

lint:
	$(SWIFT) format lint -r Sources Tests Benchmarks Fuzz

clean:
	rm -rf .build
