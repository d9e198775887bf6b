#!/usr/bin/env bash
# make check: replay the stream fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" stream
