#!/usr/bin/env bash
# zone.sh ZONE < LABELS: a zone file for ZONE with one name per label read on standard
# input: each LABEL.ZONE exists as the owner of www.LABEL.ZONE A 192.0.2.x, so
# "LABEL.ZONE SOA" is answered NODATA and "www.LABEL.ZONE A" with an address, both
# authoritatively (nsd).
set -euo pipefail
zone=$1
cat <<Z
\$ORIGIN $zone.
\$TTL 3600
@	IN SOA ns.$zone. hostmaster.$zone. 1 3600 900 604800 3600
@	IN NS ns.$zone.
ns	IN A 127.0.0.1
Z
awk 'NF { printf "www.%s\tIN A 192.0.2.%d\n", $1, NR % 250 + 1 }'
