#!/usr/bin/env bash
# make check: replay the responder stream (rstream) fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" rstream
