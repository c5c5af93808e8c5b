#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The same xdplab-bench points on several kernels, side by side. Each kernel
# is booted once under `make vmtest` and measures every point and its
# baselines in that one run, rounds interleaved, so each ratio (a point
# against its baseline, e.g. "x no XDP") is taken within a round on one
# kernel; the table puts the kernels' ratios next to each other. Each boot
# first runs warm-up rounds that are not recorded, and odd rounds take the
# points in reverse order (xdplab-bench --warmup, --alternate), so that
# neither a cold first sample nor a fixed order favours a point or its
# baseline. For points that are a ratio inside one stream (veth-flip) it
# also prints each kernel's test and base windows' rates ÷ the first
# kernel's: under -I those are instructions per byte of the same case on
# two kernels (e.g. the series' XDP_REDIRECT of superframes ÷ stock's).
#
#   bench/compare-kernels.sh [-r ROUNDS] [-d SECONDS] [-w WARMUP] [-c CPUS] [-P]
#                            [-I SHIFT] [-o DIR] -k NAME=KERNEL [-k NAME=KERNEL ...]
#                            POINT...
#
#   -k NAME=KERNEL  a kernel to boot, in table order. KERNEL is a bzImage
#                   (make vmtest KERNEL=...), or PATCHES=SEL to build the
#                   vmtest kernel with that selection (none, all, veth, ...)
#   POINT           xdplab-bench point ids or globs (-p), see
#                   build/xdplab-bench --list
#   -r ROUNDS       samples of each point (default 5)
#   -d SECONDS      seconds a sample (default 10)
#   -w WARMUP       rounds run first and not recorded (default 1)
#   -c CPUS         the guest's vCPUs (VMTEST_SMP, default 2). With 1, the
#                   sender, the softirq work and the receiver share one
#                   vCPU: throughput is bound by CPU alone and a ratio is
#                   the ratio of the two paths' cost per byte. Under TCG
#                   with the host's clock it still spreads by ±0.2 from
#                   round to round; -I takes the host out
#   -P              pin iperf3's client to CPU 0 and server to CPU 1
#                   (xdplab-bench --pin; needs -c 2 or more)
#   -I SHIFT        run the guest with QEMU's -icount shift=SHIFT
#                   (VMTEST_ICOUNT; TCG only): the guest's clock advances
#                   2^SHIFT ns per instruction executed, so Gbit/s and
#                   ratios count instructions per byte and do not depend on
#                   the host's load. Use with -c 1 (a second vCPU would only
#                   take turns with the first). 3 keeps about real time here
#   -o DIR          keeps NAME.json, NAME.log and table.md
#                   (default /tmp/compare-kernels-DATE)
#
# Example (issue 5, kernel-patches/veth):
#   flock /tmp/xdplab-cpu.lock bench/compare-kernels.sh -r 5 -d 10 \
#       -k stock=PATCHES=none -k veth=PATCHES=veth \
#       'veth-tcp/mtu1500/pass-frags/gro-off' 'veth-tcp/mtu8000/pass-frags/gro-off'
#
# PATCHES= kernels share vmtest's one worktree: switching selections
# rebuilds it. Prebuilt images (KERNEL=) avoid that. Needs root and what
# `make vmtest` needs.
set -euo pipefail

cd "$(dirname "$0")/.."
me=compare-kernels
. bench/script_lib.sh

rounds=5 secs=10 warmup=1 cpus=2 pin="" icount="" out="" kernels=() points=()
argv=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	-r) [ $# -ge 2 ] || die "-r wants a count"; rounds=$2; shift 2 ;;
	-d) [ $# -ge 2 ] || die "-d wants seconds"; secs=$2; shift 2 ;;
	-w) [ $# -ge 2 ] || die "-w wants a count"; warmup=$2; shift 2 ;;
	-c) [ $# -ge 2 ] || die "-c wants a vCPU count"; cpus=$2; shift 2 ;;
	-P) pin=" --pin"; shift ;;
	-I) [ $# -ge 2 ] || die "-I wants an icount shift"; icount=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || die "-o wants a directory"; out=$2; shift 2 ;;
	-k) [ $# -ge 2 ] || die "-k wants NAME=KERNEL"; kernels+=("$2"); shift 2 ;;
	-h | --help) usage ;;
	-*) die "unknown option '$1'" "try $0 --help" ;;
	*) points+=("$1"); shift ;;
	esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "-r wants a count, got '$rounds'"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || die "-d wants seconds, got '$secs'"
[[ "$warmup" =~ ^([0-9]|10)$ ]] || die "-w wants a count from 0 to 10, got '$warmup'"
[[ "$cpus" =~ ^([1-9]|1[0-6])$ ]] || die "-c wants a vCPU count from 1 to 16, got '$cpus'"
[ -z "$pin" ] || [ "$cpus" -ge 2 ] || die "-P pins to CPUs 0 and 1, but -c $cpus gives the guest one" "drop -P, or use -c 2"
[[ "$icount" =~ ^([0-9]|10)?$ ]] || die "-I wants an icount shift from 0 to 10, got '$icount'" "e.g. -I 3"
[ ${#kernels[@]} -ge 1 ] || die "no kernel given" "add -k NAME=/path/to/bzImage or -k NAME=PATCHES=none"
[ ${#points[@]} -ge 1 ] || die "no bench point given" "see build/xdplab-bench --list"
names=()
for k in "${kernels[@]}"; do
	name=${k%%=*} spec=${k#*=}
	[[ "$k" == *=* && "$name" =~ ^[A-Za-z0-9_.+-]+$ && -n "$spec" ]] ||
		die "-k '$k' is not NAME=KERNEL" "e.g. -k stock=PATCHES=none or -k mine=/path/bzImage"
	case "$spec" in
	PATCHES=*) ;;
	*) [ -f "$spec" ] || die "kernel image '$spec' of '$name' does not exist" "build it first, or use PATCHES=..." ;;
	esac
	names+=("$name")
done
out=${out:-/tmp/$me-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"

make -s all build/xdplab-bench >/dev/null

pargs=""
for p in "${points[@]}"; do pargs+=" -p '$p'"; done
repro="bench/compare-kernels.sh $(printf "%q " "${argv[@]}")"

for k in "${kernels[@]}"; do
	name=${k%%=*} spec=${k#*=} log=$out/${k%%=*}.log
	cmd="build/xdplab-bench$pargs -r $rounds -d $secs -w $warmup --alternate$pin --no-plot"
	cmd+=" -o /tmp/$me >&2"
	cmd+=" && echo XDPLAB-CMP-JSON && cat /tmp/$me/results.json && echo XDPLAB-CMP-END"
	case "$spec" in
	PATCHES=*) args=("$spec") ;;
	*) args=(KERNEL="$spec") ;;
	esac
	echo "$me: $name (${args[*]}), log: $log" >&2
	if ! VMTEST_SMP=$cpus VMTEST_ICOUNT=$icount VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-3600} make -s vmtest "${args[@]}" CMD="$cmd" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		echo "$me: the run on $name failed; its log: $log" >&2
		exit 1
	fi
	sed -n '/^XDPLAB-CMP-JSON/,/^XDPLAB-CMP-END/p' "$log" | sed '1d;$d' | tr -d '\r' >"$out/$name.json"
done

ICOUNT=$icount python3 - "$out" "$repro" "${names[@]}" <<'EOF' | tee "$out/table.md"
import json, os, sys

out, repro, names = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = {n: json.load(open(f"{out}/{n}.json")) for n in names}

# Under -icount a ratio repeats to three digits: show them
# (and Gbit/s near 0.4 need them too)
RD = 3 if os.environ.get("ICOUNT") else 2
VD = 3 if os.environ.get("ICOUNT") else 1

def fmt(m, nd=None):
    nd = RD if nd is None else nd
    if not m or m.get("median") is None:
        return "n/a"
    return f"{m['median']:.{nd}f} ({m['min']:.{nd}f}–{m['max']:.{nd}f})"

# point id -> kernel -> point
pts, order, metric, unit = {}, [], {}, {}
for n in names:
    for sc in runs[n]["scenarios"]:
        for p in sc["points"]:
            if p["id"] not in pts:
                pts[p["id"]] = {}
                order.append(p["id"])
            pts[p["id"]][n] = p
            metric[p["id"]] = sc["main_metric"]
            unit[p["id"]] = sc["units"].get(sc["main_metric"], "")

print()
r0 = next(iter(runs.values()))
sc0 = r0['scenarios'][0] if r0['scenarios'] else {}
icount = os.environ.get("ICOUNT")
print(f"{r0.get('machine', {}).get('cpus', '?')} vCPU guest, "
      f"{f'-icount shift={icount} (guest time counts instructions), ' if icount else ''}"
      f"{sc0.get('rounds', '?')} rounds of {sc0.get('sample_seconds', '?')} s after "
      f"{sc0.get('warmup_rounds', 0)} warm-up, "
      f"{'odd rounds reversed, ' if sc0.get('alternate') else ''}"
      f"{'iperf3 -A 0,1, ' if sc0.get('pin') else ''}median (min–max); "
      "each ratio is taken within a round on one kernel, then the median")
for n in names:
    k = runs[n]["kernel"]
    print(f"- {n}: {k.get('release')} {k.get('version', '')}".rstrip())
print(f"- reproduce: `{repro.strip()}`")
print()
print("| point | ratio | " + " | ".join(f"{n} ratio" for n in names) + " | "
      + " | ".join(f"{n} point / baseline" for n in names) + " |")
print("|---|---|" + "---:|" * (2 * len(names)))
for pid in order:
    ratio_names = []
    for n in names:
        for r in (pts[pid].get(n) or {}).get("ratios", []):
            if r["name"] not in ratio_names:
                ratio_names.append(r["name"])
    for rn in ratio_names:
        cells, vals = [], []
        for n in names:
            p = pts[pid].get(n)
            r = next((r for r in (p or {}).get("ratios", []) if r["name"] == rn), None)
            cells.append(fmt(r["ratio"]) if r else "n/a")
            if r and p:
                base = pts.get(r["to"], {}).get(n)
                m = metric[pid]
                vals.append(f"{fmt(p['metrics'].get(m), VD)} / "
                            f"{fmt(base['metrics'].get(m), VD) if base else 'n/a'}")
            else:
                vals.append("n/a")
        print(f"| {pid} | {rn} | " + " | ".join(cells) + " | " + " | ".join(vals) + " |")
    if not ratio_names:
        # A point that is a ratio itself (veth-flip: XDP ÷ no XDP inside one
        # stream): its main metric, and the two rates it divides.
        cells = [fmt((pts[pid].get(n) or {}).get("metrics", {}).get(metric[pid]))
                 for n in names]
        vals = []
        for n in names:
            ms = (pts[pid].get(n) or {}).get("metrics", {})
            vals.append(f"{fmt(ms.get('gbps_xdp'), VD)} / {fmt(ms.get('gbps_none'), VD)}"
                        if "gbps_xdp" in ms else "n/a")
        print(f"| {pid} | {unit[pid]} | " + " | ".join(cells) + " | " + " | ".join(vals) + " |")
    for n in names:
        e = (pts[pid].get(n) or {}).get("error")
        if e:
            print(f"| {pid} | {n}: {e} |" + " |" * (2 * len(names)))

# Points that are a ratio inside one stream (veth-flip): their test and
# base windows' rates on each kernel against the first kernel's. Under -I
# a rate is bytes per instruction, so this is the series' cost of the
# same case against stock's (no round pairs two boots: ratio of medians).
flip = [pid for pid in order
        if any("gbps_xdp" in (pts[pid].get(n) or {}).get("metrics", {}) for n in names)]
if flip and len(names) > 1:
    k0 = names[0]
    print(f"\nTest (XDP) and base windows' Gbit/s, each kernel ÷ {k0}, ratio of the medians"
          f"{' (instructions per byte: -I)' if icount else ' (host clock: luck of the boots included)'}:\n")
    print("| point | windows | " + " | ".join(f"{n} Gbit/s" for n in names) + " | "
          + " | ".join(f"{n} ÷ {k0}" for n in names[1:]) + " |")
    print("|---|---|" + "---:|" * (2 * len(names) - 1))
    for pid in flip:
        for key, what in (("gbps_xdp", "test (XDP)"), ("gbps_none", "base")):
            ms = [(pts[pid].get(n) or {}).get("metrics", {}).get(key) for n in names]
            m0 = ms[0]["median"] if ms[0] and ms[0].get("median") else None
            rs = [f"{m['median'] / m0:.{RD}f}" if m and m.get("median") and m0 else "n/a"
                  for m in ms[1:]]
            print(f"| {pid} | {what} | " + " | ".join(fmt(m, VD) for m in ms) + " | "
                  + " | ".join(rs) + " |")

# CPU per unit of the main metric, where the scenario records it split
# (user_per_gbps, system_per_gbps, softirq_per_gbps): the cost of a byte.
# Its ratio, baseline cost ÷ point cost within each round, reads like the
# throughput ratio (1 = the point costs what its baseline does) but does not
# depend on the guest's CPUs being busy.
COST = ("user_per_gbps", "system_per_gbps", "softirq_per_gbps")

def cost(p):
    ms = [p["metrics"].get(k, {}).get("samples") for k in COST]
    if not p or not all(ms):
        return None
    return [None if None in v else sum(v) for v in zip(*ms)]

def med3(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    mid = len(v) // 2
    return {"median": v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2,
            "min": v[0], "max": v[-1], "samples": v}

cost_rows = []
for pid in order:
    for n in names:
        p = pts[pid].get(n)
        for r in (p or {}).get("ratios", []):
            base = pts.get(r["to"], {}).get(n)
            c, cb = cost(p), cost(base) if base else None
            if not c or not cb:
                continue
            per = [b / a if a and b else None for a, b in zip(c, cb)]
            cost_rows.append((pid, r["name"], n, per, med3(c), med3(cb)))
if cost_rows:
    print("\nCPU (user+system+softirq, % of a core) per Gbit/s, baseline ÷ point within "
          "each round, median (min–max); point / baseline are the medians of the cost:\n")
    print("| point | ratio | kernel | CPU-per-byte ratio | point / baseline |")
    print("|---|---|---|---:|---:|")
    for pid, rn, n, per, c, cb in cost_rows:
        print(f"| {pid} | {rn} | {n} | {fmt(med3(per))} | {fmt(c, 1)} / {fmt(cb, 1)} |")
print(f"\n({', '.join(sorted(set(unit.values())))}; point / baseline are medians of the "
      "main metric)")
print("\nEach round's ratio, in round order:\n")
for pid in order:
    for n in names:
        for r in (pts[pid].get(n) or {}).get("ratios", []):
            vals = " ".join(f"{v:.{RD}f}" for v in r["ratio"].get("samples", []) if v is not None)
            print(f"- {pid} {r['name']}, {n}: {vals}")
for pid in order:
    for n in names:
        p = pts[pid].get(n) or {}
        if not p.get("ratios") and p.get("metrics", {}).get(metric[pid]):
            vals = " ".join(f"{v:.{RD}f}" for v in p["metrics"][metric[pid]].get("samples", [])
                            if v is not None)
            print(f"- {pid}, {n}: {vals}")
for pid, rn, n, per, c, cb in cost_rows:
    vals = " ".join(f"{v:.{RD}f}" for v in per if v is not None)
    print(f"- {pid} {rn}, CPU per byte, {n}: {vals}")
EOF
echo "$me: results in $out (NAME.json, NAME.log, table.md)" >&2
