#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Seed 004's question on the emulated GEM board, in instructions: how many
# kernel instructions a received frame costs with stock macb and with
# kernel-patches/macb, by function, at each size, with no program, with
# XDP_PASS and with XDP_DROP (stock: generic XDP; the series: native), and
# for a TCP stream.
#
# Each kernel boots in a QEMU -icount guest with the bench/tcg/tb_insns.c
# plugin, which counts every kernel instruction by translation block. The
# guest (bench/gem-insns-guest.sh) runs a paced iperf3 UDP stream from the
# host's tap per measurement and, once it runs, a window of SECONDS that
# bench/tcg/insns_mark.c opens and closes by running a function at a fixed
# address; the plugin writes its counts at each. A window's count is all
# kernel work in it (interrupts, NAPI, the socket, iperf3's receive calls,
# timers, idle entries), divided by the frames the GEM received in it. The
# set-up (boot, iperf3, attaching the program) is outside the windows.
#
# Under TCG these are instructions, not time: no cache misses, no DMA
# cost, no difference between a cheap and an expensive instruction.
#
#   bench/gem-insns.sh [-r ROUNDS] [-d SECONDS] [-b PPS] [-l "SIZES"]
#                      [-x "MODES"] [-m MIN] [-c CPUS] -s STOCK_IMAGE -p PATCHED_IMAGE
#
#   -r ROUNDS   boots of each kernel, alternating (default 3)
#   -c CPUS     A72s the guest brings up, 1 or 2 (default 1: nr_cpus=1, so
#               the NAPI poll, the softirq and the receiving iperf3 share
#               one CPU and no window counts a second CPU's wake-ups)
#   -d SECONDS  length of a window, guest time (default 3)
#   -b PPS      offered rate (default 5000: low enough that neither kernel
#               falls behind under -icount, so both see every frame)
#   -l SIZES    UDP payload lengths (default "64 128 512 1472": the last two
#               above the series' 256-byte copybreak, the page-built path)
#   -x MODES    of none, pass, drop, tx, tcp (default: none pass drop
#               tcp; tx is XDP_TX of every datagram back to the peer; tcp
#               is one measurement, 1448-byte segments, whatever -l says)
#   -m MIN      by-function rows whose instructions a frame differ by at
#               least MIN (default 20)
#   -s, -p      the stock and the patched board Image
#
# e.g. bench/gem-insns.sh -s /root/bench-images/gem-stock.Image \
#          -p /root/bench-images/gem-macb.Image
# Results: bench/results/gem-insns-DATE/ (summary.md, by-function.md,
# windows.txt, logs; per-boot block counts deleted unless -k).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
me=gem-insns
rounds=3 secs=3 rate=5000 sizes="64 128 512 1472" modes="none pass drop tcp" min=20 keep=0 cpus=1
stock="" patched=""
argv=("$@")
die() { echo "$me: $1${2:+ (hint: $2)}" >&2; exit 1; }
while getopts r:d:b:l:x:m:c:s:p:kh o; do
	case $o in
	r) rounds=$OPTARG ;;
	d) secs=$OPTARG ;;
	b) rate=$OPTARG ;;
	l) sizes=$OPTARG ;;
	x) modes=$OPTARG ;;
	m) min=$OPTARG ;;
	c) cpus=$OPTARG ;;
	s) stock=$(realpath "$OPTARG") ;;
	p) patched=$(realpath "$OPTARG") ;;
	k) keep=1 ;;
	*) sed -n '3,45p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ && "$secs" =~ ^[1-9][0-9]*$ && "$rate" =~ ^[1-9][0-9]*$ ]] ||
	die "-r, -d and -b take positive integers" "bench/gem-insns.sh -r 3 -d 4 -b 5000 -s IMG -p IMG"
case $cpus in 1 | 2) ;; *) die "-c takes 1 or 2 (the board has two A72s)" "-c 1" ;; esac
for m in $modes; do
	case $m in none | pass | drop | tx | tcp) ;; *) die "unknown mode '$m'" "-x \"none pass drop tx tcp\"" ;; esac
done
for s in $sizes; do
	[[ "$s" =~ ^[1-9][0-9]*$ && "$s" -le 1472 ]] || die "size '$s' is not a UDP payload length up to 1472" "-l \"64 1472\""
done
for img in "$stock" "$patched"; do
	[ -n "$img" ] || die "both -s and -p are needed" "two board Images, e.g. from make vmkernel ARCH=arm64 PATCHES=none and PATCHES=macb"
	[ -r "$img" ] || die "no kernel image '$img'"
done
[ "$(id -u)" = 0 ] || die "needs root (the board's tap and network namespace)" "sudo"
cd "$root"
out=bench/results/$me-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
lock=/tmp/xdplab-cpu.lock

make -s arm64 >&2
make -s build/bench/tb_insns.so build/arm64/bench/insns_mark >&2
plugin=$root/build/bench/tb_insns.so
mark_addr=$(make -s --no-print-directory print-insns-mark-addr)

cpus_append=$([ "$cpus" = 2 ] || echo nr_cpus=1)
kallsyms="echo XDPLAB-CPUS \$(grep -c ^processor /proc/cpuinfo); echo XDPLAB-KALLSYMS-BEGIN; grep ' [tTwW] ' /proc/kallsyms | gzip -1 | base64 -w0; echo; echo XDPLAB-KALLSYMS-END;"
for r in $(seq "$rounds"); do
	for k in stock patched; do
		img=$stock
		[ $k = stock ] || img=$patched
		run=$out/$k-$r
		echo "$me: round $r/$rounds, $k ($img)" >&2
		flock "$lock" env VMTEST_ARCH=arm64 VMTEST_ICOUNT=3 VMTEST_PLUGIN="$plugin" \
			VMTEST_APPEND="${VMTEST_APPEND:-}${cpus_append:+ $cpus_append}" \
			TB_INSNS_OUT="$run.blocks" TB_INSNS_MARK="$mark_addr" \
			CMD="$kallsyms bench/gem-insns-guest.sh $secs $rate '$sizes' '$modes'" \
			vmtest/boot.sh --label "$me $k" "$img" >"$run.log" 2>&1 ||
			{ tail -n 15 "$run.log" >&2; die "the $k guest failed" "see $run.log"; }
		awk '/XDPLAB-KALLSYMS-BEGIN/ {f = 1; next} /XDPLAB-KALLSYMS-END/ {f = 0} f' "$run.log" |
			tr -d '\r\n' | base64 -d | gunzip >"$run.kallsyms" ||
			die "no kallsyms in the $k guest's output" "see $run.log"
		seen=$(tr -d '\r' <"$run.log" | sed -n 's/^XDPLAB-CPUS \([0-9]*\)$/\1/p' | head -1)
		[ "$seen" = "$cpus" ] || die "the $k guest ran on ${seen:-?} CPUs, not $cpus" "see $run.log"
		tr -d '\r' <"$run.log" | grep -aE "^(MODE|WINDOW|SKIP) " | sed "s/^/$r $k /" >>"$out/windows.txt" ||
			die "no counted window in the $k guest's output" "see $run.log"
	done
done

python3 - "$out" "$rounds" "$min" "$me.sh $(printf "%q " "${argv[@]}")" "$cpus" <<'PY'
import bisect, collections, os, statistics, sys
out, rounds, mn, cmd, cpus = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]

def by_function(run, n):
    syms = sorted((int(a, 16), nm) for a, t, nm, *_ in
                  (l.split() for l in open(f"{run}.kallsyms")) if t in "tTwW")
    addrs = [a for a, _ in syms]
    c = collections.Counter()
    for l in open(f"{run}.blocks.{n}"):
        start, insns, runs = l.split()
        i = bisect.bisect_right(addrs, int(start, 16)) - 1
        if i >= 0:
            c[syms[i][1]] += int(insns) * int(runs)
    return c

# windows.txt: ROUND KERNEL MODE name how | ROUND KERNEL WINDOW name k=v... | ROUND KERNEL SKIP ...
win, how, skips = collections.defaultdict(list), {}, []
for l in open(f"{out}/windows.txt"):
    f = l.split()
    r, k, kind, name = int(f[0]), f[1], f[2], f[3]
    if kind == "MODE":
        how[(k, name)] = f[4]
    elif kind == "SKIP":
        skips.append(" ".join(f[:2] + f[3:]))
    else:
        win[(r, k)].append((name, dict(x.split("=") for x in f[4:])))

per = collections.defaultdict(list)          # (k, name) -> [insns a frame]
funcs = collections.defaultdict(list)        # (k, name) -> [Counter a frame]
frames = collections.defaultdict(list)
delivered = collections.defaultdict(list)
names = []
for (r, k), ws in sorted(win.items()):
    run = f"{out}/{k}-{r}"
    for i, (name, kv) in enumerate(ws):
        if name not in names:
            names.append(name)
        a, b = by_function(run, 2 * i + 1), by_function(run, 2 * i + 2)
        rx = int(kv["rx"])
        if rx <= 0:
            skips.append(f"{r} {k} {name}: no frames in the window")
            continue
        d = {fn: (b[fn] - a[fn]) / rx for fn in set(a) | set(b) if b[fn] != a[fn]}
        per[(k, name)].append(sum(d.values()))
        funcs[(k, name)].append(d)
        frames[(k, name)].append(rx)
        got = kv.get("tcp_in", "0") if name.startswith("tcp/") else kv["udp_in"]
        delivered[(k, name)].append(int(got) / rx)

def mmm(v, fmt):
    return f"{fmt % statistics.median(v)} ({fmt % min(v)}–{fmt % max(v)})" if v else "–"

lines = ["| measurement | stock | patched | kernel instructions a frame, stock | patched | patched/stock | frames a window, stock / patched | to the socket, stock / patched |",
         "|---|---|---|---:|---:|---:|---:|---:|"]
for name in names:
    s, p = per[("stock", name)], per[("patched", name)]
    # ratios within a round: each patched boot against the stock boot before it
    ratio = [b / a for a, b in zip(s, p)]
    lines.append(f"| {name} | {how.get(('stock', name), '?')} | {how.get(('patched', name), '?')} | "
                 f"{mmm(s, '%.0f')} | {mmm(p, '%.0f')} | {mmm(ratio, '%.3f')} | "
                 f"{statistics.median(frames[('stock', name)] or [0]):.0f} / {statistics.median(frames[('patched', name)] or [0]):.0f} | "
                 f"{statistics.median(delivered[('stock', name)] or [0]):.2f} / {statistics.median(delivered[('patched', name)] or [0]):.2f} |")
summary = "\n".join(lines) + (
    f"\n\n{rounds} boots of each kernel, alternating, {cpus} vCPU(s) under -icount; each cell median (min–max) over the boots; "
    "kernel instructions a frame: all kernel instructions in the window / the GEM's rx_packets in it; "
    "to the socket: UDP datagrams delivered (TCP segments received, for tcp) / frames (0 under XDP_DROP and XDP_TX).\n")
if skips:
    summary += "\nnot counted: " + "; ".join(skips) + "\n"
summary += f"\nreproduce: `bench/{cmd}`\n"
open(f"{out}/summary.md", "w").write(summary)

with open(f"{out}/by-function.md", "w") as f:
    for name in names:
        s, p = funcs[("stock", name)], funcs[("patched", name)]
        if not s or not p:
            continue
        fns = set().union(*s, *p)
        med = lambda runs, fn: statistics.median(r.get(fn, 0) for r in runs)
        rows = sorted(((med(p, fn) - med(s, fn), fn) for fn in fns), key=lambda x: x[0])
        rows = [x for x in rows if abs(x[0]) >= mn]
        f.write(f"### {name}: kernel instructions a frame, by function (medians over the boots)\n\n"
                f"| function | stock | patched | patched - stock |\n|---|---:|---:|---:|\n")
        for dlt, fn in rows:
            f.write(f"| `{fn}` | {med(s, fn):.1f} | {med(p, fn):.1f} | {dlt:+.1f} |\n")
        f.write(f"\n(functions differing by {mn:g} or more; their sum {sum(x[0] for x in rows):+.1f}; "
                f"total stock {statistics.median(per[('stock', name)]):.0f}, patched {statistics.median(per[('patched', name)]):.0f})\n\n")
print(summary)
PY
[ "$keep" = 1 ] || rm -f "$out"/*.blocks*
echo "$me: results in $out (summary.md, by-function.md)" >&2
