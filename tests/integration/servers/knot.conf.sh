#!/usr/bin/env bash
# knot.conf.sh DIR PORT [SERVER-LINE...]: the start of a knotd configuration for a test:
# listening on 127.0.0.1@PORT only, run and storage folder DIR (so knotc -c finds its
# control socket, DIR/knot.sock), errors to standard error; each SERVER-LINE (for example
# "udp-workers: 1") goes into the server section. The test appends its own sections
# (keys, ACLs, modules, templates, zones). lib.sh's start_knotd starts it.
set -euo pipefail
dir=$1 port=$2
shift 2
printf 'server:\n    listen: 127.0.0.1@%s\n    rundir: %s\n' "$port" "$dir"
for line in "$@"; do printf '    %s\n' "$line"; done
printf 'database:\n    storage: %s\nlog:\n  - target: stderr\n    any: error\n' "$dir"
