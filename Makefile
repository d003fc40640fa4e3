# leakscope — build, test, benchmark and demo targets.
# `make test` and `make demo` do all the setup a fresh machine needs.

GO       ?= go
BIN      := bin/leakscope
PKGS     := ./...
## the linters of make vet, pinned, installed by make deps-tools into bin/tools
TOOLS               := $(CURDIR)/bin/tools
STATICCHECK_VERSION := v0.8.2
DEADCODE_VERSION    := v0.53.0

.PHONY: all build deps deps-apt deps-npm deps-tools test test-go test-short test-duckdb vet fmt-check web web-check \
        bench accuracy demo generate fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/leakscope

## deps: everything the tests need on a fresh machine (Debian packages, Go
## modules, the Go toolchains of the version matrix, npm packages).
## Idempotent.
deps: deps-apt deps-npm deps-tools
	$(GO) mod download
	@# the Go releases of the version matrix (dev/versions), through the
	@# module proxy; the blocking-bug corpus (dev/corpus) uses go1.27.3 of them
	$(GO) run ./dev/versions/fetch
	cd samples/kube && $(GO) mod download
	cd export/duckdbtest && $(GO) mod download
	cd samples/libs && $(GO) mod download
	@# the corpus programs with library dependencies (dev/corpus)
	for d in grpcidle heldcallback kubequeue sqlpool waitloop; do \
		(cd samples/blocking/$$d && GOWORK=off $(GO) mod download) || exit 1; \
	done

## (gcc: the race detector, which the dump parser's tests run, and the cgo
## trace test program need cgo; qemu-user: the arm64 test runs leakscope and
## its target under it.)
deps-apt:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v gcc >/dev/null 2>&1 || missing="$$missing gcc"; \
	command -v qemu-aarch64 >/dev/null 2>&1 || missing="$$missing qemu-user"; \
	command -v promtool >/dev/null 2>&1 || missing="$$missing prometheus"; \
	command -v prometheus-alertmanager >/dev/null 2>&1 || missing="$$missing prometheus-alertmanager"; \
	command -v systemd-analyze >/dev/null 2>&1 || missing="$$missing systemd"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	command -v unshare >/dev/null 2>&1 || missing="$$missing util-linux"; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

## deps-tools: staticcheck and deadcode, through the module proxy.
deps-tools:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	GOBIN=$(TOOLS) $(GO) install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)

deps-npm:
	cd dev/arrowjs && npm ci --no-audit --no-fund --loglevel=error
	cd dev/parquetjs && npm ci --no-audit --no-fund --loglevel=error
	cd web/e2e && npm ci --no-audit --no-fund --loglevel=error

## test: the README's test command: vet, formatting, built assets current,
## and every test (eBPF tests run for real as root).
test: deps vet fmt-check web-check test-go test-duckdb

## (-p 3: most packages' tests wait on live programs for the windows they
## measure, so three test binaries at once keep two CPUs busy where two
## left one idle.)
test-go:
	$(GO) test -p 3 -count=1 -timeout 40m $(PKGS)

## test-short: the inner loop, vet and every test in -short mode, which
## skips the tests that run samples, toolchain builds, captures, browsers
## and the corpus for seconds each (no setup: run `make deps` once).
test-short: vet
	$(GO) test -short -count=1 -timeout 10m $(PKGS)

## test-duckdb: queries a Parquet export with DuckDB, in a module of its own
## (export/duckdbtest) so that nothing else links the engine.
test-duckdb:
	cd export/duckdbtest && $(GO) vet ./... && $(GO) test -count=1 -timeout 20m ./...

## vet: go vet, staticcheck (its default checks; a //lint:ignore line says
## why an exception stands) and deadcode (dev/deadcode/check.sh:
## nothing unreached, no shipped function reached only by tests, unless
## dev/deadcode/allow says why).
vet: deps-tools
	$(GO) vet $(PKGS)
	$(TOOLS)/staticcheck $(PKGS)
	dev/deadcode/check.sh $(TOOLS)/deadcode

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## web: rebuild the workbench's embedded assets from web/ui (pinned npm deps).
web:
	cd web/ui && npm ci --no-audit --no-fund --loglevel=error && npm run build

## web-check: the committed assets equal a fresh build.
web-check: web
	@git diff --exit-code --stat -- web/static || { echo "web/static is stale: run make web and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- web/static)" || { echo "web/static has files not committed: run make web and commit"; exit 1; }

## bench: benchmarks beside their references, in one run each, with ratios:
## pprof ingest vs profile.Parse, dump parse/ingest (MB/s, peak RSS), trace
## ingest vs bare x/exp/trace (each in its own process, in pairs: event-rate,
## CPU and peak-RSS ratios, table sizes; on 230 and 60 MB traces of a
## mixed workload, 60 and 200 MB span-heavy ones, unpaced and paced at
## 8 MB/s (generations of a few MB, as a busy service writes them), and a
## 60 MB one of short goroutines without spans), flame graphs vs the 200 ms target, analysis
## of 1M goroutine rows, of 20,000 suspects and of 1,000 to 20,000 growing
## stacks in goroutine and heap profiles (CPU, wall and peak heap against
## the count), web answers, eBPF probe
## cost and capture overhead. The first run generates a 1.2 GB
## dump and the traces (cached in $TMPDIR).
bench:
	$(GO) test -run '^$$' -bench ProfileIngest -benchtime 2x ./ingest/profiles/
	$(GO) run ./dev/profbench -mode parse
	$(GO) run ./dev/profbench -mode ingest
	$(GO) test -run '^$$' -bench . -benchtime 1x ./ingest/dump/
	$(GO) run ./dev/dumpbench -mode parse
	$(GO) run ./dev/dumpbench -mode ingest
	$(GO) run ./dev/tracebench -pairs 3
	$(GO) run ./dev/tracebench -pairs 1 -size 60
	$(GO) run ./dev/tracebench -pairs 3 -size 60 -shape spans
	$(GO) run ./dev/tracebench -pairs 1 -size 200 -shape spans
	$(GO) run ./dev/tracebench -pairs 3 -size 60 -shape spans -pace 8
	$(GO) run ./dev/tracebench -pairs 3 -size 200 -shape spans -pace 8
	$(GO) run ./dev/tracebench -pairs 1 -size 60 -shape goroutines
	$(GO) test -run '^$$' -bench . -benchtime 5x ./analysis/flame/
	$(GO) test -run '^$$' -bench Million -benchtime 3x ./analysis/
	$(GO) test -run '^$$' -bench TwentyThousand -benchtime 1x ./analysis/
	$(GO) test -run '^$$' -bench GrowingStacks -benchtime 1x ./analysis/
	$(GO) test -run '^$$' -bench WaitShapes -benchtime 1x ./analysis/
	$(GO) test -run '^$$' -bench Million -benchtime 20x ./web/
	$(GO) test -run '^$$' -bench . -benchtime 5x ./capture/probe/
	$(GO) test -run '^$$' -bench Overhead -benchtime 3x -timeout 30m ./capture/

## accuracy: run every sample, analyse it and print precision and recall
## (make test runs the same test and checks docs/ACCURACY.md's claim about it);
## then run the blocking-bug corpus (samples/blocking) and print detection
## per input form, the table in docs/ACCURACY.md (LEAKSCOPE_CORPUS_UPDATE=1
## writes the measured table there; see dev/corpus); then the Go
## team's leak suite, leakscope beside the runtime's profile
## (LEAKSCOPE_SUITE_UPDATE=1 writes its table).
accuracy:
	$(GO) test -count=1 -run TestAccuracy -v -timeout 30m ./analysis/
	$(GO) test -count=1 -run TestCorpusAccuracy -v -timeout 30m ./dev/corpus/
	$(GO) test -count=1 -run TestGoLeakSuite -v -timeout 30m ./dev/corpus/

## generate: refresh the committed sample bundles (cmd/leakscope/bundles)
## from the sample programs.
generate:
	$(GO) generate ./cmd/leakscope/bundles/

## fuzz: a run of every fuzz target (FUZZTIME each). Minimizing a new input
## is capped at FUZZMINIMIZE: the engine's default (60 s) stalls it at 0
## execs/s on large inputs.
FUZZTIME ?= 20s
FUZZMINIMIZE ?= 2s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg || exit 1; \
		done; \
	done

## demo: build leakscope and a leaky sample with the installed Go
## (scripts/demo.sh builds both at once), capture it live for 30 s, write
## the postmortem and serve the workbench with the capture open.
## make demo ADDR=host:port SAMPLE_ADDR=host:port sets the workbench's and
## the sample's addresses.
ADDR        ?= 127.0.0.1:7070
SAMPLE_ADDR ?= 127.0.0.1:0
demo:
	ADDR="$(ADDR)" SAMPLE_ADDR="$(SAMPLE_ADDR)" ./scripts/demo.sh

clean:
	rm -rf bin out
