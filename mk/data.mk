# querylists, doc, scripts, completion: the bundled lists, the documentation, the
# example scripts and the bash completion, and where `make install` puts them:
#   $(docdir)                 README.md and doc/*.md (/usr/local/share/doc/dnsvolley)
#   $(pkgdatadir)             scripts/nightly-example.sh, scripts/server-cost-ssh (/usr/local/share/dnsvolley)
#   $(pkgdatadir)/querylists  the bundled query lists and how they are made
#   $(bashcompdir)            the bash completion (configure.ac: bash-completion's
#                             completionsdir under $(datadir); the helpers as symlinks)
# doc/nightly.md, doc/packaging.md and README.md name these paths: keep them true.
dist_doc_DATA += README.md doc/numbers.md doc/architecture.md doc/performance.md \
	doc/benchmarks.md doc/querylists.md doc/nightly.md doc/methodology.md \
	doc/results-schema.md doc/robustness.md doc/fuzzing.md doc/packaging.md \
	doc/transports.md doc/scale-out.md doc/lab.md

dist_pkgdata_SCRIPTS = scripts/nightly-example.sh scripts/server-cost-ssh

querylistsdir = $(pkgdatadir)/querylists
dist_querylists_DATA = querylists/README.md querylists/domains.txt querylists/soa.txt \
	querylists/www-a.txt querylists/mixed.txt
dist_querylists_SCRIPTS = querylists/make-domains.sh

EXTRA_DIST += completion/dnsvolley debian/changelog debian/control debian/copyright \
	debian/rules debian/source/format
if BASH_COMPLETION
dist_bashcomp_DATA = completion/dnsvolley
# One file completes the three programs; bash-completion finds it by command name.
install-data-hook: install-bashcomp-links
install-bashcomp-links:
	cd $(DESTDIR)$(bashcompdir) && \
		for p in dnsvolley-responder dnsvolley-genlist; do \
			rm -f $$p && $(LN_S) dnsvolley $$p || exit 1; done
uninstall-hook: uninstall-bashcomp-links
uninstall-bashcomp-links:
	rm -f $(DESTDIR)$(bashcompdir)/dnsvolley-responder $(DESTDIR)$(bashcompdir)/dnsvolley-genlist
endif
.PHONY: install-bashcomp-links uninstall-bashcomp-links
