#!/bin/bash
# Which page does a destroyed page pool never get back? Run in the arm64
# board guest (it needs tracefs and build/arm64/test_xdplab):
#
#   KERNEL=<board Image> VMTEST_TCG_THREAD=single make vmtest ARCH=arm64 \
#       CMD="tools/pool_leak_trace.sh"
#
# It traces page_pool's hold, release and release-retry events through one
# stress_gem/rings storm (the TX-only sizes, which leak most often), then
# names the pool whose last release attempt still had pages out, the pages
# it took and never gave back, every later event of each (in any pool) and
# the events around its hold, and its /proc/kpageflags (is it free?). Reruns until the storm fails are up to you:
# a third to a half of them do (kernel-patches/macb/README.md, v11).
#
# With tools/pool_leak_trace-leakdbg.diff applied to the board's tree (debug
# only: trace_printk()s in macb, skb_clone(), skb_release_data(), raw
# sockets and sk_free()), it also follows the page into the skb built
# around it, its clones, the raw socket a clone was queued on, and the TX
# skbs of that socket the GEM took and never freed, with the driver's ring
# events (open, close, link down, TX ring rotation, drain) around them.
T=/sys/kernel/tracing
echo 0 > $T/tracing_on
echo 196608 > $T/buffer_size_kb
echo > $T/trace
for e in page_pool_release page_pool_state_hold page_pool_state_release; do echo 1 > $T/events/page_pool/$e/enable || echo "no $e"; done
# the skbs' ends, to follow the one built around the page (a kernel with
# the driver's LEAKDBG trace_printk()s names it; without them, unused)
for e in consume_skb kfree_skb; do echo 1 > $T/events/skb/$e/enable || echo "no $e"; done
echo 1 > $T/tracing_on
XDPLAB_GEM_RINGS=512:64,512:4096 build/arm64/test_xdplab -v -t stress_gem/rings | grep -E "in flight|resizes|^(ok|FAIL)"
cat $T/trace > /tmp/tr.txt
# Who holds the page? TCP's skb_attempt_defer_free() parks a freed skb on
# the list of the CPU that built it until that CPU next runs NET_RX: give
# every CPU a NET_RX (loopback pings run it on the sender's CPU), then see
# whether the pool's next release attempt still finds the page out.
cat /proc/net/softnet_stat
for c in $(seq 0 $(($(nproc) - 1))); do busybox taskset -c $c ping -q -c 2 -i 0.2 127.0.0.1 >/dev/null || echo "no loopback ping on cpu $c"; done
sleep 3
echo 0 > $T/tracing_on
cat $T/trace > /tmp/tr2.txt
cat /proc/net/softnet_stat
wc -l /tmp/tr.txt
grep -c 'overrun\|LOST' /tmp/tr.txt
P=$(grep page_pool_release: /tmp/tr.txt | awk '{ match($0, /page_pool=[0-9a-fx]+/); p = substr($0, RSTART + 10, RLENGTH - 10); match($0, /inflight=-?[0-9]+/); last[p] = substr($0, RSTART + 9, RLENGTH - 9) } END { for (p in last) if (last[p] != 0) print p }' | tail -1)
echo "pool $P"
grep "page_pool_release: page_pool=$P " /tmp/tr.txt | tail -3
[ -n "$P" ] || exit 0
echo "== after a NET_RX on every CPU"
grep "page_pool_release: page_pool=$P " /tmp/tr2.txt | tail -2
# a freed pool's address comes back for a later pool: only the events of
# the last pool at that address count (its first page is hold=1)
F=$(grep -n "page_pool_state_hold: page_pool=$P .* hold=1$" /tmp/tr.txt | tail -1 | cut -d: -f1)
echo "the pool's last instance begins at line ${F:-1}"
tail -n +${F:-1} /tmp/tr.txt | grep -n "page_pool=$P " | awk '
	/state_hold/ { match($0, /pfn=0x[0-9a-f]+/); p = substr($0, RSTART, RLENGTH); h[p]++; last[p] = $0 }
	/state_release/ { match($0, /pfn=0x[0-9a-f]+/); p = substr($0, RSTART, RLENGTH); r[p]++ }
	END { n = 0; for (p in h) if (h[p] > r[p]) { n++; if (n <= 5) print "HELD", p, h[p], r[p] + 0, last[p] } print n, "pages held, not released" }' | tee /tmp/held.txt
for pfn in $(awk '/^HELD/ { print $2 }' /tmp/held.txt | head -2); do
	L=$(grep -n "$pfn " /tmp/tr.txt | grep "page_pool=$P " | grep state_hold | tail -1 | cut -d: -f1)
	echo "== every event of $pfn from line $L on (any pool)"
	tail -n +$L /tmp/tr.txt | grep "$pfn " | head -8
	echo "== the pool's first release attempts after that"
	tail -n +$L /tmp/tr.txt | grep "page_pool_release: page_pool=$P " | head -2
	# KPF_BUDDY is bit 10: back in the page allocator, freed past the pool
	echo "== /proc/kpageflags and kpagecount of $pfn"
	n=$((${pfn#pfn=}))
	dd if=/proc/kpageflags bs=8 skip=$n count=1 2>/dev/null | od -An -tx8
	dd if=/proc/kpagecount bs=8 skip=$n count=1 2>/dev/null | od -An -td8
	echo "== the driver's LEAKDBG lines of the page from its hold on, if the kernel has them"
	tail -n +$L /tmp/tr2.txt | grep "LEAKDBG.*pfn=${pfn#pfn=0x} " | head -20
	# the skb built around it and its clones (where skb_clone() traces them)
	tail -n +$L /tmp/tr2.txt | grep -n "LEAKDBG \(skb\|clone\) pfn=${pfn#pfn=0x} " | head -10 | while IFS=: read -r n line; do
		for skb in $(echo "$line" | grep -o '\(skb\|clone\)=[0-9a-fx]*' | sed 's/.*=//'); do
			echo "== the first end of skb $skb after its line"
			tail -n +$((L + n - 1)) /tmp/tr2.txt | grep -m 2 "skbaddr=$skb "
		done
	done
	# a clone queued on a raw socket lives as long as the socket: is it
	# still there, and what keeps it (TX skbs it sent, never freed)?
	for skb in $(tail -n +$L /tmp/tr2.txt | grep "LEAKDBG clone pfn=${pfn#pfn=0x} " | grep -o 'clone=[0-9a-fx]*' | sed 's/.*=//' | sort -u); do
		for sk in $(tail -n +$L /tmp/tr2.txt | grep -m 1 "LEAKDBG rawq skb=$skb " | grep -o 'sk=[0-9a-fx]*' | sed 's/.*=//'); do
			echo "== raw socket $sk got clone $skb; its sk_free and destruct lines"
			grep "LEAKDBG \(sk_free\|destruct\) sk=$sk " /tmp/tr2.txt | tail -3
			echo "== its TX skbs the GEM took and never freed"
			grep "LEAKDBG \(xmit\|txfree\|drain\)" /tmp/tr2.txt | awk -v sk=$sk '
				/LEAKDBG xmit/ && index($0, "sk=" sk " ") { match($0, /skb=[0-9a-f]+/); s = substr($0, RSTART + 4, RLENGTH - 4); pend[s] = $0; next }
				/LEAKDBG txfree/ { match($0, /skb=[0-9a-f]+/); delete pend[substr($0, RSTART + 4, RLENGTH - 4)] }
				END { for (s in pend) print pend[s] }' | head -5 | tee /tmp/lost.txt
			# the driver's ring events around the first such skb
			s1=$(head -1 /tmp/lost.txt | grep -o 'skb=[0-9a-f]*' | head -1)
			[ -n "$s1" ] || continue
			n1=$(grep -n "LEAKDBG xmit $s1 " /tmp/tr2.txt | tail -1 | cut -d: -f1)
			echo "== ring events around line $n1"
			sed -n "$((n1 - 4000)),$((n1 + 4000))p" /tmp/tr2.txt | grep "LEAKDBG \(open\|close\|shuffle\|link\|drain\|xmit\|txfree\)" |
				grep -n "" | grep -B 12 -A 12 "$s1 " | head -40
		done
	done
	echo "== lines around the hold"
	sed -n "$((L-3)),$((L+3))p" /tmp/tr.txt
done
grep -n "page_pool=$P " /tmp/tr.txt | head -3
grep -n "page_pool=$P " /tmp/tr.txt | tail -3
grep -c "page_pool=$P .*state_hold" /tmp/tr.txt
grep -c "page_pool=$P .*state_release" /tmp/tr.txt
exit 0
