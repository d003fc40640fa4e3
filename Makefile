# leakscope — build, test, benchmark and demo targets.
# `make test` and `make demo` do all the setup a fresh machine needs.

GO       ?= go
BIN      := bin/leakscope
PKGS     := ./...
# Packages with benchmarks that `make bench` runs, side by side with their
# reference (profile.Parse, bare x/exp/trace, go tool pprof, no capture).
BENCH_PKGS := ./ingest/... ./analysis/... ./web/... ./capture/...
BENCHTIME  ?= 1x

.PHONY: all build deps deps-apt deps-npm test test-go vet fmt-check web web-check \
        bench accuracy demo generate fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/leakscope

## deps: everything the tests need on a fresh machine (Debian packages, Go
## modules, npm packages). Idempotent.
deps: deps-apt deps-npm
	$(GO) mod download

deps-apt:
	@if ! command -v chromium >/dev/null 2>&1; then \
		echo "installing Debian packages: chromium"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

deps-npm:
	cd internal/arrowjs && npm ci --no-audit --no-fund --loglevel=error
	@if [ -f web/e2e/package.json ]; then cd web/e2e && npm ci --no-audit --no-fund --loglevel=error; fi

## test: the README's test command: vet, formatting, built assets current,
## and every test (eBPF tests run for real as root).
test: deps vet fmt-check web-check test-go

test-go:
	$(GO) test -count=1 -timeout 40m $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## web: rebuild the workbench's embedded assets from web/ui (pinned npm deps).
web:
	@if [ -f web/ui/package.json ]; then cd web/ui && npm ci --no-audit --no-fund --loglevel=error && npm run build; fi

## web-check: the committed assets equal a fresh build.
web-check:
	@if [ -f web/ui/package.json ]; then \
		$(MAKE) --no-print-directory web && \
		git diff --exit-code --stat -- web/static || { echo "web/static is stale: run make web and commit"; exit 1; }; \
	fi

## bench: benchmarks beside their references, with ratios.
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 60m $(BENCH_PKGS)

## accuracy: run every sample, analyse it and print precision and recall.
accuracy:
	LEAKSCOPE_ACCURACY=1 $(GO) test -count=1 -run TestAccuracy -v -timeout 30m ./analysis/

## generate: refresh the committed sample bundles from the sample programs.
generate:
	$(GO) generate ./samples/...

## fuzz: a short run of every fuzz target (FUZZTIME each).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## demo: build a leaky sample, capture it live for ~30 s, write the
## postmortem and serve the workbench with the capture open.
demo: build
	./scripts/demo.sh

clean:
	rm -rf bin out
