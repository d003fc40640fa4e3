#!/usr/bin/env bash
# make demo: build a leaky sample operator, capture it live (pprof, trace
# windows, and eBPF where privileged), write the report and postmortem, and
# serve the workbench with the capture open.
#
# Environment: SAMPLE (default operator-sim), DURATION (default 30s),
# ADDR (default 127.0.0.1:7070), OUT (default out), SAMPLE_GO (the
# toolchain that builds the sample, default go1.27.3: it serves the
# goroutineleak profile by default, so the sample builds against its
# cached standard library; `local` builds with the installed Go and
# GOEXPERIMENT=goroutineleakprofile, which rebuilds the standard library
# the first time).
set -euo pipefail
cd "$(dirname "$0")/.."

SAMPLE=${SAMPLE:-operator-sim}
DURATION=${DURATION:-30s}
ADDR=${ADDR:-127.0.0.1:7070}
OUT=${OUT:-out}
SAMPLE_GO=${SAMPLE_GO:-go1.27.3}
BIN=bin/leakscope

mkdir -p "$OUT" bin
echo "==> building $BIN and samples/$SAMPLE"
go build -o "$BIN" ./cmd/leakscope &
build=$!
if [ "$SAMPLE_GO" != local ] && GOTOOLCHAIN="$SAMPLE_GO" go version >/dev/null 2>&1; then
	GOTOOLCHAIN="$SAMPLE_GO" go build -o "bin/$SAMPLE" "./samples/$SAMPLE"
else
	echo "    $SAMPLE_GO not available: building the sample with GOEXPERIMENT=goroutineleakprofile"
	GOTOOLCHAIN=local GOEXPERIMENT=goroutineleakprofile go build -o "bin/$SAMPLE" "./samples/$SAMPLE"
fi
wait "$build"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

echo "==> starting the leaky sample $SAMPLE"
fifo=$(mktemp -u); mkfifo "$fifo"
"bin/$SAMPLE" >"$fifo" 2>"$OUT/$SAMPLE.stderr" &
pids+=($!); target=$!
read -r first <"$fifo"; rm -f "$fifo"
url=${first#listening on }
echo "    pid $target, pprof at $url"

bundle="$OUT/demo.lsb"
rm -rf "$bundle"
if [ "$(id -u)" != 0 ]; then
	echo "    note: not root, so no eBPF (capture will say so and record pprof and traces only)"
fi
echo "==> capturing for $DURATION"
"$BIN" capture --pid "$target" --url "$url" --duration "$DURATION" --interval 5s --trace-window 2s --cpu-window 2s -o "$bundle"
kill "$target" 2>/dev/null || true

echo "==> writing reports"
"$BIN" report "$bundle" --format md -o "$OUT/report.md"
"$BIN" report "$bundle" --postmortem --format html -o "$OUT/postmortem.html"
"$BIN" report "$bundle" --postmortem --format md -o "$OUT/postmortem.md"
echo "    $OUT/report.md, $OUT/postmortem.html, $OUT/postmortem.md"

echo "==> serving the workbench at http://$ADDR/"
"$BIN" serve --addr "$ADDR" --data "$OUT/data" &
pids+=($!); server=$!
for _ in $(seq 50); do
	curl -fsS "http://$ADDR/api/captures" >/dev/null 2>&1 && break
	sleep 0.2
done
id=$("$BIN" upload "$bundle" --to "http://$ADDR" | sed -n 's/.*capture id //p' | tail -1)
echo
echo "    open http://$ADDR/#/c/$id/overview"
echo "    (Ctrl-C stops the workbench)"
wait "$server"
