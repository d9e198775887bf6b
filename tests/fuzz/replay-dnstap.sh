#!/usr/bin/env bash
# make check: replay the dnstap fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" dnstap
