#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# RX memory per queue on the emulated GEM board, stock macb against
# kernel-patches/macb: what an open of the GEM takes from MemFree, per RX
# queue, at each ring size and MTU (bench/gem-rx-memory-guest.sh). One boot
# a kernel; TRIES down/up cycles a setting, median (min-max). The board's
# pages are 4 KiB: the series' one page per descriptor would cost 4x as
# much of it at 16 KiB pages and 16x at 64 KiB, which this board cannot
# show.
#
#   bench/gem-rx-memory.sh [-r "RINGS"] [-m "MTUS"] [-t TRIES] -s STOCK_IMAGE -p PATCHED_IMAGE
#
#   -r RINGS   RX ring sizes (default "512 8192": the driver's default, the
#              board's)
#   -m MTUS    (default "1500 9000")
#   -t TRIES   down/up cycles a setting (default 3)
#
# Results: bench/results/gem-rx-memory-DATE/ (table.md, logs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
me=gem-rx-memory
rings="512 8192" mtus="1500 9000" tries=3 stock="" patched=""
argv=("$@")
die() { echo "$me: $1${2:+ (hint: $2)}" >&2; exit 1; }
while getopts r:m:t:s:p:h o; do
	case $o in
	r) rings=$OPTARG ;;
	m) mtus=$OPTARG ;;
	t) tries=$OPTARG ;;
	s) stock=$(realpath "$OPTARG") ;;
	p) patched=$(realpath "$OPTARG") ;;
	*) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
[[ "$tries" =~ ^[1-9][0-9]*$ ]] || die "-t takes a positive integer" "-t 3"
for img in "$stock" "$patched"; do
	[ -n "$img" ] || die "both -s and -p are needed" "two board Images, e.g. from make vmkernel ARCH=arm64 PATCHES=none and PATCHES=macb"
	[ -r "$img" ] || die "no kernel image '$img'"
done
[ "$(id -u)" = 0 ] || die "needs root (the board's tap and network namespace)" "sudo"
cd "$root"
out=bench/results/$me-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"

make -s arm64 >&2
for k in stock patched; do
	img=$stock
	[ $k = stock ] || img=$patched
	echo "$me: $k ($img)" >&2
	flock /tmp/xdplab-cpu.lock env VMTEST_ARCH=arm64 \
		CMD="bench/gem-rx-memory-guest.sh '$rings' '$mtus' $tries" \
		vmtest/boot.sh --label "$me $k" "$img" >"$out/$k.log" 2>&1 ||
		{ tail -n 15 "$out/$k.log" >&2; die "the $k guest failed" "see $out/$k.log"; }
	tr -d '\r' <"$out/$k.log" | grep -aE "^(RXMEM|SKIP)" | sed "s/^/$k /" >>"$out/samples.txt" ||
		die "no measurement in the $k guest's output" "see $out/$k.log"
done

python3 - "$out" "$me.sh $(printf "%q " "${argv[@]}")" <<'PY' | tee "$out/table.md"
import statistics, sys
out, cmd = sys.argv[1], sys.argv[2]
rows, order, skips = {}, [], []
for l in open(f"{out}/samples.txt"):
    f = l.split()
    if f[1] == "SKIP":
        skips.append(" ".join(f))
        continue
    kv = dict(x.split("=") for x in f[2:])
    key = (int(kv["ring"]), int(kv["mtu"]))
    if key not in order:
        order.append(key)
    rows[(f[0], key)] = ([int(v) for k, v in kv.items() if k.startswith("try")], kv["queues"])
fmt = lambda v: f"{statistics.median(v) / 1024:.1f} ({min(v) / 1024:.1f}–{max(v) / 1024:.1f})" if v else "–"
print("| RX ring | MTU | MiB per RX queue, stock | patched | patched/stock | KiB per descriptor, stock | patched |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for ring, mtu in order:
    s, _ = rows.get(("stock", (ring, mtu)), ([], 0))
    p, _ = rows.get(("patched", (ring, mtu)), ([], 0))
    ratio = f"{statistics.median(p) / statistics.median(s):.2f}" if s and p and statistics.median(s) > 0 else "–"
    per = lambda v: f"{statistics.median(v) / ring:.2f}" if v else "–"
    print(f"| {ring} | {mtu} | {fmt(s)} | {fmt(p)} | {ratio} | {per(s)} | {per(p)} |")
print("\nMemFree taken by an open of the GEM, divided by its RX queues (TX rings included, "
      "small next to RX); median (min–max) over the down/up cycles of one boot a kernel.")
if skips:
    print("\nnot measured: " + "; ".join(skips))
print(f"\nreproduce: `bench/{cmd}`")
PY
