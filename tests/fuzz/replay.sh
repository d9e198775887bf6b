#!/usr/bin/env bash
# Replay one fuzz target over its seed corpus (make check): replay.sh TARGET.
set -euo pipefail
: "${top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
t=$1
corpus="$top_srcdir/tests/fuzz/corpus/$t"
n=$(find "$corpus" -type f | wc -l)
[ "$n" -ge 3 ] || { echo "FAIL: corpus $corpus has $n files" >&2; exit 1; }
# -runs=0: a libFuzzer build replays and stops; the replay driver ignores flags.
exec "$top_builddir/tests/fuzz/fuzz_$t" -runs=0 "$corpus"
