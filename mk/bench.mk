# bench: benchmark programs and scripts (speed is measured here, never in tests).
# bench/floor is the kernel-floor client for bench/replay.sh, bench/tcp-floor the same
# over TCP with many connections for bench/stream-conns.sh; bench/ql-load times list
# loading for bench/load-querylist.sh.
noinst_PROGRAMS = bench/floor bench/tcp-floor
bench_floor_SOURCES = bench/floor.c bench/floor-query.h
bench_tcp_floor_SOURCES = bench/tcp-floor.c bench/floor-query.h
check_PROGRAMS += bench/ql-load
bench_ql_load_SOURCES = bench/ql-load.c
EXTRA_DIST += bench/replay.sh bench/responder-ceiling.sh bench/load-querylist.sh \
	bench/gen-big-list.sh bench/mpi-cpu.sh bench/capacity-knot.sh bench/capture-compare.sh \
	bench/clock-cost.sh bench/ab-cpu.sh bench/paced-cpu.sh bench/streams.sh bench/stream-conns.sh bench/rcvbuf.py \
	bench/timing-bounds.sh bench/server-cost.sh bench/tsig-cpu.sh bench/knot-tcp.sh bench/study-unbound.sh \
	bench/xdp.sh bench/xdp-responder.sh bench/cpu-split.py \
	bench/doq.sh bench/lib.sh bench/responder-tcp-ab.sh bench/load-pcap.sh bench/replay-capture.sh \
	bench/rss-soak.sh
