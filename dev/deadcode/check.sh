#!/usr/bin/env bash
# Usage: dev/deadcode/check.sh DEADCODE
#
# Fails on a function no program and no test reaches (deadcode -test), and
# on a shipped function only tests reach (deadcode over the shipped
# folders), unless dev/deadcode/allow lists it with its reason; and on a
# listed function that is reached after all, so the list only shrinks.
set -euo pipefail
deadcode=${1:?usage: $0 DEADCODE}
cd "$(dirname "$0")/../.."
module=github.com/leakscope/leakscope
# Shipped: what cmd/leakscope links, bar flight/, a library the services
# import (no program of this module calls it).
shipped="^$module/(agent|analysis|capture|cmd|export|ingest|internal|web)(/|\$)"
fmt='{{range .Funcs}}{{$.Path}}.{{.Name}}{{"\n"}}{{end}}'
found=$( { "$deadcode" -test -f "$fmt" ./...; "$deadcode" -filter "$shipped" -f "$fmt" ./...; } | sort -u)
allowed=$(awk '!/^#/ && NF { print $1 }' dev/deadcode/allow | sort -u)
bad=0
new=$(comm -23 <(echo "$found") <(echo "$allowed") | sed '/^$/d')
if [ -n "$new" ]; then
	echo "deadcode: unreached (or reached only by tests); delete it, or list it with its reason in dev/deadcode/allow:"
	echo "$new" | sed 's/^/  /'
	bad=1
fi
stale=$(comm -13 <(echo "$found") <(echo "$allowed") | sed '/^$/d')
if [ -n "$stale" ]; then
	echo "deadcode: dev/deadcode/allow lists what is reached now; delete the lines:"
	echo "$stale" | sed 's/^/  /'
	bad=1
fi
exit $bad
