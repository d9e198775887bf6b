# querylists and doc: the bundled lists and the documentation.
EXTRA_DIST += querylists/README.md querylists/make-domains.sh querylists/domains.txt \
	querylists/soa.txt querylists/www-a.txt querylists/mixed.txt
EXTRA_DIST += doc/numbers.md doc/architecture.md doc/performance.md doc/benchmarks.md \
	doc/querylists.md doc/nightly.md doc/methodology.md doc/results-schema.md
