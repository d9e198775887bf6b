#!/usr/bin/env bash
# make check: replay the results fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" results
