#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Where two kernels' instructions a frame differ, function by function.
# Boots each kernel in a 1-vCPU vmtest guest under QEMU -icount with the
# bench/tcg/tb_insns.c plugin, which counts every kernel instruction the
# guest executes (by translation block, not by sampling), runs one
# xdplab-bench point in it, and divides each kernel function's count by
# the number of frames: the times SYMBOL (default tun_get_user, entered
# once a written frame) was entered. The whole guest run is counted, boot
# and the bench's set-up included, so functions of those show up with
# small differences too (the frame counts differ); the frame path's
# functions are the ones with whole instructions a frame.
#
#   bench/insn_profile.sh -p POINT [-b POINT] [-n] [-d SECONDS] [-e SYMBOL]
#                         [-m MIN] [-o DIR] --stock IMAGE --patched IMAGE
#
#   -p POINT    the xdplab-bench point to run (xdplab-bench --list)
#   -b POINT    run this point in the patched guest instead; with the same
#               image on both sides, the table is two points of one
#               kernel (e.g. IFF_NAPI off against on)
#   -n          net counts: each side is booted twice, with a sample of
#               SECONDS and of 2 x SECONDS, the point alone (xdplab-bench
#               --no-baselines), and the counts are the second boot's minus
#               the first's, so boot, set-up and the kallsyms dump drop out
#               and only frames' work is left
#   -d SECONDS  length of the sample (default 8)
#   -e SYMBOL   kernel function entered once a frame (default tun_get_user)
#   -m MIN      list functions whose counts differ by at least MIN
#               instructions a frame (default 2)
#   -o DIR      keeps each kernel's block counts, kallsyms and log
#               (default /tmp/insn-profile-DATE)
#
# e.g. bench/insn_profile.sh -p tap-vhost/64/pass/write/napi-off \
#          --stock ~/.cache/xdplab-dev/img/bzImage-stock \
#          --patched ~/.cache/xdplab-dev/img/bzImage-tun-pp7
#      bench/insn_profile.sh -p tap-fwd/napi-off/none -b tap-fwd/napi-on/none \
#          -e tun_xdp_one --stock IMG --patched IMG
set -euo pipefail

cd "$(dirname "$0")/.."
me=insn_profile
. bench/script_lib.sh
point="" point_b="" net=0 secs=8 sym=tun_get_user min=2 out="" stock="" patched=""
argv=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || die "-p wants a point id"; point=$2; shift 2 ;;
	-b) [ $# -ge 2 ] || die "-b wants a point id"; point_b=$2; shift 2 ;;
	-n) net=1; shift ;;
	-d) [ $# -ge 2 ] || die "-d wants seconds"; secs=$2; shift 2 ;;
	-e) [ $# -ge 2 ] || die "-e wants a kernel symbol"; sym=$2; shift 2 ;;
	-m) [ $# -ge 2 ] || die "-m wants instructions a frame"; min=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || die "-o wants a directory"; out=$2; shift 2 ;;
	--stock | --patched) kernel_opt "$1" $# "${2:-}"; shift 2 ;;
	-h | --help) usage ;;
	*) die "unknown argument '$1'" "try $0 --help" ;;
	esac
done
[ -n "$point" ] || die "no point given" "e.g. -p tap-vhost/64/pass/write/napi-off (xdplab-bench --list)"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || die "-d wants whole seconds, got '$secs'"
[[ "$min" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "-m wants a number, got '$min'"
for img in "$stock" "$patched"; do
	[ -n "$img" ] || die "both --stock and --patched are needed" "two bzImages, e.g. from make vmtest-kernel"
	[ -f "$img" ] || die "no kernel image '$img'"
done
point_b=${point_b:-$point}
out=${out:-/tmp/$me-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"

make -s all build/xdplab-bench build/bench/tb_insns.so >/dev/null
plugin=$(pwd)/build/bench/tb_insns.so

# kallsyms goes out on the console: the guest's view of the host is
# read-only. Text symbols only, compressed, between markers.
kallsyms="echo XDPLAB-KALLSYMS-BEGIN; grep ' [tTwW] ' /proc/kallsyms | gzip -1 | base64 -w0; echo; echo XDPLAB-KALLSYMS-END;"

# One guest: kallsyms, then the point for $2 seconds; counts to $1.blocks.
count() {
	local run=$1 img=$2 pt=$3 d=$4 only=""
	[ $net = 0 ] || only=--no-baselines
	local guest="$kallsyms build/xdplab-bench -p '$pt' $only -r 1 -d $d --no-plot -o /tmp/$me >/tmp/$me.log 2>&1 || { cat /tmp/$me.log; exit 1; };"
	guest+=" grep -F '[1/1]' /tmp/$me.log"
	echo "$me: $run: $img, $pt for $d s under -icount" >&2
	TB_INSNS_OUT=$out/$run.blocks VMTEST_PLUGIN=$plugin VMTEST_SMP=1 VMTEST_ICOUNT=3 \
		make -s vmtest KERNEL="$img" CMD="$guest" >"$out/$run.log" 2>&1 ||
		die "the $run guest failed" "see $out/$run.log"
	awk '/XDPLAB-KALLSYMS-BEGIN/ {f = 1; next} /XDPLAB-KALLSYMS-END/ {f = 0} f' "$out/$run.log" |
		tr -d '\r\n' | base64 -d | gunzip >"$out/$run.kallsyms" ||
		die "no kallsyms in the $run guest's output" "see $out/$run.log"
	[ -s "$out/$run.blocks" ] || die "the plugin wrote no counts for $run" "is QEMU built with plugin support? see $out/$run.log"
}

for k in stock patched; do
	img=$stock pt=$point
	[ $k = stock ] || img=$patched pt=$point_b
	if [ $net = 0 ]; then
		count $k "$img" "$pt" "$secs"
	else
		count $k-short "$img" "$pt" "$secs"
		count $k "$img" "$pt" $((2 * secs))
	fi
done

[ "$point" = "$point_b" ] || point="$point (stock) against $point_b (patched)"
python3 - "$out" "$sym" "$min" "$point" "$me.sh ${argv[*]}" "$net" <<'PY'
import bisect, collections, sys
out, sym, mn, point, cmd = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
net = sys.argv[6] == "1"

def load1(k):
    syms = sorted((int(a, 16), n) for a, t, n, *_ in
                  (l.split() for l in open(f"{out}/{k}.kallsyms")) if t in "tTwW")
    addrs = [a for a, _ in syms]
    insns, entries = collections.Counter(), collections.Counter()
    for l in open(f"{out}/{k}.blocks"):
        start, n, runs = l.split()
        start, n, runs = int(start, 16), int(n), int(runs)
        i = bisect.bisect_right(addrs, start) - 1
        if i < 0:
            continue
        name = syms[i][1]
        insns[name] += n * runs
        if start == addrs[i]:
            entries[name] += runs
    return insns, entries

def load(k):
    if not net:
        return load1(k)
    # the long boot minus the short one: only the extra sample's work
    (li, le), (si, se) = load1(k), load1(f"{k}-short")
    sub = lambda a, b: collections.Counter({n: a[n] - b[n] for n in set(a) | set(b)})
    return sub(li, si), sub(le, se)

res = {k: load(k) for k in ("stock", "patched")}
frames = {k: res[k][1][sym] for k in res}
for k, f in frames.items():
    if not f:
        sys.exit(f"insn_profile: {sym} never entered in the {k} guest: pass -e with a function of this point's path")
per = {k: {n: c / frames[k] for n, c in res[k][0].items()} for k in res}
tot = {k: sum(per[k].values()) for k in per}
print(f"### {point}: kernel instructions a frame, by function\n")
print(f"frames ({sym} entered): stock {frames['stock']}, patched {frames['patched']}; "
      f"kernel instructions a frame, {'net of boot and set-up' if net else 'boot and set-up included'}: stock {tot['stock']:.0f}, "
      f"patched {tot['patched']:.0f}, {tot['patched'] - tot['stock']:+.0f}\n")
rows = [(per["patched"].get(n, 0) - per["stock"].get(n, 0), n) for n in set(per["stock"]) | set(per["patched"])]
rows = sorted((r for r in rows if abs(r[0]) >= mn), key=lambda r: r[0])
print(f"| function | stock | patched | patched - stock |\n|---|---:|---:|---:|")
for d, n in rows:
    print(f"| `{n}` | {per['stock'].get(n, 0):.1f} | {per['patched'].get(n, 0):.1f} | {d:+.1f} |")
print(f"\n(functions whose instructions a frame differ by {mn:g} or more; "
      f"their sum {sum(d for d, _ in rows):+.1f})\n\nreproduce: `bench/{cmd}`")
PY
echo "$me: block counts, kallsyms and logs in $out" >&2
