#!/bin/bash
# In the arm64 guest: make vmtest ARCH=arm64 KERNEL=<image> CMD=tools/macb_down_up/profile.sh
# (kprobe events: CONFIG_KPROBE_EVENTS, which the RT flavour has). Prints, per
# function, the calls and the time between entry and return over two down/ups.
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs tracefs $T
echo > $T/kprobe_events
for f in macb_close macb_open phylink_stop phylink_start phylink_disconnect_phy phylink_of_phy_connect phylink_connect_phy \
	 page_pool_destroy page_pool_create xdp_rxq_info_unreg synchronize_rcu synchronize_rcu_expedited synchronize_net \
	 macb_free_consistent macb_alloc_consistent gem_alloc_rx_buffers gem_free_rx_buffers gem_init_rings macb_init_hw \
	 gem_ptp_init gem_ptp_remove ptp_clock_register ptp_clock_unregister phy_power_on phy_power_off pm_runtime_put_sync macb_reset_hw; do
	echo "p:in_$f $f" >> $T/kprobe_events 2>/dev/null && echo "r:out_$f $f" >> $T/kprobe_events 2>/dev/null
done
echo 1 > $T/events/kprobes/enable
echo > $T/trace
IF=${XDPLAB_GEM_IF:-eth0}
for i in 1 2; do ip link set "$IF" down; ip link set "$IF" up; done
echo 0 > $T/events/kprobes/enable
# per function: calls and total time between entry and return
awk '/ (in|out)_/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) ts = substr($i, 1, length($i) - 1);
	for (i = 1; i <= NF; i++) if ($i ~ /^(in|out)_/) ev = $i; sub(/:$/, "", ev);
	split(ev, p, "_"); fn = substr(ev, length(p[1]) + 2);
	if (p[1] == "in") { start[fn] = ts } else if (fn in start) { tot[fn] += ts - start[fn]; n[fn]++; delete start[fn] } }
	END { for (f in tot) printf "%-28s %2d calls %8.3f s\n", f, n[f], tot[f] }' $T/trace | sort -k4 -n -r
