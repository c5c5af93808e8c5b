#!/bin/sh
# Every ndo_open of the macb driver must set bp->opened, and its ndo_stop
# clear it: macb_suspend() and macb_resume() (macb_pm_ops, shared by the
# GEM/MACB and the at91rm9200 EMAC) do nothing for an interface whose flag
# is clear. QEMU has no EMAC to suspend, so this reads the driver source
# (issue 20, review-v2 bug 5).
#
#	tools/macb_ring/ndo_open_sets_opened.sh /root/ksrc/macb
set -eu
. "$(dirname "$0")/macb_src.sh"
bad=0 n=0
for op in ndo_open:true ndo_stop:false; do
	ndo=${op%%:*} want=${op#*:}
	for fn in $(sed -n "s/^[[:space:]]*\.$ndo[[:space:]]*=[[:space:]]*\([a-z0-9_]*\),.*/\1/p" "$src" | sort -u); do
		n=$((n + 1))
		if fn_body "$fn" | grep -q "opened, $want)\|opened = $want;"; then
			echo "ok: $ndo $fn sets opened to $want"
		else
			echo "FAIL: $ndo $fn does not set opened to $want"
			bad=$((bad + 1))
		fi
	done
done
echo "$n checked, $bad failed"
[ "$bad" -eq 0 ] && [ "$n" -gt 0 ]
