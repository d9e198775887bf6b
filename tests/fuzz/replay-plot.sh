#!/usr/bin/env bash
# make check: replay the plot fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" plot
