#!/usr/bin/env bash
# make check: replay the compare fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" compare
