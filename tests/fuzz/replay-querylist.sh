#!/usr/bin/env bash
# make check: replay the querylist fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" querylist
