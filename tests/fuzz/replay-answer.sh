#!/usr/bin/env bash
# make check: replay the answer fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" answer
