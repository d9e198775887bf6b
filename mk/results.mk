# src/results: what a run leaves behind: text report, results JSON, CSV history,
# dns-metrics, gates, JUnit, compare and plots.
libdnsvolley_la_SOURCES += src/results/report_text.c src/results/report.h src/results/report_server.c src/results/results_server.c src/results/results_server.h \
	src/results/results_json.c src/results/results_json.h src/results/csv.c src/results/csv.h \
	src/results/metrics.c src/results/metrics.h src/results/junit.c src/results/junit.h \
	src/results/gates.c src/results/gates.h src/results/compare.c src/results/compare.h \
	src/results/plot.c src/results/plot.h src/results/merge.c src/results/merge.h \
	src/results/plot_capacity.c src/results/plot_capacity.h \
	src/results/connfig.c src/results/connfig.h

if HAVE_CMOCKA
RESULTS_UNIT = tests/unit/results/test_results_json tests/unit/results/test_gates tests/unit/results/test_csv tests/unit/results/test_compare tests/unit/results/test_metrics \
	tests/unit/results/test_results_server
check_PROGRAMS += $(RESULTS_UNIT)
TESTS += $(RESULTS_UNIT)
endif
EXTRA_DIST += tests/unit/results/fixture.h
