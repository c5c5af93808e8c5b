#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# What -icount hides, estimated (issue 19): kernel cache misses and locked
# instructions a frame, stock against patched, for tap-vhost points.
# Boots each kernel in a 1-vCPU vmtest guest under QEMU -icount with the
# bench/tcg/cache_model.c plugin (per-vCPU L1d and L1i, a shared L2, LRU,
# fed by every guest load, store and instruction fetch) and runs each
# point in it alone (xdplab-bench --no-baselines) for SETTLE + 2 x WINDOW
# + 1 seconds. Once the point has run SETTLE seconds, two windows of
# WINDOW seconds follow back to back, each opened and closed by
# build/bench/insns_mark, at which the plugin writes its counters: a
# window holds only the point's steady state (boot, set-up, the attach
# and the teardown are outside), all kernel work in it, interrupts and
# timers included. A window's frames are the entries of SYMBOL in it
# (default tun_get_user, entered once a written frame, as in
# insn_profile.sh); frames per second of the window against the bench's
# own kpps for the sample shows that the window lay inside the sample.
# The kernels boot in ABBA order, BOOTS times each; under -icount a boot
# repeats the last one to within a few percent, which the windows show.
#
#   bench/cache_model.sh [-p POINT]... [-w WINDOW] [-s SETTLE] [-b BOOTS]
#                        [-e SYMBOL] [-o DIR] [-k] --stock IMAGE --patched IMAGE
#
#   -p POINT    a tap-vhost point (xdplab-bench --list), repeatable;
#               default: the four of issue 19
#   -w WINDOW   seconds of a window, guest time (default 2)
#   -s SETTLE   seconds from the bench's start to the first window (default
#               3; the set-up takes about 1.5 s of guest time)
#   -b BOOTS    boots of each kernel, alternating (default 1)
#   -e SYMBOL   kernel function entered once a frame (default tun_get_user)
#   -o DIR      logs, kallsyms, counters, windows.tsv, table.md
#               (default /tmp/cache-model-DATE)
#   -k          keep the plugin's snapshots whole (every kernel block's runs)
#
# Cache sizes: CACHE_L1D_SIZE, CACHE_L1D_ASSOC, CACHE_L1I_SIZE,
# CACHE_L1I_ASSOC, CACHE_L2_SIZE, CACHE_L2_ASSOC, CACHE_LINE in the
# environment (bench/tcg/cache_model.c; default 32K/8, 32K/8, 1M/16, 64).
#
# e.g. bench/cache_model.sh -p tap-vhost/64/drop/write/napi-off \
#          --stock /root/img/stock.bzImage --patched /root/img/tun-v7.bzImage
set -euo pipefail

cd "$(dirname "$0")/.."
me=cache_model
. bench/script_lib.sh
win=2 settle=3 boots=1 sym=tun_get_user out="" keep=0 stock="" patched="" sel=()
argv=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	-p) [ $# -ge 2 ] || die "-p wants a point id"; sel+=("$2"); shift 2 ;;
	-w) [ $# -ge 2 ] || die "-w wants seconds"; win=$2; shift 2 ;;
	-s) [ $# -ge 2 ] || die "-s wants seconds"; settle=$2; shift 2 ;;
	-b) [ $# -ge 2 ] || die "-b wants a count"; boots=$2; shift 2 ;;
	-e) [ $# -ge 2 ] || die "-e wants a kernel symbol"; sym=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || die "-o wants a directory"; out=$2; shift 2 ;;
	-k) keep=1; shift ;;
	--stock | --patched) kernel_opt "$1" $# "${2:-}"; shift 2 ;;
	-h | --help) usage ;;
	*) die "unknown argument '$1'" "try $0 --help" ;;
	esac
done
[[ "$win" =~ ^[1-9][0-9]*$ ]] || die "-w wants whole seconds, got '$win'"
[[ "$settle" =~ ^[1-9][0-9]*$ ]] || die "-s wants whole seconds, got '$settle'"
[[ "$boots" =~ ^[1-9]$ ]] || die "-b wants a count from 1 to 9, got '$boots'"
[[ "$sym" =~ ^[A-Za-z0-9_.]+$ ]] || die "-e wants a kernel symbol, got '$sym'"
for img in "$stock" "$patched"; do
	[ -n "$img" ] || die "both --stock and --patched are needed" "two bzImages, e.g. from make vmtest-kernel"
	[ -f "$img" ] || die "no kernel image '$img'"
done
[ ${#sel[@]} -gt 0 ] || sel=(tap-vhost/64/drop/write/napi-off tap-vhost/64/none/write/napi-off
	tap-vhost/1500/pass/write/napi-off tap-vhost/gso9000/drop/write/napi-off)
for p in "${sel[@]}"; do
	[[ "$p" =~ ^tap-vhost/[a-z0-9]+/[a-z]+/[a-z]+/napi-(on|off)$ ]] ||
		die "'$p' is not one tap-vhost point" "e.g. -p tap-vhost/64/drop/write/napi-off (no globs)"
done
out=${out:-/tmp/$me-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"

make -s all build/xdplab-bench build/bench/cache_model.so build/bench/insns_mark >/dev/null
plugin=$(pwd)/build/bench/cache_model.so
mark_addr=$(make -s --no-print-directory print-insns-mark-addr)

# The guest: kallsyms, the mark that switches the model on, then per
# point the bench in the background and, once it has settled, two
# windows back to back. Nothing is printed inside a window (the console
# is costly work of its own): the marks' lines and the bench's JSON go
# out at the end.
g="set -u; m=build/bench/insns_mark; d=/tmp/$me; mkdir -p \$d;"
g+=" echo XDPLAB-KALLSYMS-BEGIN; grep ' [tTwW] ' /proc/kallsyms | gzip -1 | base64 -w0; echo; echo XDPLAB-KALLSYMS-END;"
g+=" b() { build/xdplab-bench -p \"\$1\" --no-baselines -r 1 -d \$2 --no-plot -o \$d/\$3 >\$d/\$3.log 2>&1 || echo \"FAILED \$3\" >>\$d/failed; };"
g+=" \$m lo 1 arm >>\$d/marks;"
i=0
for p in "${sel[@]}"; do
	g+=" b '$p' $((settle + 2 * win + 1)) $i & sleep $settle; \$m lo $win $i.a >>\$d/marks; \$m lo $win $i.b >>\$d/marks; wait;"
	i=$((i + 1))
done
g+=" echo XDPLAB-CM-MARKS; cat \$d/marks; echo XDPLAB-CM-END;"
g+=" for j in \$(seq 0 $((i - 1))); do echo \"XDPLAB-CM-JSON \$j\"; cat \$d/\$j/results.json; echo XDPLAB-CM-END; done;"
g+=" [ ! -e \$d/failed ] || { cat \$d/failed \$d/*.log; exit 1; }"

runs=()
for b in $(seq 1 "$boots"); do
	order="stock patched"
	[ $((b % 2)) = 1 ] || order="patched stock"
	for k in $order; do
		img=$stock
		[ "$k" = stock ] || img=$patched
		run=$k-$b
		echo "$me: $k kernel, boot $b of $boots ($img), ${#sel[@]} point(s) under the cache model, log: $out/$run.log" >&2
		rm -f "$out/$run.cm".*
		# boot.sh itself, not make vmtest: make would expand the $ in CMD
		if ! CACHE_MODEL_OUT=$out/$run.cm CACHE_MODEL_MARK=$mark_addr VMTEST_PLUGIN=$plugin \
			VMTEST_SMP=1 VMTEST_ICOUNT=3 VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-3600} CMD="$g" \
			vmtest/boot.sh --label "$me $run" "$img" >"$out/$run.log" 2>&1; then
			tail -n 20 "$out/$run.log" >&2
			die "the $run guest failed" "see $out/$run.log"
		fi
		awk '/XDPLAB-KALLSYMS-BEGIN/ {f = 1; next} /XDPLAB-KALLSYMS-END/ {f = 0} f' "$out/$run.log" |
			tr -d '\r\n' | base64 -d | gunzip >"$out/$run.kallsyms" ||
			die "no kallsyms in the $run guest's output" "see $out/$run.log"
		[ -s "$out/$run.cm.1" ] || die "the plugin wrote no snapshot for $run" "see $out/$run.log"
		# the log without the kallsyms blob, which is in $run.kallsyms now
		awk '/XDPLAB-KALLSYMS-BEGIN/ {f = 1; print "(kallsyms: '"$run"'.kallsyms)"; next}
			/XDPLAB-KALLSYMS-END/ {f = 0; next} !f' "$out/$run.log" >"$out/$run.log.tmp" &&
			mv "$out/$run.log.tmp" "$out/$run.log"
		runs+=("$run")
	done
done

repro=()
for p in "${sel[@]}"; do
	repro+=("bench/$me.sh -p $p -w $win -s $settle --stock $stock --patched $patched")
done
python3 - "$out" "$sym" "$win" "bench/$me.sh $(printf "%q " "${argv[@]}")" "${runs[*]}" "${repro[@]}" <<'PY' | tee "$out/table.md"
import bisect, collections, json, sys
out, sym, win, cmd, runs, repro = (sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].strip(),
                                   sys.argv[5].split(), sys.argv[6:])

def sections(log, start):
    """{name: text} of the lines between 'START name' and XDPLAB-CM-END."""
    res, cur, name = {}, None, None
    for l in open(log, errors="replace"):
        l = l.replace("\r", "").rstrip("\n")
        if l.startswith(start):
            name, cur = l[len(start):].strip(), []
        elif l.startswith("XDPLAB-CM-END") and cur is not None:
            res[name] = "\n".join(cur)
            cur = None
        elif cur is not None:
            cur.append(l)
    return res

def snapshot(run, n):
    c, entries, locked = {}, {}, {}
    for l in open(f"{out}/{run}.cm.{n}"):
        f = l.split()
        if f[0] == "tb":
            a = int(f[1], 16)
            entries[a] = entries.get(a, 0) + int(f[2])
        elif f[0] == "lk":
            a = int(f[1], 16)
            locked[a] = locked.get(a, 0) + int(f[3])
        elif len(f) == 2:
            c[f[0]] = int(f[1])
    return c, entries, locked

# every window: (kernel, boot, point index, window, counters a window, frames, ns, bench kpps)
wins, cfg = [], None
for run in runs:
    k, boot = run.rsplit("-", 1)
    syms = sorted((int(a, 16), n) for a, t, n, *_ in (l.split() for l in open(f"{out}/{run}.kallsyms")))
    addr = next((a for a, n in syms if n == sym), None)
    starts = [a for a, _ in syms]
    fn = lambda a: syms[bisect.bisect_right(starts, a) - 1][1]
    if addr is None:
        sys.exit(f"cache_model: no {sym} in the {run} kernel's kallsyms")
    if cfg is None:
        cfg = dict(l.split(None, 1) for l in open(f"{out}/{run}.cm.1") if l.split()[0] in ("l1d", "l1i", "l2", "line"))
    log = f"{out}/{run}.log"
    marks = [l.split() for l in sections(log, "XDPLAB-CM-MARKS").get("", "").splitlines()
             if l.startswith("WINDOW ")]
    jsons = sections(log, "XDPLAB-CM-JSON ")
    for j, m in enumerate(marks, 1):     # mark line j wrote snapshots 2j-1 and 2j
        if m[1] == "arm":
            continue
        i, w = m[1].split(".")
        (c0, e0, l0), (c1, e1, l1) = snapshot(run, 2 * j - 1), snapshot(run, 2 * j)
        d = {n: c1[n] - c0[n] for n in c1}
        lf = collections.Counter()
        for a, r in l1.items():
            lf[fn(a)] += r - l0.get(a, 0)
        sc = json.loads(jsons[i])["scenarios"][0]
        p = sc["points"][0]
        ns = int(dict(x.split("=") for x in m[2:])["ns"])
        wins.append(dict(k=k, boot=int(boot), i=int(i), w=w, point=p["id"], c=d,
                         frames=e1.get(addr, 0) - e0.get(addr, 0), ns=ns, locked=lf,
                         kpps=p["metrics"]["kpps"]["samples"][0]))

metrics = [
    ("kernel L1d misses", lambda c: c["k_l1d_misses"], 2),
    ("kernel L1i misses", lambda c: c["k_l1i_misses"], 2),
    ("kernel L2 misses", lambda c: c["k_l2_data_misses"] + c["k_l2_insn_misses"], 3),
    ("kernel locked instructions", lambda c: c["k_locked_lock_prefix"] + c["k_locked_ds_patched"] + c["k_locked_xchg"], 2),
    ("kernel instructions", lambda c: c["k_insns"], 0),
    ("kernel L1d accesses", lambda c: c["k_l1d_accesses"], 0),
    ("kernel L2 data misses", lambda c: c["k_l2_data_misses"], 3),
    ("kernel L2 instruction misses", lambda c: c["k_l2_insn_misses"], 3),
    ("user L1d + L1i misses", lambda c: c["u_l1d_misses"] + c["u_l1i_misses"], 2),
]

def per_frame(ws, f):
    fr = sum(w["frames"] for w in ws)
    return sum(f(w["c"]) for w in ws) / fr if fr else float("nan")

print(f"Cache model: bench/tcg/cache_model.c, L1d {cfg['l1d'].split()[0]} B {cfg['l1d'].split()[1]}-way, "
      f"L1i {cfg['l1i'].split()[0]} B {cfg['l1i'].split()[1]}-way (per vCPU), L2 {cfg['l2'].split()[0]} B "
      f"{cfg['l2'].split()[1]}-way (shared), {cfg['line'].strip()}-byte lines, LRU, physically indexed; "
      f"1-vCPU guests under -icount shift=3; runs (boot order): {', '.join(runs)}; in each, two windows "
      f"of {win} s inside one sample of each point. A cell: all windows' counts / all their frames "
      f"({sym} entries), then each window's own value in boot order.\n")
for i, cmd1 in enumerate(repro):
    ws = {k: [w for w in wins if w["i"] == i and w["k"] == k] for k in ("stock", "patched")}
    print(f"### {ws['stock'][0]['point']}\n")
    for k in ws:
        fr = ", ".join(f"{w['frames']} ({w['frames'] / (w['ns'] / 1e9) / 1e3:.2f} kpps; bench {w['kpps']:.2f})"
                       for w in ws[k])
        print(f"- {k} frames a window: {fr}")
    print("\n| a frame | stock | patched | patched / stock |\n|---|---:|---:|---:|")
    for name, f, nd in metrics:
        a, b = per_frame(ws["stock"], f), per_frame(ws["patched"], f)
        cell = lambda v, ww: f"{v:.{nd}f} (" + ", ".join(f"{f(w['c']) / w['frames']:.{nd}f}" for w in ww) + ")"
        print(f"| {name} | {cell(a, ws['stock'])} | {cell(b, ws['patched'])} | "
              f"{(f'{b / a:.3f}' if a else 'n/a')} |")
    lk = lambda ww: " + ".join(f"{per_frame(ww, lambda c, n=n: c[n]):.2f}" for n in
                               ("k_locked_lock_prefix", "k_locked_ds_patched", "k_locked_xchg"))
    print(f"\nlocked instructions = lock prefix + LOCK_PREFIX sites a 1-CPU kernel patched to ds + "
          f"xchg with memory: stock {lk(ws['stock'])}, patched {lk(ws['patched'])}\n")
    lpf = {k: collections.Counter() for k in ws}
    for k in ws:
        fr = sum(w["frames"] for w in ws[k])
        for w in ws[k]:
            for n, r in w["locked"].items():
                lpf[k][n] += r / fr
    diff = sorted(((lpf["patched"][n] - lpf["stock"][n], n) for n in set(lpf["stock"]) | set(lpf["patched"])),
                  key=lambda x: (x[0], x[1]))
    diff = [x for x in diff if abs(x[0]) >= 0.05]
    if diff:
        print("| kernel locked instructions a frame, by function | stock | patched | patched - stock |\n|---|---:|---:|---:|")
        for dl, n in diff:
            print(f"| `{n}` | {lpf['stock'][n]:.2f} | {lpf['patched'][n]:.2f} | {dl:+.2f} |")
        print(f"\n(functions differing by 0.05 or more)\n")
    print(f"reproduce: `{cmd1}`\n")
print(f"run: `{cmd}`")
names = sorted(wins[0]["c"])
with open(f"{out}/windows.tsv", "w") as f:
    f.write("kernel\tboot\tpoint\twindow\tframes\tns\tbench_kpps\t" + "\t".join(names) + "\n")
    for w in wins:
        f.write(f"{w['k']}\t{w['boot']}\t{w['point']}\t{w['w']}\t{w['frames']}\t{w['ns']}\t{w['kpps']}\t" +
                "\t".join(str(w["c"][n]) for n in names) + "\n")
PY
if [ "$keep" = 0 ]; then
	for f in "$out"/*.cm.[0-9]*; do
		case $f in *.counters) continue ;; esac
		grep -v '^tb ' "$f" >"$f.counters" && rm -f "$f"
	done
fi
echo "$me: results in $out (table.md, windows.tsv, logs, kallsyms)" >&2
