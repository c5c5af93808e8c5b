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
# about half of them do (kernel-patches/macb/README.md, v11's FAULT run).
T=/sys/kernel/tracing
echo 0 > $T/tracing_on
echo 131072 > $T/buffer_size_kb
echo > $T/trace
for e in page_pool_release page_pool_state_hold page_pool_state_release; do echo 1 > $T/events/page_pool/$e/enable || echo "no $e"; done
echo 1 > $T/tracing_on
XDPLAB_GEM_RINGS=512:64,512:4096 build/arm64/test_xdplab -v -t stress_gem/rings | grep -E "in flight|resizes|^(ok|FAIL)"
echo 0 > $T/tracing_on
cat $T/trace > /tmp/tr.txt
wc -l /tmp/tr.txt
grep -c 'overrun\|LOST' /tmp/tr.txt
P=$(grep page_pool_release: /tmp/tr.txt | awk '{ match($0, /page_pool=[0-9a-fx]+/); p = substr($0, RSTART + 10, RLENGTH - 10); match($0, /inflight=-?[0-9]+/); last[p] = substr($0, RSTART + 9, RLENGTH - 9) } END { for (p in last) if (last[p] != 0) print p }' | tail -1)
echo "pool $P"
grep "page_pool_release: page_pool=$P " /tmp/tr.txt | tail -3
[ -n "$P" ] || exit 0
grep -n "page_pool=$P " /tmp/tr.txt | awk '
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
	echo "== lines around the hold"
	sed -n "$((L-3)),$((L+3))p" /tmp/tr.txt
done
grep -n "page_pool=$P " /tmp/tr.txt | head -3
grep -n "page_pool=$P " /tmp/tr.txt | tail -3
grep -c "page_pool=$P .*state_hold" /tmp/tr.txt
grep -c "page_pool=$P .*state_release" /tmp/tr.txt
exit 0
