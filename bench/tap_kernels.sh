#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The numbers of issue 6 (kernel-patches/tun): tap XDP_DROP and XDP_PASS,
# frames via write() and via vhost-net, 64 B, 1500 B and 9000 B GSO, on
# Linux 6.12 without and with the tun series. Each kernel is booted once
# (make vmtest, TCG) and runs every point ROUNDS times, rounds interleaved
# (build/xdplab-bench tap-vhost). The table gives, per point, the medians
# (min-max) on each kernel and patched / stock: the ratio of round i on one
# kernel to round i on the other, median (min-max) over the rounds.
#
#   bench/tap_kernels.sh [-r ROUNDS] [-d SECONDS] [-n] [-o DIR]
#                        --stock IMAGE --patched IMAGE
#
#   -r ROUNDS   samples of each point (default 3)
#   -d SECONDS  seconds a sample (default 3)
#   -n          also the IFF_NAPI rows
#   -o DIR      keeps stock.json, patched.json, the logs and table.md
#               (default /tmp/tap-kernels-DATE)
#   --stock IMAGE, --patched IMAGE   bzImages to boot (make vmtest KERNEL=)
#
# Take the CPU lock around it on a shared machine:
#   flock /tmp/xdplab-cpu.lock bench/tap_kernels.sh --stock A --patched B
set -euo pipefail

cd "$(dirname "$0")/.."
me=tap_kernels
die() { echo "$me: $1" >&2; [ -z "${2:-}" ] || echo "$me: $2" >&2; exit 2; }
rounds=3 secs=3 napi=0 out="" stock="" patched=""
argv=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	-r) [ $# -ge 2 ] || die "-r wants a count"; rounds=$2; shift 2 ;;
	-d) [ $# -ge 2 ] || die "-d wants seconds"; secs=$2; shift 2 ;;
	-n) napi=1; shift ;;
	-o) [ $# -ge 2 ] || die "-o wants a directory"; out=$2; shift 2 ;;
	--stock) [ $# -ge 2 ] || die "--stock wants a bzImage"; stock=$2; shift 2 ;;
	--patched) [ $# -ge 2 ] || die "--patched wants a bzImage"; patched=$2; shift 2 ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -e/d'; exit 0 ;;
	*) die "unknown argument '$1'" "try $0 --help" ;;
	esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "-r wants a count, got '$rounds'"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || die "-d wants seconds, got '$secs'"
[ -f "$stock" ] || die "stock kernel image '${stock}' does not exist" "pass --stock /path/to/bzImage"
[ -f "$patched" ] || die "patched kernel image '${patched}' does not exist" "pass --patched /path/to/bzImage"
out=${out:-/tmp/$me-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"

pts=""
for size in 64 1500 gso9000; do
	for verdict in drop pass; do
		for path in write vhost; do
			pts+=" -p tap-vhost/$size/$verdict/$path/napi-off"
			[ "$napi" = 0 ] || pts+=" -p tap-vhost/$size/$verdict/$path/napi-on"
		done
	done
done
make -s all build/xdplab-bench >/dev/null
repro="bench/$me.sh $(printf "%q " "${argv[@]}")"

for k in stock patched; do
	img=$stock
	[ "$k" = stock ] || img=$patched
	cmd="build/xdplab-bench$pts -r $rounds -d $secs --no-plot -o /tmp/$me >&2"
	cmd+=" && echo XDPLAB-TAPK-JSON && cat /tmp/$me/results.json && echo XDPLAB-TAPK-END"
	echo "$me: $k kernel ($img), log: $out/$k.log" >&2
	if ! VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-3600} make -s vmtest KERNEL="$img" CMD="$cmd" \
		>"$out/$k.log" 2>&1; then
		tail -n 20 "$out/$k.log" >&2
		die "the run on the $k kernel failed; its log: $out/$k.log"
	fi
	sed -n '/^XDPLAB-TAPK-JSON/,/^XDPLAB-TAPK-END/p' "$out/$k.log" | sed '1d;$d' |
		tr -d '\r' >"$out/$k.json"
done

python3 - "$out" "$repro" <<'EOF' | tee "$out/table.md"
import json, statistics, sys

out, repro = sys.argv[1], sys.argv[2]
runs = {k: json.load(open(f"{out}/{k}.json")) for k in ("stock", "patched")}

def points(run):
    return {p["id"]: p for sc in run["scenarios"] if sc["name"] == "tap-vhost"
            for p in sc["points"]}

def mmm(v, nd=1):
    if not v:
        return "n/a"
    return f"{statistics.median(v):.{nd}f} ({min(v):.{nd}f}–{max(v):.{nd}f})"

def ratio(a, b):
    r = [x / y for x, y in zip(a, b) if y]
    return mmm(r, 2)

s, p = points(runs["stock"]), points(runs["patched"])
print()
sc0 = next(sc for sc in runs["stock"]["scenarios"] if sc["name"] == "tap-vhost")
print(f"{sc0['rounds']} rounds of {sc0['sample_seconds']} s "
      "on each kernel, median (min–max); patched / stock pairs round i of one run "
      "with round i of the other")
for k in ("stock", "patched"):
    print(f"- {k}: {runs[k]['kernel'].get('release')}")
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
EOF
echo "$me: results in $out (stock.json, patched.json, the logs, table.md)" >&2
