# src/results: what a run leaves behind: text report, results JSON, CSV history,
# dns-metrics, gates, JUnit, compare, plots and the study's table and summary.
libdnsvolley_la_SOURCES += src/results/report_text.c src/results/report.h src/results/report_server.c src/results/results_server.c src/results/results_server.h \
	src/results/results_json.h src/results/results_fields.c src/results/results_fields.h \
	src/results/results_write.c src/results/results_read.c src/results/csv.c src/results/csv.h \
	src/results/metrics.c src/results/metrics.h src/results/junit.c src/results/junit.h \
	src/results/gates.c src/results/gates.h src/results/compare.c src/results/compare.h \
	src/results/plot.c src/results/plot.h src/results/merge.c src/results/merge.h \
	src/results/plot_capacity.c src/results/plot_capacity.h \
	src/results/connfig.c src/results/connfig.h \
	src/results/summary.c src/results/summary.h
# The one gnuplot runner of plot and plot_capacity.
libdnsvolley_la_SOURCES += src/results/gnuplot.c src/results/gnuplot.h

if HAVE_CMOCKA
RESULTS_UNIT = tests/unit/results/test_results_json tests/unit/results/test_gates tests/unit/results/test_csv tests/unit/results/test_compare tests/unit/results/test_metrics \
	tests/unit/results/test_results_server
check_PROGRAMS += $(RESULTS_UNIT)
TESTS += $(RESULTS_UNIT)
endif
EXTRA_DIST += tests/unit/results/fixture.h
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/results/test_gnuplot
TESTS += tests/unit/results/test_gnuplot
endif
