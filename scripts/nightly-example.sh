#!/usr/bin/env bash
# nightly-example.sh: one night of a dnsvolley benchmark, built only from documented commands
# (doc/nightly.md): run a study, keep the results and the history, gate against a baseline,
# draw the plots and the HTML page. Exit status: that of the gated run (0 all gates hold,
# 1 a gate failed, 2 usage or input error, 3 the run failed); 2 if the plots could not be made.
#
# Settings (environment):
#   DV          the dnsvolley binary                      (dnsvolley)
#   DV_TARGET   [LABEL=]ADDR[:PORT] of the server         (required)
#   DV_LIST     [LABEL=]FILE, the query list              (required)
#   DV_DIR      where history, runs, baseline, www live   (./dnsvolley-nightly)
#   DV_FLUSH    cache flush command for the cold pass     (none: then a plain pass)
#   DV_LOAD     load options                              (-l 10 -q 100; with DV_FLUSH: -q 100,
#               since a cold pass is one run through the list and -l/-n are refused)
#   DV_HOT_TIME seconds of each hot pass (with DV_FLUSH)  (10)
#   DV_REPEAT   repeats of the cold/hot sequence          (3)
#   DV_GATES    gates                                     (--max-loss 0.1% --max-qps-drop 5% --max-p99-rise 10%)
#   DV_DATE     name of this night's run                  (UTC date and time, YYYYmmddTHHMMSSZ)
# The first night has no baseline: its results become the baseline and only the absolute
# gates apply. Replace "$DV_DIR/baseline.json" by hand to move the reference.
set -uo pipefail

DV=${DV:-dnsvolley}
: "${DV_TARGET:?set DV_TARGET to [LABEL=]ADDR[:PORT]}"
: "${DV_LIST:?set DV_LIST to [LABEL=]FILE}"
DV_DIR=${DV_DIR:-./dnsvolley-nightly}
if [ -n "${DV_FLUSH:-}" ]; then
	DV_LOAD=${DV_LOAD:--q 100}
else
	DV_LOAD=${DV_LOAD:--l 10 -q 100}
fi
DV_REPEAT=${DV_REPEAT:-3}
DV_GATES=${DV_GATES:---max-loss 0.1% --max-qps-drop 5% --max-p99-rise 10%}
DV_DATE=${DV_DATE:-$(date -u +%Y%m%dT%H%M%SZ)}

mkdir -p "$DV_DIR/runs" "$DV_DIR/www" || exit 2
run_json="$DV_DIR/runs/$DV_DATE.json"

passes=()
if [ -n "${DV_FLUSH:-}" ]; then
	passes=(--passes cold,hot --hot-time "${DV_HOT_TIME:-10}" --flush "$DV_FLUSH")
fi

# Relative gates need a baseline; the first night has none.
gates=()
read -r -a gate_words <<<"$DV_GATES"
if [ -f "$DV_DIR/baseline.json" ]; then
	gates=("${gate_words[@]}" --baseline "$DV_DIR/baseline.json")
else
	skip=0
	for w in "${gate_words[@]}"; do
		if [ $skip = 1 ]; then skip=0; continue; fi
		case $w in
		--max-qps-drop | --max-p99-rise) skip=1; continue ;;
		esac
		gates+=("$w")
	done
	echo "nightly: no baseline yet: this run becomes $DV_DIR/baseline.json" >&2
fi

# 1. The study: results file, history row per pass, gates with a JUnit report for CI.
# shellcheck disable=SC2086 # DV_LOAD is a list of words on purpose
"$DV" -s "$DV_TARGET" -d "$DV_LIST" $DV_LOAD --repeat "$DV_REPEAT" "${passes[@]}" \
	--quiet --json "$run_json" --csv "$DV_DIR/history.csv" \
	--junit "$DV_DIR/junit.xml" "${gates[@]}" | tee "$DV_DIR/gates.txt"
status=${PIPESTATUS[0]}

if [ ! -f "$DV_DIR/baseline.json" ] && [ "$status" -le 1 ] && [ -f "$run_json" ]; then
	cp "$run_json" "$DV_DIR/baseline.json" || status=2
fi

# 2. The pictures: this night's run, the whole history, and against the baseline.
if [ -f "$run_json" ]; then
	"$DV" plot "$run_json" -o "$DV_DIR/www/latest" || { [ "$status" = 0 ] && status=2; }
fi
if [ -f "$DV_DIR/history.csv" ]; then
	"$DV" plot "$DV_DIR/history.csv" -o "$DV_DIR/www/history" ||
		{ [ "$status" = 0 ] && status=2; }
fi
if [ -f "$run_json" ] && [ -f "$DV_DIR/baseline.json" ]; then
	"$DV" compare "$DV_DIR/baseline.json" "$run_json" >"$DV_DIR/www/compare.txt" 2>&1
fi

echo "nightly: status $status; pages in $DV_DIR/www/latest/index.html and $DV_DIR/www/history/index.html" >&2
exit "$status"
