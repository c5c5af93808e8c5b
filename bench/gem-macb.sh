#!/usr/bin/env bash
# Stock vs kernel-patches/macb on the emulated GEM board, in one run (issue
# #8's numbers, the macb seed's table): iperf3 UDP of 64 and 128 bytes from
# the host's tap into the board at a paced offered rate, datagrams delivered
# to the socket and the guest's CPU split; XDP_DROP of the 64-byte load
# (stock macb: generic XDP, the series: native).
#
#   bench/gem-macb.sh [-r ROUNDS] [-d SECONDS] [-b PPS] [-s STOCK_IMAGE -p PATCHED_IMAGE]
#
# Default 3 rounds of 5 s at 40000 pps; the kernels are `make vmkernel
# ARCH=arm64` with PATCHES=none and PATCHES=macb unless -s/-p name images
# built already. The rate is fixed because QEMU 7.2's GEM stops receiving
# for good once a flood fills its RX ring (bench/gem-guest.sh); at a fixed
# rate that both kernels carry, the comparable figure is the CPU time per
# delivered packet (sys+softirq, and all busy time).
#
# Rounds interleave the kernels (stock, patched, stock, ...), one boot each,
# so drift on a shared machine hits both alike; a ratio is patched/stock
# within a round, then the median (min-max) over the rounds, like
# xdplab-bench. Under TCG absolute figures mean nothing; the ratios are the
# result. Each boot holds /tmp/xdplab-cpu.lock while it measures.
# Results: bench/results/gem-macb-DATE/ (samples.txt, table.md, logs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=3 secs=5 rate=40000
declare -A img
while getopts r:d:b:s:p:h o; do
	case $o in
	r) rounds=$OPTARG ;;
	d) secs=$OPTARG ;;
	b) rate=$OPTARG ;;
	s) img[none]=$(realpath "$OPTARG") ;;
	p) img[macb]=$(realpath "$OPTARG") ;;
	*) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ && "$secs" =~ ^[1-9][0-9]*$ && "$rate" =~ ^[1-9][0-9]*$ ]] ||
	{ echo "gem-macb: -r, -d and -b take positive integers (hint: bench/gem-macb.sh -r 3 -d 5 -b 40000)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "gem-macb: needs root (network namespace and tap on the host) (hint: sudo)" >&2; exit 1; }
cd "$root"
out=bench/results/gem-macb-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
lock=/tmp/xdplab-cpu.lock

make -s arm64 >&2
for k in none macb; do
	if [ -n "${img[$k]:-}" ]; then
		[ -r "${img[$k]}" ] || { echo "gem-macb: no kernel image ${img[$k]} (hint: make vmkernel ARCH=arm64 PATCHES=$k)" >&2; exit 1; }
		cp "${img[$k]}" "$out/Image-$k"
	else
		echo "gem-macb: kernel PATCHES=$k" >&2
		p=$(flock "$lock" env VMTEST_ARCH=arm64 PATCHES=$k vmtest/run.sh kernel)
		cp "$p" "$out/Image-$k"
	fi
	img[$k]=$out/Image-$k
done

: >"$out/samples.txt"
for r in $(seq "$rounds"); do
	for k in none macb; do
		echo "gem-macb: round $r/$rounds, PATCHES=$k" >&2
		log=$out/round$r-$k.log
		flock "$lock" env VMTEST_ARCH=arm64 CMD="bench/gem-guest.sh $secs $rate" \
			vmtest/boot.sh --label "PATCHES=$k" "${img[$k]}" >"$log" 2>&1 ||
			{ echo "gem-macb: the guest failed (log: $log)" >&2; tail -n 15 "$log" >&2; exit 1; }
		sed -n "s/^RESULT /$r $k /p" "$log" | tr -d '\r' >>"$out/samples.txt"
	done
done

# samples.txt: ROUND KERNEL NAME offered=.. pps=.. rx=.. user=.. system=..
# softirq=.. idle=.. stalled=.. [mode=..]
awk -v rounds="$rounds" '
function kv(s, k,   a, i, n) { n = split(s, a, " "); for (i = 1; i <= n; i++) if (index(a[i], k "=") == 1) return substr(a[i], length(k) + 2); return "" }
function med(arr, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
	return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2 }
function stats(arr, n, fmt,   lo, hi, i, m) { lo = hi = arr[1]; for (i = 2; i <= n; i++) { if (arr[i] < lo) lo = arr[i]; if (arr[i] > hi) hi = arr[i] }
	m = med(arr, n); return sprintf(fmt " (" fmt "–" fmt ")", m, lo, hi) }
# CPU time per delivered packet, in microseconds: columns in % of a core
function us(s, cols,   a, i, n, t) { n = split(cols, a, "+"); t = 0; for (i = 1; i <= n; i++) t += kv(s, a[i]); return kv(s, "pps") > 0 ? t * 1e4 / kv(s, "pps") : -1 }
# the same per frame the GEM received (rx)
function usrx(s, cols,   a, i, n, t) { n = split(cols, a, "+"); t = 0; for (i = 1; i <= n; i++) t += kv(s, a[i]); return kv(s, "rx") > 0 ? t * 1e4 / kv(s, "rx") : -1 }
{ key = $1 SUBSEP $2 SUBSEP $3; line[key] = $0; names[$3] = 1
  # a kernel message on the console can split a RESULT line: keep the offered rate seen
  if (kv($0, "offered") != "") offered[$3] = kv($0, "offered")
  if ($0 ~ /mode=/) mode[$2 SUBSEP $3] = kv($0, "mode")
  if (kv($0, "stalled") != "0" || kv($0, "pps") + 0 <= 0) { bad[$2 SUBSEP $3]++ } }
END {
	print "| measurement | offered kpps | GEM rx kpps, stock / patched | delivered kpps, stock | delivered kpps, patched | patched/stock | CPU u/s/si/idle, stock | CPU u/s/si/idle, patched | sys+si µs per rx frame, stock | patched | patched/stock | sys+si µs per delivered, patched/stock |"
	print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	split("udp64 udp128 xdp_drop64", order, " ")
	for (o = 1; o <= 3; o++) {
		nm = order[o]; if (!(nm in names)) continue
		n = 0
		for (r = 1; r <= rounds; r++) {
			a = line[r SUBSEP "none" SUBSEP nm]; b = line[r SUBSEP "macb" SUBSEP nm]
			if (a == "" || b == "") continue
			# a stalled GEM (or a missing count) spoils the round for this row
			if (kv(a, "stalled") != "0" || kv(b, "stalled") != "0" || kv(a, "pps") <= 0 || kv(b, "pps") <= 0) continue
			n++
			sp[n] = kv(a, "pps") / 1000; pp[n] = kv(b, "pps") / 1000; ratio[n] = pp[n] / sp[n]
			for (c = 1; c <= 4; c++) { col = c == 1 ? "user" : c == 2 ? "system" : c == 3 ? "softirq" : "idle"
				sc[c, n] = kv(a, col) + 0; pc[c, n] = kv(b, col) + 0 }
			srx[n] = kv(a, "rx") / 1000; prx[n] = kv(b, "rx") / 1000
			su[n] = usrx(a, "system+softirq"); pu[n] = usrx(b, "system+softirq"); eff[n] = pu[n] / su[n]
			tot[n] = us(b, "system+softirq") / us(a, "system+softirq")
		}
		pairs[nm] = n
		label = nm
		if ((("none" SUBSEP nm) in mode)) label = nm " (stock " mode["none" SUBSEP nm] ", patched " mode["macb" SUBSEP nm] ")"
		if (!n) { printf "| %s | %.0f | no round without a stall | | | | | | | | | |\n", label, offered[nm] / 1000; continue }
		scpu = pcpu = ""
		for (c = 1; c <= 4; c++) { for (i = 1; i <= n; i++) { t1[i] = sc[c, i]; t2[i] = pc[c, i] }
			scpu = scpu (c > 1 ? "/" : "") sprintf("%.0f", med(t1, n)); pcpu = pcpu (c > 1 ? "/" : "") sprintf("%.0f", med(t2, n)) }
		for (i = 1; i <= n; i++) { t1[i] = srx[i]; t2[i] = prx[i] }
		printf "| %s | %.0f | %.1f / %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, offered[nm] / 1000,
			med(t1, n), med(t2, n),
			stats(sp, n, "%.1f"), stats(pp, n, "%.1f"), stats(ratio, n, "%.2f"), scpu, pcpu,
			stats(su, n, "%.1f"), stats(pu, n, "%.1f"), stats(eff, n, "%.2f"), stats(tot, n, "%.2f")
	}
	printf "\n%d rounds, stock and patched booted alternately; each cell: median (min–max) over the rounds with both samples and no stall (", rounds
	for (o = 1; o <= 3; o++) if (order[o] in pairs) printf "%s%s: %d", (o > 1 ? ", " : ""), order[o], pairs[order[o]]
	printf ");\n"
	printf "GEM rx: medians of the interface'"'"'s rx_packets rate; delivered: datagrams to the socket (UDP rows) or dropped by the program (XDP_DROP).\n"
	printf "CPU: medians, %% of one core (200 = both A72s), over each measurement; µs: system+softirq CPU time per frame.\n"
	for (k in bad) { split(k, kk, SUBSEP); printf "stalled or uncounted samples: %s %s: %d\n", kk[1] == "none" ? "stock" : "patched", kk[2], bad[k] }
}' "$out/samples.txt" | tee "$out/table.md"
echo
echo "reproduce: bench/gem-macb.sh -r $rounds -d $secs -b $rate   (results: $out)"
rm -f "$out"/Image-*
