#!/usr/bin/env bash
# make check: replay the csv fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" csv
