# fuzz: libFuzzer targets, their seed corpora (replayed by make check), the
# hostile test server and the robustness tests (issue 6; doc/fuzzing.md,
# doc/robustness.md).
#
# Without --enable-fuzzing each target is linked with tests/fuzz/replay_main.c
# and make check runs it once over its corpus (any compiler, no clang runtime).
# With ./configure CC=clang --enable-fuzzing [--enable-sanitizers] the same
# sources link with -fsanitize=fuzzer; `make fuzz FUZZ_SECONDS=300` then fuzzes
# every target (new inputs go to fuzz-work/TARGET, crashes to fuzz-work/), or
# `make fuzz FUZZ_RUNS=100000000` each for that many executions.
FUZZ_TARGETS = querylist response results answer pcap dnstap csv compare plot stream rstream
FUZZ_PROGS = tests/fuzz/fuzz_querylist tests/fuzz/fuzz_response tests/fuzz/fuzz_results \
	tests/fuzz/fuzz_answer tests/fuzz/fuzz_pcap tests/fuzz/fuzz_dnstap tests/fuzz/fuzz_csv \
	tests/fuzz/fuzz_compare tests/fuzz/fuzz_plot tests/fuzz/fuzz_stream tests/fuzz/fuzz_rstream
check_PROGRAMS += $(FUZZ_PROGS)

if FUZZING
# Coverage for the whole library, not only the target files.
AM_CFLAGS += -fsanitize=fuzzer-no-link
fuzz_link_flags = $(AM_LDFLAGS) -fsanitize=fuzzer
FUZZ_DRIVER =
else
fuzz_link_flags = $(AM_LDFLAGS)
FUZZ_DRIVER = tests/fuzz/replay_main.c
endif

tests_fuzz_fuzz_querylist_SOURCES = tests/fuzz/fuzz_querylist.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_querylist_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_querylist_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_response_SOURCES = tests/fuzz/fuzz_response.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_response_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_response_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_results_SOURCES = tests/fuzz/fuzz_results.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_results_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_results_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_answer_SOURCES = tests/fuzz/fuzz_answer.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_answer_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_answer_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_csv_SOURCES = tests/fuzz/fuzz_csv.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_csv_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_csv_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_compare_SOURCES = tests/fuzz/fuzz_compare.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_compare_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_compare_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_plot_SOURCES = tests/fuzz/fuzz_plot.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_plot_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_plot_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_stream_SOURCES = tests/fuzz/fuzz_stream.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_stream_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_stream_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_pcap_SOURCES = tests/fuzz/fuzz_pcap.c tests/fuzz/fuzz_input_common.h $(FUZZ_DRIVER)
tests_fuzz_fuzz_pcap_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_pcap_LDADD = $(DV_LIBS)
tests_fuzz_fuzz_dnstap_SOURCES = tests/fuzz/fuzz_dnstap.c tests/fuzz/fuzz_input_common.h $(FUZZ_DRIVER)
tests_fuzz_fuzz_dnstap_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_dnstap_LDADD = $(DV_LIBS)
# fuzz_rstream (the responder's stream input) includes src/responder/stream.c (its
# connection code is static; the library's copy is then not linked in).
tests_fuzz_fuzz_rstream_SOURCES = tests/fuzz/fuzz_rstream.c $(FUZZ_DRIVER)
tests_fuzz_fuzz_rstream_LDFLAGS = $(fuzz_link_flags)
tests_fuzz_fuzz_rstream_LDADD = $(DV_LIBS)
EXTRA_DIST += tests/fuzz/replay_main.c tests/fuzz/corpus tests/fuzz/make-seeds.py \
	tests/fuzz/make-input-seeds.py tests/fuzz/make-stream-seeds.py tests/fuzz/make-rstream-seeds.py \
	tests/fuzz/run-all.sh

# make check: every corpus replayed (tests/fuzz/replay.sh TARGET, one wrapper each).
FUZZ_TESTS = tests/fuzz/replay-querylist.sh tests/fuzz/replay-response.sh \
	tests/fuzz/replay-results.sh tests/fuzz/replay-answer.sh tests/fuzz/replay-pcap.sh \
	tests/fuzz/replay-dnstap.sh tests/fuzz/replay-csv.sh tests/fuzz/replay-compare.sh \
	tests/fuzz/replay-plot.sh tests/fuzz/replay-stream.sh tests/fuzz/replay-rstream.sh
TESTS += $(FUZZ_TESTS)
EXTRA_DIST += $(FUZZ_TESTS) tests/fuzz/replay.sh

FUZZ_SECONDS = 60
fuzz: $(FUZZ_PROGS)
if FUZZING
	@lim=-max_total_time=$(FUZZ_SECONDS); what="$(FUZZ_SECONDS) s"; \
	if test -n "$(FUZZ_RUNS)"; then lim=-runs=$(FUZZ_RUNS); what="$(FUZZ_RUNS) executions"; fi; \
	for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz-work/$$t && \
		echo "== fuzz_$$t for $$what" && \
		./tests/fuzz/fuzz_$$t $$lim -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix=fuzz-work/$$t- fuzz-work/$$t $(srcdir)/tests/fuzz/corpus/$$t \
			|| exit 1; \
	done
else
	@echo "make fuzz needs: ./configure CC=clang --enable-fuzzing --enable-sanitizers" >&2; exit 2
endif
.PHONY: fuzz

# Test helpers: misbehaving DNS servers (UDP; TCP, DoT and DoH) and a peak-RSS wrapper.
check_PROGRAMS += tests/helpers/hostile tests/helpers/hostile-stream tests/helpers/maxrss \
	tests/helpers/hostile-doq
tests_helpers_hostile_doq_SOURCES = tests/helpers/hostile-doq.c
tests_helpers_hostile_doq_LDADD = $(DV_LIBS)
tests_helpers_hostile_stream_SOURCES = tests/helpers/hostile-stream.c
tests_helpers_hostile_stream_LDADD = $(DV_LIBS)
tests_helpers_hostile_SOURCES = tests/helpers/hostile.c
tests_helpers_hostile_LDADD = $(DV_LIBS)
tests_helpers_maxrss_SOURCES = tests/helpers/maxrss.c
EXTRA_DIST += bench/rss-soak.sh doc/robustness.md doc/fuzzing.md
