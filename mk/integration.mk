# tests/integration: bash scripts that start real processes on loopback and assert
# exact counts (lib.sh holds their shared helpers). TSAN_TESTS is the subset where
# threads meet, run again under ThreadSanitizer.
# The longest tests come first: `make check -jN` starts them early rather than leaving
# them for the tail (quickstart runs the checks with twice as many jobs as cores: the
# tests spend most of their time waiting). package.sh builds the Debian package from a
# copy of the tree: it does not depend on how this build is configured, so the sanitizer
# builds leave it out.
INTEGRATION_TESTS =
if !SANITIZED
INTEGRATION_TESTS += tests/integration/package.sh
endif
INTEGRATION_TESTS += \
	tests/integration/stream-conns.sh tests/integration/mpi.sh \
	tests/integration/stream-outputs.sh tests/integration/responder-doh.sh \
	tests/integration/capacity-study.sh tests/integration/hostile-streams-doh.sh \
	tests/integration/dnsdist.sh tests/integration/hostile-streams-dot.sh \
	tests/integration/engine-counts.sh tests/integration/engine-window.sh tests/integration/wire-sample.sh \
	tests/integration/engine-rate.sh tests/integration/engine-errors.sh \
	tests/integration/genlist.sh tests/integration/responder.sh \
	tests/integration/study-responder.sh tests/integration/study-real-servers.sh \
	tests/integration/study-streams.sh \
	tests/integration/nightly.sh tests/integration/plot.sh tests/integration/report-browser.sh \
	tests/integration/plot-panels.sh \
	tests/integration/completion.sh \
	tests/integration/hostile.sh tests/integration/hostile-streams-tcp.sh \
	tests/integration/limits.sh \
	tests/integration/bad-input.sh tests/integration/server-restart.sh \
	tests/integration/unsafe-outputs.sh tests/integration/flush-signal.sh \
	tests/integration/capacity.sh tests/integration/resperf.sh \
	tests/integration/capacity-streams.sh tests/integration/server-cost.sh tests/integration/server-stats.sh tests/integration/server-cost-cmd.sh \
	tests/integration/responder-tcp.sh tests/integration/responder-idle.sh \
	tests/integration/responder-hostile.sh tests/integration/responder-doh-budget.sh \
	tests/integration/streams.sh tests/integration/ipv6-transports.sh \
	tests/integration/stream-sources.sh tests/integration/stream-no-port.sh \
	tests/integration/capture.sh tests/integration/loss.sh tests/integration/verbose.sh \
	tests/integration/terminal.sh \
	tests/integration/closed-stdout.sh tests/integration/hostile-files.sh \
	tests/integration/signals.sh \
	tests/integration/output-nodes.sh tests/integration/merge.sh tests/integration/input-lists.sh \
	tests/integration/output-checks.sh \
	tests/integration/mpi-study.sh tests/integration/mpi-netns.sh
# issue 24: resperf's flags and plot file, --capture-server, per-line flags, TSIG, updates
INTEGRATION_TESTS += tests/integration/resperf-flags.sh tests/integration/capture-server.sh \
	tests/integration/query-flags.sh tests/integration/tsig.sh tests/integration/update.sh
# issue 23: --server-stats against real PowerDNS Authoritative, Recursor and BIND
INTEGRATION_TESTS += tests/integration/server-stats-pdns-bind.sh tests/integration/plot-server.sh
# the man pages, the usage texts and the completion name exactly the options the code accepts
INTEGRATION_TESTS += tests/integration/man-options.sh
# issue 22: scripts/check-rules fails on hand-written DNS wire and on dead functions
INTEGRATION_TESTS += tests/integration/check-rules.sh
# issues 25 and 27: scripts/lab, a network namespace with the responder or knotd (XDP)
INTEGRATION_TESTS += tests/integration/lab.sh
# issue 27: dnsvolley --xdp and dnsvolley-responder --xdp in the lab (doc/xdp.md)
INTEGRATION_TESTS += tests/integration/xdp.sh
# issue 27: dnsvolley-responder --xdp's full answers through AF_XDP sockets, in the lab
INTEGRATION_TESTS += tests/integration/xdp-answer.sh
# issue 25: DNS over QUIC against the responder and hostile DoQ peers; against knotd in the lab
INTEGRATION_TESTS += tests/integration/doq.sh tests/integration/hostile-doq.sh \
	tests/integration/doq-knot.sh
TESTS += $(INTEGRATION_TESTS)
TSAN_TESTS += tests/integration/engine-counts.sh tests/integration/engine-window.sh \
	tests/integration/engine-rate.sh tests/integration/engine-errors.sh \
	tests/integration/responder.sh tests/integration/server-restart.sh \
	tests/integration/responder-tcp.sh
EXTRA_DIST += $(INTEGRATION_TESTS) tests/integration/hostile-streams.sh tests/integration/package.sh tests/integration/lib.sh tests/integration/stream-client.py \
	tests/helpers/hostile-client.py tests/helpers/raw-frames.py \
	tests/integration/pty-run.py \
	tests/integration/servers/nsd.conf.sh tests/integration/servers/unbound.conf.sh \
	tests/integration/servers/zone.sh tests/integration/servers/nsd-unbound.sh \
	tests/integration/servers/unbound-dnstap.sh tests/integration/servers/knot.conf.sh
