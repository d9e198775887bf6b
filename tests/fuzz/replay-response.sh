#!/usr/bin/env bash
# make check: replay the response fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" response
