#!/usr/bin/env bash
# make check: the hostile stream server cases over dot (see hostile-streams.sh).
exec bash "$(dirname "$0")/hostile-streams.sh" dot
