#!/usr/bin/env bash
# package: `make install` and the Debian package install every file the documents name.
# Builds the .deb with dpkg-buildpackage from a copy of the tree, unpacks it into a scratch
# root (dpkg -x: the machine's packages are not touched), runs the unpacked programs (one
# pass against the unpacked responder, exact counts), checks lintian reports no error, that
# the package holds what `make install --prefix=/usr` installs, and the bash completion.
. "$(dirname "$0")/lib.sh"

# The README's test command installs these (scripts/packages.txt): missing is a failure.
for tool in dpkg-buildpackage dh dpkg-deb lintian; do
	command -v "$tool" >/dev/null || fail "$tool missing: run scripts/install-deps"
done
# Neither make's job server nor its flags (TESTS=...) must leak into the package build.
clean_env=(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u TESTS)

# 1. A copy of the tree: the files git knows (tracked and new, not ignored) in a checkout,
#    else (a dist tarball, make distcheck) the whole source directory.
src="$TMP/dnsvolley"
mkdir -p "$src"
if git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top_srcdir" && git ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -cf - -T -) | tar -xf - -C "$src"
else
	cp -a "$top_srcdir/." "$src/"
	chmod -R u+w "$src"
fi
[ -f "$src/debian/control" ] || fail "the copy of the tree has no debian/control"

# 2. Build it as a user would (binary only, unsigned; the unit tests run inside).
if ! (cd "$src" && "${clean_env[@]}" nice dpkg-buildpackage -us -uc -b >"$TMP/build.log" 2>&1); then
	tail -n 40 "$TMP/build.log" >&2
	fail "dpkg-buildpackage failed (log above)"
fi
version=$(sed -n 's/^AC_INIT(\[dnsvolley\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
deb_version=$(cd "$src" && dpkg-parsechangelog -S Version)
assert_eq "debian/changelog version = configure.ac version" "$version" "$deb_version"
arch=$(dpkg --print-architecture)
deb="$TMP/dnsvolley_${deb_version}_${arch}.deb"
[ -f "$deb" ] || fail "no $deb after the build"
grep -q '^PASS: tests/unit/' "$TMP/build.log" || fail "the package build ran no unit test"
assert_eq "failed unit tests in the package build" 0 \
	"$(awk '/^# FAIL:/ { print $3; exit }' "$TMP/build.log")"

# 3. lintian: no error (warnings are listed in the log).
# Its status too: lintian exits 1 when it could not run and 2 when it found errors (or the
# .changes was no readable file): with '|| true' and no E: line counted, a lintian that
# checked nothing passed (a glob matching no .changes file: exit 2, no E: line).
changes="$TMP/dnsvolley_${deb_version}_${arch}.changes"
[ -f "$changes" ] || fail "no $changes after the build: $(ls "$TMP")"
rc=0
lintian "$changes" >"$TMP/lintian.txt" 2>&1 || rc=$?
cat "$TMP/lintian.txt"
assert_eq "lintian errors" 0 "$(grep -c '^E:' "$TMP/lintian.txt" || true)"
assert_eq "lintian exit status (0: it ran and found no error)" 0 "$rc"

# 4. Unpack into a scratch root.
root="$TMP/root"
dpkg -x "$deb" "$root"
for f in usr/bin/dnsvolley usr/bin/dnsvolley-responder usr/bin/dnsvolley-genlist \
	usr/share/dnsvolley/nightly-example.sh usr/share/dnsvolley/querylists/make-domains.sh; do
	[ -x "$root/$f" ] || fail "$f is not in the package or not executable"
done
for f in usr/share/man/man1/dnsvolley.1.gz usr/share/man/man1/dnsvolley-responder.1.gz \
	usr/share/man/man1/dnsvolley-genlist.1.gz usr/share/doc/dnsvolley/copyright \
	usr/share/dnsvolley/querylists/soa.txt usr/share/dnsvolley/querylists/www-a.txt; do
	[ -s "$root/$f" ] || fail "$f is not in the package"
done
echo "ok: programs, man pages, example script and query lists are in the package"

# Every /usr/... path the documents name exists: /usr/local ones after `make install`,
# /usr ones in the package.
doc_paths() { # PREFIX_REGEX: the paths under it named in README.md and doc/*.md
	# (programs other than ours, like /usr/bin/time in benchmarks.md, left out)
	grep -ohE "$1/(bin|share)/[A-Za-z0-9_./-]*" "$top_srcdir/README.md" "$top_srcdir"/doc/*.md |
		sed -e 's/[.,]$//' | awk '!/\/bin\// || /\/bin\/dnsvolley/' | sort -u
}
"${clean_env[@]}" make -s -C "$top_builddir" install DESTDIR="$TMP/local" prefix=/usr/local \
	>"$TMP/install.log" 2>&1 || { cat "$TMP/install.log" >&2; fail "make install failed"; }
n=0
while read -r p; do
	[ -e "$TMP/local$p" ] || fail "the documents name $p, which make install does not install"
	n=$((n + 1))
done < <(doc_paths /usr/local)
assert_ge "/usr/local paths named in the documents, all installed" 5 "$n"
n=0
while read -r p; do
	[ -e "$root$p" ] || fail "the documents name $p, which the package does not install"
	n=$((n + 1))
done < <(doc_paths '/usr(/local)?' | grep -v '^/usr/local/')
assert_ge "/usr paths named in the documents, all in the package" 5 "$n"
[ -e "$TMP/local/usr/local/share/dnsvolley/nightly-example.sh" ] ||
	fail "make install did not install the nightly script doc/nightly.md's cron line runs"

# The package holds exactly what `make install` with prefix /usr installs (plus
# Debian's changelog and copyright; man pages gzipped).
"${clean_env[@]}" make -s -C "$top_builddir" install DESTDIR="$TMP/usr" prefix=/usr \
	>"$TMP/install.log" 2>&1 || { cat "$TMP/install.log" >&2; fail "make install failed"; }
(cd "$TMP/usr" && find . ! -type d | sort) >"$TMP/make-install.list"
(cd "$root" && find . ! -type d | sed 's/\.1\.gz$/.1/' |
	grep -v -e '^./usr/share/doc/dnsvolley/changelog.gz$' -e '^./usr/share/doc/dnsvolley/copyright$' |
	sort) >"$TMP/package.list"
diff -u "$TMP/make-install.list" "$TMP/package.list" ||
	fail "the package and make install prefix=/usr install different files"
echo "ok: the package holds the $(wc -l <"$TMP/package.list") files make install prefix=/usr installs"

# 5. The unpacked programs run: version, then one pass through the list against the
#    unpacked responder on 127.0.0.1, with exact counts.
assert_eq "dnsvolley --version" "dnsvolley $version" "$("$root/usr/bin/dnsvolley" --version)"
assert_eq "dnsvolley-responder --version" "dnsvolley-responder $version" \
	"$("$root/usr/bin/dnsvolley-responder" --version)"
list="$root/usr/share/dnsvolley/querylists/soa.txt"
nq=$(grep -cvE '^[[:space:]]*(#|$)' "$list")
assert_eq "queries in the packaged soa.txt" 10000 "$nq"
RESPONDER="$root/usr/bin/dnsvolley-responder"
start_responder r
"$root/usr/bin/dnsvolley" -s 127.0.0.1 -p "$r_PORT" -d "$list" -n 1 -c 4 -q 50 \
	>"$TMP/report.txt" 2>&1 || { cat "$TMP/report.txt" >&2; fail "the unpacked dnsvolley failed"; }
stop_responder r
assert_eq "sent" "$nq" "$(report_field "$TMP/report.txt" "Queries sent")"
assert_eq "completed" "$nq" "$(report_field "$TMP/report.txt" "Queries completed")"
assert_eq "lost" 0 "$(report_field "$TMP/report.txt" "Queries lost")"
assert_eq "responder received" "$nq" "$(resp_count r received)"
assert_eq "responder answered" "$nq" "$(resp_count r answered)"

# 6. The bash completion loads and completes, from the package's own files.
comp="$root/usr/share/bash-completion/completions"
for p in dnsvolley dnsvolley-responder dnsvolley-genlist; do
	assert_eq "complete -p $p" "complete -F _dnsvolley $p" \
		"$(bash --norc -c "source '$comp/$p' && complete -p $p")"
done
assert_eq "completion symlink" dnsvolley "$(readlink "$comp/dnsvolley-responder")"
complete_words() { # WORD...: what the completion offers for the last word
	PATH="$root/usr/bin:$PATH" bash --norc -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _dnsvolley
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s " "${COMPREPLY[@]}"' complete "$comp/dnsvolley" "$@"
}
assert_eq "dnsvolley <TAB>" "capacity resperf compare plot report merge history-upgrade " "$(complete_words dnsvolley '')"
assert_eq "dnsvolley --pas<TAB>" "--passes-through-list --passes " "$(complete_words dnsvolley --pas)"
assert_eq "dnsvolley -f <TAB>" "inet inet6 any " "$(complete_words dnsvolley -f '')"
assert_eq "dnsvolley plot --<TAB>" "--gnuplot --output --help " "$(complete_words dnsvolley plot --)"
assert_eq "dnsvolley -c <TAB>" "" "$(complete_words dnsvolley -c '')"
assert_eq "dnsvolley-responder --rc<TAB>" "--rcode " "$(complete_words dnsvolley-responder --rc)"
assert_eq "dnsvolley-genlist --s<TAB>" "--soa --shuffle --seed " "$(complete_words dnsvolley-genlist --s)"
echo "package: ok"
