#!/usr/bin/env bash
# man-options: every option a program accepts is documented in its man page, under its
# own command, and every option a page documents is accepted there; the bash completion
# offers each command exactly the options it accepts, and its value cases name real
# options that take a value. Each page renders without a groff warning.
#
# What a program accepts is read from its source, not from its --help: the getopt
# strings, the struct option tables (with the DV_*_LONG_OPTS macros they include), the
# strcmp(argv[i], "-x") chains of the small commands and capacity's cap_opts table.
# What a page documents: the options in the tags (the line after .TP) of the page's
# option sections: for dnsvolley the sections of a run (RUN_SECTIONS) and a .SS
# "dnsvolley COMMAND" under COMMANDS for each command of main.c. The completion reads its
# flags from --help, so comparing what it offers with the code checks the usage texts too.
# Run it against another tree: top_srcdir=DIR (the binaries stay the build's).
. "$(dirname "$0")/lib.sh"
for p in "$DV" "$RESPONDER" "$GENLIST"; do
	[ -x "$p" ] || skip "$p not built"
done
command -v python3 >/dev/null || skip "python3"

# Each page renders without a warning (groff -ww: an unknown escape or character, such as
# a form feed where "\fB" was meant, a bad request or macro argument).
if have_setup groff "groff (groff-base) checks that the man pages render"; then
	for page in "$top_srcdir"/doc/*.1; do
		warn=$(LC_ALL=C.UTF-8 groff -ww -z -man "$page" 2>&1)
		[ -z "$warn" ] || fail "$(basename "$page") renders with warnings: $warn"
	done
fi

# What the completion offers after "-" (flags), one file per command, and the commands.
(
	# shellcheck source=/dev/null
	source "$top_srcdir/completion/dnsvolley"
	set +u # the completion runs in an interactive shell, which does not set -u
	reply() { # WORDS...: the completion of the last word, one per line
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=()
		_dnsvolley
		printf '%s\n' "${COMPREPLY[@]}"
	}
	mkdir "$TMP/offered"
	reply "$DV" "" >"$TMP/subcommands"
	reply "$DV" - >"$TMP/offered/dnsvolley"
	while read -r sub; do
		reply "$DV" "$sub" - >"$TMP/offered/dnsvolley $sub"
	done <"$TMP/subcommands"
	reply "$RESPONDER" - >"$TMP/offered/dnsvolley-responder"
	reply "$GENLIST" - >"$TMP/offered/dnsvolley-genlist"
)

python3 - "$top_srcdir" "$TMP" <<'EOF'
import fnmatch, os, re, sys

top, tmp = sys.argv[1], sys.argv[2]
problems = []

# Options a program accepts that its page leaves out on purpose: (command, option): why.
# Empty: every option is documented (the responder's fault options that the tests use
# are in its page too).
UNDOCUMENTED = {}

# The sections of dnsvolley(1) whose tags are a run's options.
RUN_SECTIONS = ['TARGET AND LIST', 'LOAD', 'QUERIES', 'REPLAY', 'STUDIES', 'OUTPUT',
                'SERVER COST', 'SEVERAL GENERATORS', 'GATES', 'DNSPERF FLAGS']


def read(path):
    with open(os.path.join(top, path), encoding='utf-8') as f:
        return f.read()


def macro(name, d):
    """The body of #define NAME in a header of d, its line continuations joined."""
    for f in sorted(os.listdir(os.path.join(top, d))):
        if f.endswith('.h'):
            m = re.search(r'#define\s+' + name + r'\b((?:[^\n]*\\\n)*[^\n]*)',
                          read(os.path.join(d, f)))
            if m:
                return m.group(1).replace('\\\n', ' ')
    sys.exit('man-options: %s: no header of %s defines it' % (name, d))


def code_options(path, string_table=None):
    """{option: takes a value} of everything path's parser accepts."""
    src, opts = read(path), {}
    for body in re.findall(r'struct option \w+\[\]\s*=\s*\{(.*?)\n\s*\};', src, re.S):
        for mac in re.findall(r'\b(DV_\w+_LONG_OPTS)\b', body):
            body += macro(mac, os.path.dirname(path))
        for name, arg in re.findall(r'\{\s*"([^"]+)",\s*(no|required|optional)_argument', body):
            opts['--' + name] = arg != 'no'
    for lit, ident in re.findall(r'\bgetopt(?:_long)?\s*\(\s*argc\s*,\s*argv\s*,\s*(?:"([^"]*)"|(\w+))', src):
        if ident:
            lit = re.search(r'\b' + ident + r'\[\]\s*=\s*"([^"]*)"', src).group(1)
        lit = lit.lstrip(':+')
        for i, ch in enumerate(lit):
            if ch != ':':
                opts['-' + ch] = lit[i + 1:i + 2] == ':'
    for opt, rest in re.findall(r'strcmp\(argv\[i\],\s*"(-[^"]+)"\) == 0( && i \+ 1 < argc)?', src):
        if opt != '--':
            opts[opt] = bool(rest)
    if string_table:
        body = re.search(r'\b' + string_table + r'\[\]\s*=\s*\{(.*?)\};', src, re.S).group(1)
        for opt in re.findall(r'\{\s*"(-[^"]+)",', body):
            opts[opt] = True # dv_capacity_cli_split: each needs a value
    if not opts:
        sys.exit('man-options: %s: found no option table' % path)
    return opts


ROFF = [(r'\\-', '-'), (r'\\f(\[[^]]*\]|\(..|.)', ''), (r'\\\(..', ' '), (r'\\[&|^]', ''),
        (r'"', ' ')]


def page_sections(path):
    """{.SH or .SS title: the options in the section's .TP tags}."""
    secs, cur, tag = {}, None, False
    for line in read(path).split('\n'):
        m = re.match(r'\.S[HS]\s+(.*)', line)
        if m:
            cur = m.group(1).strip().strip('"')
            secs.setdefault(cur, set())
            tag = False
        elif line.startswith('.TP'):
            tag = True
        elif tag and cur is not None:
            tag = False
            t = re.sub(r'^\.\w+\s*', '', line)
            for a, b in ROFF:
                t = re.sub(a, b, t)
            secs[cur] |= set(re.findall(r'(?<![\w-])(--?[A-Za-z0-9][\w-]*)', t))
    return secs


def documented(page, sections):
    secs, opts = page_sections(page), set()
    for s in sections:
        if s not in secs:
            problems.append('%s: no section "%s"' % (page, s))
        opts |= secs.get(s, set())
    return opts


# Each command: (name, source, string table, page, sections).
run = ('dnsvolley', 'src/cmd/cli.c', None, 'doc/dnsvolley.1', RUN_SECTIONS)
commands = [run,
            ('dnsvolley-responder', 'src/responder/responder_main.c', None,
             'doc/dnsvolley-responder.1', ['OPTIONS']),
            ('dnsvolley-genlist', 'src/genlist/genlist_main.c', None, 'doc/dnsvolley-genlist.1',
             ['OPTIONS', 'Realistic traffic'])]
SUBCOMMANDS = {'capacity': ('src/cmd/cmd_capacity.c', 'cap_opts'),
               'resperf': ('src/cmd/cmd_resperf.c', None),
               'compare': ('src/cmd/cmd_compare.c', None),
               'plot': ('src/cmd/cmd_plot.c', None),
               'report': ('src/cmd/cmd_report.c', None),
               'merge': ('src/cmd/cmd_merge.c', None),
               'history-upgrade': ('src/cmd/cmd_history.c', None)}
dispatched = re.findall(r'strcmp\(argv\[1\], "([a-z-]+)"\) == 0', read('src/cmd/main.c'))
for sub in sorted(set(dispatched) ^ set(SUBCOMMANDS)):
    problems.append('dnsvolley %s: %s' % (sub, 'a command of src/cmd/main.c this test does not know'
                                          if sub in dispatched else 'not a command of src/cmd/main.c'))
with open(os.path.join(tmp, 'subcommands')) as f:
    offered_subs = f.read().split()
for sub in sorted(set(dispatched) ^ set(offered_subs)):
    problems.append('completion: dnsvolley %s %s' % (sub, 'is not offered' if sub in dispatched
                                                     else 'is offered but is no command'))
for sub in dispatched:
    if sub in SUBCOMMANDS:
        src, table = SUBCOMMANDS[sub]
        commands.append(('dnsvolley ' + sub, src, table, 'doc/dnsvolley.1', ['dnsvolley ' + sub]))

accepted = {}
for name, src, table, page, sections in commands:
    acc = accepted[name] = code_options(src, table)
    doc = documented(page, sections)
    where = '%s (%s)' % (page, ', '.join(sections))
    for o in sorted(set(acc) - doc):
        why = UNDOCUMENTED.get((name, o))
        if why:
            print('%s: %s undocumented on purpose: %s' % (name, o, why))
        else:
            problems.append('%s: %s is accepted (%s) but not documented in %s' % (name, o, src, where))
    for o in sorted(doc - set(acc)):
        problems.append('%s: %s is documented in %s but not accepted (%s)' % (name, o, where, src))
    print("%s: %d options accepted" % (name, len(acc)))

# dnsvolley capacity takes a run's options too (its own first: --max-loss is its SLO).
if 'dnsvolley capacity' in accepted:
    accepted['dnsvolley capacity'] = dict(accepted['dnsvolley'], **accepted['dnsvolley capacity'])

# The completion offers each command what it accepts.
for name, acc in accepted.items():
    path = os.path.join(tmp, 'offered', name)
    if not os.path.exists(path):
        continue # not a command the completion knows: said above
    with open(path) as f:
        offered = set(f.read().split())
    for o in sorted(set(acc) - offered):
        problems.append('completion: %s %s is accepted but not offered (not in its --help\'s '
                        'usage or option lines)' % (name, o))
    for o in sorted(offered - set(acc)):
        problems.append('completion: %s %s is offered but not accepted' % (name, o))

# The completion's value cases (_dnsvolley_value): the first clause that matches
# PROG:SUBCOMMAND:FLAG decides; "return 1" says the flag takes no value, any other
# clause completes a value. Each must agree with the code, and name a real option.
comp = read('completion/dnsvolley')
body = re.search(r'case "\$\{prog##\*/\}:\$sub:\$prev" in(.*?)\n\s*esac', comp, re.S).group(1)
clauses = []
for chunk in body.split(';;'):
    chunk = re.sub(r'(?m)^\s*#.*$', '', chunk).strip()
    m = re.match(r'(.*?)\)(.*)', chunk, re.S)
    if not m:
        continue
    pats = [p.strip() for p in m.group(1).replace('\\\n', ' ').split('|')]
    if pats == ['*']:
        continue # the default: no value of its own (files, or flags after "-")
    clauses.append((pats, 'return 1' not in m.group(2)))
triples = {'%s:%s:%s' % (n.split(' ')[0], n.split(' ')[1] if ' ' in n else '', o): v
           for n, acc in accepted.items() for o, v in acc.items()}
for t, takes_value in sorted(triples.items()):
    for pats, value in clauses:
        if any(fnmatch.fnmatchcase(t, p) for p in pats):
            if value != takes_value:
                problems.append('completion: %s: its case completes %s, the option takes %s'
                                % (t, 'a value' if value else 'no value',
                                   'a value' if takes_value else 'none'))
            break
for pats, value in clauses:
    for p in pats:
        if not any(fnmatch.fnmatchcase(t, p) and (v or not value) for t, v in triples.items()):
            problems.append('completion: case %s names no option %s' % (p, 'that takes a value' if value else ''))

for p in problems:
    print('FAIL: ' + p)
sys.exit(1 if problems else 0)
EOF
echo "PASS"
