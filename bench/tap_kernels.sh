#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The numbers of issue 6 (kernel-patches/tun): tap XDP_DROP and XDP_PASS,
# frames via write() and via vhost-net, 64 B, 1500 B and 9000 B GSO, on
# Linux 6.12 without and with the tun series; with -p also issue 19's
# XDP_TX, XDP_REDIRECT and four-writer rows (see -p). The two kernels are
# booted in turn (make vmtest, TCG), BOOTS times each, in ABBA order (stock,
# patched, patched, stock, ...) so that a steady drift of the host
# favours neither; every boot
# first runs one unrecorded pass over its points (1 s samples: TCG
# translates the hot paths, the pool fills), then ROUNDS rounds of every
# point (build/xdplab-bench tap-vhost, rounds interleaved). Sample j of
# the patched kernel (boot b, round r) is paired with sample j of stock
# (same boot number, same round), so a slow stretch of the host spreads
# over both kernels instead of one. The table gives, per point, the
# medians (min-max) over all samples of each kernel and patched / stock:
# the median (min-max) of the per-pair ratios.
#
#   bench/tap_kernels.sh [-r ROUNDS] [-d SECONDS] [-b BOOTS] [-n] [-a]
#                        [-c CPUS] [-I SHIFT] [-P] [-p POINT]... [-t CMD]
#                        [-o DIR] --stock IMAGE --patched IMAGE
#
#   -r ROUNDS   samples of each point a boot (default 3)
#   -d SECONDS  seconds a sample (default 3)
#   -b BOOTS    boots of each kernel, alternating (default 1)
#   -n          also the IFF_NAPI rows (64 and 1500 B)
#   -a          every point; default: the 9000 B GSO rows without IFF_NAPI
#   -p POINT    only these points (xdplab-bench ids or globs, repeatable,
#               e.g. -p 'tap-vhost/64/drop/write/*'); default: as -n/-a say.
#               Issue 19's rows are only taken this way (they would more
#               than double a default run): programs
#               tx and redirect ('tap-vhost/gso9000/tx/*'), whose frames
#               are read back from a tap fd (a second table gives out kpps,
#               payload MB/s, GSO frames out %, payload out / in), and the
#               path write4, four writers on the tap's one queue
#               ('tap-vhost/64/*/write4/*'). With -c 1 the writers only
#               take turns; -c 2 lets two be in the tap at once, on the
#               host's clock (under -I the vCPUs take turns on one host
#               thread, and guest time counts both vCPUs' instructions)
#   -c CPUS     the guest's vCPUs (VMTEST_SMP, default 2). With 1, the
#               writer, the softirq work and the socket reader share one
#               vCPU: the rate is bound by CPU alone
#   -I SHIFT    run the guest with QEMU's -icount shift=SHIFT
#               (VMTEST_ICOUNT; TCG only): the guest's clock advances
#               2^SHIFT ns per instruction executed, so with -c 1 kpps is
#               frames per instruction-time and sys ns/frame counts the
#               kernel's instructions a frame (times 2^SHIFT), whatever
#               the host's load; 3 keeps about real time here. Use with
#               -c 1 (a second vCPU would only take turns with the first)
#   -P          pin the writer (write() or the vhost-net client) to guest
#               CPU 0 and the socket reader to CPU 1 (xdplab-bench --pin;
#               needs -c 2 or more)
#   -t CMD      run CMD in the first boot of the patched kernel before
#               measuring (e.g. "build/test_xdplab -t 'tun_*'"); the run
#               stops if it fails (vmtest also fails on a kernel splat)
#   -o DIR      keeps KERNEL-BOOT.json, the logs and table.md
#               (default /tmp/tap-kernels-DATE)
#   --stock IMAGE, --patched IMAGE   bzImages to boot (make vmtest KERNEL=)
#
# Take the CPU lock around it on a shared machine:
#   flock /tmp/xdplab-cpu.lock bench/tap_kernels.sh --stock A --patched B
set -euo pipefail

cd "$(dirname "$0")/.."
me=tap_kernels
. bench/script_lib.sh
rounds=3 secs=3 boots=1 napi=0 all=0 pre="" out="" stock="" patched=""
cpus=2 icount="" pin="" sel=()
argv=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	-r) [ $# -ge 2 ] || die "-r wants a count"; rounds=$2; shift 2 ;;
	-d) [ $# -ge 2 ] || die "-d wants seconds"; secs=$2; shift 2 ;;
	-b) [ $# -ge 2 ] || die "-b wants a count"; boots=$2; shift 2 ;;
	-n) napi=1; shift ;;
	-a) all=1; shift ;;
	-p) [ $# -ge 2 ] || die "-p wants a point id or glob"; sel+=("$2"); shift 2 ;;
	-c) [ $# -ge 2 ] || die "-c wants a vCPU count"; cpus=$2; shift 2 ;;
	-I) [ $# -ge 2 ] || die "-I wants an icount shift"; icount=$2; shift 2 ;;
	-P) pin=" --pin"; shift ;;
	-t) [ $# -ge 2 ] || die "-t wants a command"; pre=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || die "-o wants a directory"; out=$2; shift 2 ;;
	--stock | --patched) kernel_opt "$1" $# "${2:-}"; shift 2 ;;
	-h | --help) usage ;;
	*) die "unknown argument '$1'" "try $0 --help" ;;
	esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "-r wants a count, got '$rounds'"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || die "-d wants seconds, got '$secs'"
[[ "$boots" =~ ^[1-9]$ ]] || die "-b wants a count from 1 to 9, got '$boots'"
[[ "$cpus" =~ ^([1-9]|1[0-6])$ ]] || die "-c wants a vCPU count from 1 to 16, got '$cpus'"
[ -z "$pin" ] || [ "$cpus" -ge 2 ] || die "-P pins to CPUs 0 and 1, but -c $cpus gives the guest one" "drop -P, or use -c 2"
[[ "$icount" =~ ^([0-9]|10)?$ ]] || die "-I wants an icount shift from 0 to 10, got '$icount'" "e.g. -I 3"
[ -f "$stock" ] || die "stock kernel image '${stock}' does not exist" "pass --stock /path/to/bzImage"
[ -f "$patched" ] || die "patched kernel image '${patched}' does not exist" "pass --patched /path/to/bzImage"
out=${out:-/tmp/$me-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"

pts=""
for size in 64 1500 gso9000; do
	for verdict in drop pass none; do
		for path in write vhost; do
			pts+=" -p tap-vhost/$size/$verdict/$path/napi-off"
			[ "$napi" = 1 ] || continue
			[ "$size" != gso9000 ] || [ "$all" = 1 ] || continue
			pts+=" -p tap-vhost/$size/$verdict/$path/napi-on"
		done
	done
done
if [ ${#sel[@]} -gt 0 ]; then
	pts=""
	for p in "${sel[@]}"; do pts+=" -p $(printf "%q" "$p")"; done
fi
make -s all build/xdplab-bench >/dev/null
repro="bench/$me.sh $(printf "%q " "${argv[@]}")"

for b in $(seq 1 "$boots"); do
	order="stock patched"
	[ $((b % 2)) = 1 ] || order="patched stock"
	for k in $order; do
		img=$stock cmd=""
		[ "$k" = stock ] || img=$patched
		if [ "$k" = patched ] && [ -n "$pre" ] && [ "$b" = 1 ]; then
			cmd="{ $pre; } >&2 || { echo '$me: -t command failed' >&2; exit 1; };"
		fi
		cmd+=" build/xdplab-bench$pts -r 1 -d 1$pin --no-plot -o /tmp/$me-warm >/dev/null 2>&1;"
		cmd+=" build/xdplab-bench$pts -r $rounds -d $secs$pin --no-plot -o /tmp/$me >&2"
		cmd+=" && echo XDPLAB-TAPK-JSON && cat /tmp/$me/results.json && echo XDPLAB-TAPK-END"
		echo "$me: $k kernel, boot $b of $boots ($img), log: $out/$k-$b.log" >&2
		if ! VMTEST_SMP=$cpus VMTEST_ICOUNT=$icount VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-3600} make -s vmtest KERNEL="$img" CMD="$cmd" \
			>"$out/$k-$b.log" 2>&1; then
			tail -n 20 "$out/$k-$b.log" >&2
			die "the run on the $k kernel failed; its log: $out/$k-$b.log"
		fi
		sed -n '/^XDPLAB-TAPK-JSON/,/^XDPLAB-TAPK-END/p' "$out/$k-$b.log" | sed '1d;$d' |
			tr -d '\r' >"$out/$k-$b.json"
	done
done

CPUS=$cpus ICOUNT=$icount PIN=$pin python3 - "$out" "$repro" "$boots" <<'EOF' | tee "$out/table.md"
import json, os, statistics, sys

out, repro, boots = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = {k: [json.load(open(f"{out}/{k}-{b}.json")) for b in range(1, boots + 1)]
        for k in ("stock", "patched")}

def points(boots):
    """Each point of the first boot, its samples those of every boot in turn."""
    pts = {}
    for run in boots:
        for sc in run["scenarios"]:
            if sc["name"] != "tap-vhost":
                continue
            for p in sc["points"]:
                q = pts.setdefault(p["id"], {**p, "metrics": {}})
                if p.get("error"):
                    q["error"] = p["error"]
                for m, v in p.get("metrics", {}).items():
                    q["metrics"].setdefault(m, {"samples": []})["samples"] += v["samples"]
    return pts

# Under -icount a ratio repeats to three digits: show them
ICOUNT = os.environ.get("ICOUNT")
RD = 3 if ICOUNT else 2

def mmm(v, nd=1):
    v = [x for x in v if x is not None]  # a sample that failed
    if not v:
        return "n/a"
    return f"{statistics.median(v):.{nd}f} ({min(v):.{nd}f}–{max(v):.{nd}f})"

def ratio(a, b):
    r = [x / y for x, y in zip(a, b) if x is not None and y]
    return mmm(r, RD)

s, p = points(runs["stock"]), points(runs["patched"])
print()
sc0 = next(sc for sc in runs["stock"][0]["scenarios"] if sc["name"] == "tap-vhost")
print(f"{os.environ.get('CPUS', '2')} vCPU guest, "
      f"{f'-icount shift={ICOUNT} (guest time counts instructions), ' if ICOUNT else 'host clock, '}"
      f"{'writer pinned to CPU 0, socket reader to CPU 1, ' if os.environ.get('PIN') else ''}"
      f"{boots} boot(s) of each kernel, ABBA order, each {sc0['rounds']} rounds of "
      f"{sc0['sample_seconds']} s after an unrecorded pass; median (min–max) over the "
      "samples; patched / stock: median (min–max) of the ratios of sample j of one "
      "kernel to sample j of the other (same boot number, same round)")
for k in ("stock", "patched"):
    print(f"- {k}: {runs[k][0]['kernel'].get('release')}")
print(f"- reproduce: `{repro.strip()}`")
print()
print("| point | stock kpps | patched kpps | patched / stock | stock sys ns/frame "
      "| patched sys ns/frame | patched / stock |")
print("|---|---:|---:|---:|---:|---:|---:|")
for pid, sp in s.items():
    pp = p.get(pid)
    if not pp:
        continue
    if sp.get("error") or pp.get("error"):
        print(f"| {sp.get('group', pid)}, {sp.get('label', '')} | {sp.get('error') or ''} | {pp.get('error') or ''} | | | | |")
        continue
    sk, pk = sp["metrics"]["kpps"]["samples"], pp["metrics"]["kpps"]["samples"]
    sn, pn = sp["metrics"]["sys_ns_pkt"]["samples"], pp["metrics"]["sys_ns_pkt"]["samples"]
    print(f"| {sp['group']}, {sp['label']} | {mmm(sk)} | {mmm(pk)} | {ratio(pk, sk)} | {mmm(sn, 0)} "
          f"| {mmm(pn, 0)} | {ratio(pn, sn)} |")
print("\n(kpps: frames that went into the tap per second; sys ns/frame: system + softirq "
      "CPU a frame)")

# tx/redirect rows: what came out. The series sends a GSO frame on as
# segments where stock keeps it whole, so frames out are not comparable
# between the kernels and payload bytes are.
outs = [pid for pid, sp in s.items() if pid in p and not sp.get("error") and
        not p[pid].get("error") and "out_mbs" in sp["metrics"] and
        any(v is not None for v in sp["metrics"]["out_mbs"]["samples"])]
def smp(pt, m):
    return [v for v in pt["metrics"].get(m, {}).get("samples", []) if v is not None]
if outs:
    print()
    print("| point | stock out kpps | patched out kpps | stock out MB/s | patched out MB/s "
          "| patched / stock MB/s | GSO frames out %, stock / patched "
          "| payload out / in %, stock / patched |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for pid in outs:
        sp, pp = s[pid], p[pid]
        sm, pm = smp(sp, "out_mbs"), smp(pp, "out_mbs")
        # sample j with sample j, as above, skipping pairs with a hole
        sr, pr = sp["metrics"]["out_mbs"]["samples"], pp["metrics"]["out_mbs"]["samples"]
        pairs = [(x, y) for x, y in zip(pr, sr) if x is not None and y]
        g = [f"{statistics.median(x):.0f}" if x else "n/a"
             for x in (smp(sp, "out_gso_pct"), smp(pp, "out_gso_pct"))]
        o = [f"{statistics.median(x):.0f}" if x else "n/a"
             for x in (smp(sp, "out_pct"), smp(pp, "out_pct"))]
        print(f"| {sp['group']}, {sp['label']} | {mmm(smp(sp, 'out_kpps'))} "
              f"| {mmm(smp(pp, 'out_kpps'))} | {mmm(sm)} | {mmm(pm)} "
              f"| {ratio([x for x, _ in pairs], [y for _, y in pairs])} "
              f"| {g[0]} / {g[1]} | {o[0]} / {o[1]} |")
    print("\n(out: frames read back from the tap they left by, UDP to the bench's port; "
          "MB/s: their UDP payload; payload out / in: what the reader got of what was "
          "written; the rest was dropped on the way, mostly where the tap's queue was full "
          "while the reader was behind)")
EOF
echo "$me: results in $out (KERNEL-BOOT.json, the logs, table.md)" >&2
