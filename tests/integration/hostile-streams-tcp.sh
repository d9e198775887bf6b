#!/usr/bin/env bash
# make check: the hostile stream server cases over tcp (see hostile-streams.sh).
exec bash "$(dirname "$0")/hostile-streams.sh" tcp
