#!/usr/bin/env bash
# make demo: build a leaky sample operator, capture it live (pprof, trace
# windows, and eBPF where privileged), write the report and postmortem, and
# serve the workbench with the capture open.
#
# Everything is built with the Go that runs this script (GOTOOLCHAIN=local:
# no toolchain download, and no GOEXPERIMENT, so no second build of the
# standard library). Go 1.26 serves the goroutineleak profile only when
# built with GOEXPERIMENT=goroutineleakprofile, so on Go 1.26 the demo's
# capture has no goroutineleak profile (capture says so); Go 1.27 serves it.
#
# Settings (environment, or make demo VAR=value): ADDR, the workbench's
# address (default 127.0.0.1:7070); SAMPLE_ADDR, the sample's pprof
# address (default 127.0.0.1:0, a free port); SAMPLE (default
# operator-sim); DURATION (default 30s); OUT (default out).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local

SAMPLE=${SAMPLE:-operator-sim}
DURATION=${DURATION:-30s}
ADDR=${ADDR:-127.0.0.1:7070}
SAMPLE_ADDR=${SAMPLE_ADDR:-127.0.0.1:0}
OUT=${OUT:-out}
BIN=bin/leakscope
t0=$SECONDS
since() { echo "$((SECONDS - t0)) s"; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

mkdir -p "$OUT" bin
# The sample first: on a cold build cache the two builds would each
# compile the standard library at once; after it, leakscope's build
# reuses what the sample's compiled, while the sample already leaks.
echo "==> building samples/$SAMPLE with $(go env GOVERSION)"
go build -o "bin/$SAMPLE" "./samples/$SAMPLE"
echo "==> starting the leaky sample $SAMPLE, building $BIN ($(since))"
fifo=$(mktemp -u); mkfifo "$fifo"
"bin/$SAMPLE" -addr "$SAMPLE_ADDR" >"$fifo" 2>"$OUT/$SAMPLE.stderr" &
pids+=($!); target=$!
read -r first <"$fifo"; rm -f "$fifo"
url=${first#listening on }
echo "    pid $target, pprof at $url"
go build -o "$BIN" ./cmd/leakscope

bundle="$OUT/demo.lsb"
rm -rf "$bundle"
if [ "$(id -u)" != 0 ]; then
	echo "    note: not root, so no eBPF (capture will say so and record pprof and traces only)"
fi
echo "==> capturing for $DURATION ($(since))"
"$BIN" capture --pid "$target" --url "$url" --duration "$DURATION" --interval 5s --trace-window 2s --cpu-window 2s -o "$bundle"
kill "$target" 2>/dev/null || true

echo "==> writing reports and starting the workbench ($(since))"
"$BIN" serve --addr "$ADDR" --data "$OUT/data" &
pids+=($!); server=$!
"$BIN" report "$bundle" --format md -o "$OUT/report.md" &
r1=$!
"$BIN" report "$bundle" --postmortem --format html -o "$OUT/postmortem.html" &
r2=$!
"$BIN" report "$bundle" --postmortem --format md -o "$OUT/postmortem.md" &
r3=$!
for _ in $(seq 100); do
	curl -fsS "http://$ADDR/api/captures" >/dev/null 2>&1 && break
	sleep 0.1
done
id=$("$BIN" upload "$bundle" --to "http://$ADDR" | sed -n 's/.*capture id //p' | tail -1)
# Analyse it now, so the overview opens at once.
curl -fsS "http://$ADDR/api/captures/$id/report" >/dev/null
wait "$r1" "$r2" "$r3"
echo "    $OUT/report.md, $OUT/postmortem.html, $OUT/postmortem.md"
echo
echo "    open http://$ADDR/#/c/$id/overview   (ready $(since) after make demo began)"
echo "    (Ctrl-C stops the workbench)"
wait "$server"
