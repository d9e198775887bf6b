#!/bin/sh
# make-domains.sh: write querylists/domains.txt, 10,000 synthetic but realistic-looking
# domains, the same bytes on every run (own Park-Miller generator, not awk's rand(),
# whose sequence differs between mawk and gawk).
# usage: querylists/make-domains.sh [COUNT] > querylists/domains.txt
set -eu
count=${1:-10000}
LC_ALL=C awk -v count="$count" '
function rnd(n) { seed = (seed * 16807) % 2147483647; return int(seed / 2147483647 * n) }
function pick(arr, n) { return arr[rnd(n) + 1] }
BEGIN {
	seed = 20240601
	nw = split("alpine amber anchor apex arbor arrow atlas aurora autumn axis beacon bear birch " \
		"blue bold bright brook canyon cedar cinder city clear cloud coast cobalt comet copper " \
		"coral crest crown crystal delta desert drift eagle echo ember falcon fern field flint " \
		"forest fox frost garden giant glacier gold granite green grove harbor hawk hazel " \
		"heron hill horizon iron island ivy jade juniper lake lantern laurel leaf light lime " \
		"linden lotus lunar maple marble meadow mesa metro mint moon moss mountain north oak " \
		"ocean olive onyx orbit orchid pacific peak pearl pine pixel polar prairie prime pulse " \
		"quartz rain raven red ridge river rock rose ruby sage sand sierra silver sky slate " \
		"snow solar spark spring spruce star stone storm summit sun swift tiger timber trail " \
		"true tulip valley vector velvet vista wave west willow wind winter wolf zen", w, " ")
	ns = split("tech media labs shop store works studio group net systems cloud data digital " \
		"design foods games health home news online partners press solutions sports " \
		"travel ventures hub apps bank books clinic coffee consulting energy farm films " \
		"finance fitness hotel law market motors music pay realty security software tools", s, " ")
	nt = split("com com com com com com com com net net org org io de de uk co.uk fr nl se " \
		"ch it es pl be at dk no fi cz jp com.au ca us info biz app dev eu nz ie pt", t, " ")
	n = 0
	while (n < count) {
		style = rnd(10)
		if (style < 4) name = pick(w, nw) pick(s, ns)
		else if (style < 6) name = pick(w, nw) "-" pick(s, ns)
		else if (style < 8) name = pick(w, nw) pick(w, nw)
		else if (style < 9) name = pick(w, nw) pick(s, ns) rnd(100)
		else name = pick(s, ns) "-" pick(w, nw) "-" pick(w, nw)
		name = name "." pick(t, nt)
		if (name in seen) continue
		seen[name] = 1
		print name
		n++
	}
}'
