#!/usr/bin/env bash
# make check: replay the pcap fuzz corpus (see replay.sh).
exec "$(dirname "$0")/replay.sh" pcap
