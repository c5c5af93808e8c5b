#!/usr/bin/env bash
# Boot a kernel under QEMU with the host's / as the guest's read-only root
# (virtio-9p), run one command in it through vmtest/init.sh, and exit with
# the command's exit status. Fails too when the guest's kernel log shows a
# WARN, BUG, KASAN, lockdep or kmemleak report, a sleep in atomic context,
# or when the guest hangs.
#
#   vmtest/boot.sh [options] KERNEL_IMAGE
#     --initrd FILE      initramfs to boot first (Debian's modular kernels)
#     --moddir DIR       modprobe -d DIR in the guest (unpacked modules)
#     --modules "a b"    modules to load in the guest before the command
#     --interactive      a shell on the console instead of a command
#     --label TEXT       what to call this kernel in messages
#
#   Environment: CMD (the command, run with bash -c in the checkout),
#   VMTEST_ARCH (x86_64), VMTEST_TIMEOUT (seconds, default 1800; 0 = none),
#   VMTEST_MEM (MiB, default 2048), VMTEST_SMP (default 2), XDPLAB_KVM
#   (auto, 0 or 1; see vmtest/kvm.sh), VMTEST_ICOUNT (TCG only: the
#   guest's clock counts instructions, 2^N ns each, see vmtest/README.md),
#   VMTEST_TCG_THREAD (multi, the default, or single: all vCPUs on one
#   host thread; see vmtest/README.md, Known problems),
#   VMTEST_VERBOSE=1 (show the boot log; by default kernel messages before
#   the command starts are only logged), VMTEST_APPEND (more kernel
#   command-line arguments), XDPLAB_CACHE.
#   The GEM board (arm64) only: VMTEST_GEM_FILES (a directory copied into
#   the guest's initramfs at the same path: the board's root is not the
#   host's), VMTEST_GEM_TESTER (a host build of the kernel's xdp_features:
#   serve it as the tester on the tap, vmtest/gem-tester.sh),
#   VMTEST_GEM_QEMU (patched, the default: Debian's QEMU with
#   vmtest/qemu/*.patch; system: Debian's binary as it is; or a path),
#   VMTEST_GEM_PHY=1 (GEM0 gets the emulated PHY on its MDIO bus instead
#   of the machine's fixed link, so that QMP set_link reaches phylink).
#   The board's QEMU has a QMP socket, <run>/qmp.sock, and the guest can
#   ask the host for a DMA bus error or a link change through the control
#   service (vmtest/gem-control.sh, XDPLAB_GEM_CONTROL in the guest).
#
# The console log is kept in <cache>/runs/<time>-<pid>/console.log;
# <cache>/runs/latest points at the newest run.
set -euo pipefail
. "$(dirname "$0")/common.sh"

initrd="" moddir="" modules="" interactive=0 label=""
while [ $# -gt 1 ]; do
	case "$1" in
	--initrd) initrd=$2; shift 2 ;;
	--moddir) moddir=$2; shift 2 ;;
	--modules) modules=$2; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--label) label=$2; shift 2 ;;
	*) die "boot.sh: unknown option $1" ;;
	esac
done
[ $# -eq 1 ] || die "usage: vmtest/boot.sh [--initrd F] [--moddir D] [--modules L] [--interactive] [--label T] KERNEL_IMAGE"
kernel=$1
[ -r "$kernel" ] || die "no kernel image at $kernel"
label=${label:-$kernel}

arch=$(norm_arch "${VMTEST_ARCH:-x86_64}")
timeout=${VMTEST_TIMEOUT:-1800}
mem=${VMTEST_MEM:-2048}
smp=${VMTEST_SMP:-2}
cmd=${CMD:-}
[ "$interactive" = 1 ] || [ -n "$cmd" ] || die "nothing to run" "give CMD='...' (or use make vmshell)"
[[ "$timeout" =~ ^[0-9]+$ ]] || die "VMTEST_TIMEOUT=$timeout: expected seconds"
icount=${VMTEST_ICOUNT:-}
[[ "$icount" =~ ^([0-9]|10)?$ ]] || die "VMTEST_ICOUNT=$icount: expected a shift from 0 to 10" "e.g. VMTEST_ICOUNT=3: 8 ns of guest time an instruction"

cache=$(cache_dir)
mkdir -p "$cache/runs"
# Keep the newest 30 run directories.
{ ls -1dt "$cache/runs"/2*/ 2>/dev/null || true; } | tail -n +30 | xargs -r rm -rf
run=$(mktemp -d "$cache/runs/$(date +%Y%m%d-%H%M%S)-XXXX")
ln -sfn "$run" "$cache/runs/latest"
log=$run/console.log

{
	printf 'XDPLAB_CWD=%q\n' "$(pwd)"
	printf 'XDPLAB_CMD=%q\n' "$cmd"
	printf 'XDPLAB_INTERACTIVE=%q\n' "$interactive"
	printf 'XDPLAB_MODDIR=%q\n' "$moddir"
	printf 'XDPLAB_MODULES=%q\n' "$modules"
	printf 'XDPLAB_ROWS=%q\nXDPLAB_COLS=%q\n' "$(tput lines 2>/dev/null || echo 24)" "$(tput cols 2>/dev/null || echo 80)"
	[ -z "${XDPLAB_KSRC:-}" ] || printf 'export XDPLAB_KSRC=%q\n' "$XDPLAB_KSRC"
} >"$run/guest.env"

# KVM only where vmtest/kvm.sh shows it boots a kernel; TCG otherwise.
accel_mode=$(VMTEST_ARCH=$arch "$VMTEST_DIR/kvm.sh" "$kernel")
case "$accel_mode" in
kvm) accel=(-accel kvm -cpu host) stall_opts="" ;;
# A TCG vCPU can stay descheduled on a loaded host for longer than RCU's
# 21 s: a debug kernel's boot (stop_machine for the clocksource) reported
# stalls that were only the emulator. 120 s still catches a real hang,
# and a stall report fails the run (splat_re below).
*) accel=(-accel tcg -cpu max) stall_opts="rcupdate.rcu_cpu_stall_timeout=120" ;;
esac

root_opts="root=root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose ro"
init=$VMTEST_DIR/init.sh
case "$arch" in
x86_64)
	qemu=qemu-system-x86_64
	machine=(-M pc)
	console=ttyS0
	# TCG's TSC is steady; the clocksource watchdog only adds noise.
	extra="tsc=reliable"
	virtio=pci
	;;
arm64)
	# The emulated Cadence GEM board. Its CPUs are fixed (two A72; QEMU
	# counts the two R5s too, hence at least 4); virtio is virtio-mmio.
	# Debian's source with the GEM model's RX fix (vmtest/qemu-gem.sh):
	# built on first use, cached.
	qemu=$("$VMTEST_DIR/qemu-gem.sh")
	machine=(-M xlnx-versal-virt)
	console=ttyAMA0
	extra=""
	virtio=device
	accel=(-accel tcg)  # kvm.sh said tcg: the host is not arm64
	[ "$smp" -ge 4 ] 2>/dev/null || smp=4
	[ -z "$initrd" ] || die "boot.sh --initrd: the arm64 board brings its own initramfs"
	[ "$interactive" = 0 ] || die "no interactive shell on the arm64 board yet" "use CMD='...'"
	;;
esac
# Deterministic guest time: the clock advances 2^icount ns per instruction
# executed (idle skips to the next timer), so rates measured in the guest
# are per instruction, whatever the host's load. TCG only.
# QEMU 7.2's multi-threaded TCG (a host thread per vCPU) can let one vCPU
# run a stale int3 of the kernel's text_poke_bp() when another re-patches
# the BPF dispatcher (any XDP attach/detach) under traffic: "Oops: int3"
# at bpf_dispatcher_xdp_func. thread=single runs the vCPUs in turn on one
# host thread: no such race, and slower.
tcg_thread=${VMTEST_TCG_THREAD:-multi}
case "$tcg_thread" in
multi) ;;
single) if [ "${accel[1]}" = tcg ]; then accel[1]=tcg,thread=single; fi ;;
*) die "VMTEST_TCG_THREAD=$tcg_thread: expected multi or single" "single avoids the emulator's dispatcher race (vmtest/README.md)" ;;
esac
if [ -n "$icount" ]; then
	[[ "${accel[1]}" == tcg* ]] || die "VMTEST_ICOUNT needs TCG, this guest runs under ${accel[1]}" "add XDPLAB_KVM=0"
	accel+=(-icount "shift=$icount,sleep=on")
fi
# A TCG plugin that watches the guest run (bench/insn_profile.sh).
plugin=${VMTEST_PLUGIN:-}
if [ -n "$plugin" ]; then
	[[ "${accel[1]}" == tcg* ]] || die "VMTEST_PLUGIN needs TCG, this guest runs under ${accel[1]}" "add XDPLAB_KVM=0"
	[ -f "$plugin" ] || die "VMTEST_PLUGIN=$plugin: no such file" "build it first, e.g. make build/bench/tb_insns.so"
	accel+=(-plugin "$(realpath "$plugin")")
fi
command -v "$qemu" >/dev/null || die "$qemu not found" "run 'scripts/deps.sh vm'"

append="console=$console ${extra:-} $stall_opts $root_opts init=$init panic=-1 printk.time=1 mitigations=off dummy.numdummies=0 xdplab_cache=$cache xdplab_run=$run"
# With an initramfs its /init mounts the 9p root and execs our init.
[ -z "$initrd" ] || append="console=$console ${extra:-} $stall_opts $root_opts rdinit=/init xdplab_init=$init panic=-1 printk.time=1 mitigations=off dummy.numdummies=0 xdplab_cache=$cache xdplab_run=$run"

qargs=("$qemu" "${machine[@]}" "${accel[@]}" -m "$mem" -smp "$smp"
	-nodefaults -no-user-config -no-reboot -display none
	-kernel "$kernel"
	# The working directory on its own: below /tmp, /run or /var/tmp
	# the guest's tmpfs mounts would hide it (init.sh).
	-fsdev "local,id=work,path=$(pwd),security_model=none,readonly=on,multidevs=remap"
	-device "virtio-9p-$virtio,fsdev=work,mount_tag=work")
if [ "$arch" = x86_64 ]; then
	qargs+=(-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap
		-device virtio-9p-pci,fsdev=root,mount_tag=root
		# And the cache, which holds this run's guest.env (and Debian's
		# modules): XDPLAB_CACHE=/tmp/... would be hidden the same way.
		# (The arm64 board carries guest.env in its initramfs.)
		-fsdev "local,id=cache,path=$cache,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=cache,mount_tag=cache)
	[ -z "$initrd" ] || qargs+=(-initrd "$initrd")
fi

# The board: GEM0 on a tap in a network namespace of its own on the host,
# addressed, MTU 9000, with an iperf3 server; the guest learns the addresses
# from guest.env (init.sh brings the GEM up). Removed at exit, whatever
# happens; QEMU runs inside that namespace to open the tap.
gem_ns="" iperf_pid=""
cleanup() {
	[ -z "$iperf_pid" ] || kill "$iperf_pid" 2>/dev/null || true
	if [ -n "$gem_ns" ]; then
		# Whatever else still runs in the board's namespace, all of it
		# started here: the tester service and a tester it ran, QEMU
		# after a Ctrl-C. A process left inside would keep the tap.
		for p in $(ip netns pids "$gem_ns" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
		# xdp_features ends its run on SIGTERM by itself (detaching
		# from the tap): give it 5 s, then SIGKILL what is left.
		for _ in $(seq 50); do
			[ -n "$(ip netns pids "$gem_ns" 2>/dev/null)" ] || break
			sleep 0.1
		done
		for p in $(ip netns pids "$gem_ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
		ip netns del "$gem_ns" 2>/dev/null || true
	fi
	rm -f "$run/initrd.cpio" "$run/qmp.sock"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
netns=()
if [ "$arch" = arm64 ]; then
	gem_peer=10.77.0.1 gem_addr=10.77.0.2/24 gem_mac=02:00:00:77:00:02 tap=gemtap0
	command -v iperf3 >/dev/null || die "iperf3 not found (the GEM's peer runs a server)" "run 'scripts/deps.sh base'"
	gem_ns=xdplab-gem-$$
	ip netns add "$gem_ns" || { gem_ns=""; die "cannot create network namespace xdplab-gem-$$" "run as root"; }
	ip -n "$gem_ns" link set lo up
	ip -n "$gem_ns" tuntap add dev "$tap" mode tap
	ip -n "$gem_ns" link set "$tap" mtu 9000 up
	ip -n "$gem_ns" addr add "$gem_peer/24" dev "$tap"
	ip netns exec "$gem_ns" iperf3 -s -D -B "$gem_peer" --pidfile "$run/iperf3.pid" >/dev/null ||
		die "iperf3 -s did not start in $gem_ns"
	for _ in $(seq 50); do [ -s "$run/iperf3.pid" ] && break; sleep 0.1; done
	iperf_pid=$(cat "$run/iperf3.pid" 2>/dev/null || true)
	netns=(ip netns exec "$gem_ns")
	# The netdev has a name for QMP's set_link (gem-control.sh).
	gem_netdev=gemnet0
	qargs+=(-nic "tap,id=$gem_netdev,ifname=$tap,script=no,downscript=no,mac=$gem_mac")
	# A QMP socket in the run directory: the control service's way to
	# the emulated GEM (and a person's, with socat or qmp-shell).
	qargs+=(-qmp "unix:$run/qmp.sock,server=on,wait=off")
	# QEMU's DT gives both GEMs a fixed link: phylink never looks at a
	# PHY and the carrier only follows ip link set up/down. With
	# VMTEST_GEM_PHY=1 GEM0 gets the GEM model's own PHY (address 23,
	# on the GEM's MDIO bus) instead: phylib polls it once a second and
	# a QMP set_link reaches phylink as a link change.
	if [ "${VMTEST_GEM_PHY:-0}" = 1 ]; then
		command -v fdtput >/dev/null || die "fdtput not found (VMTEST_GEM_PHY=1 edits the board's DT)" "run 'scripts/deps.sh vm-arm64'"
		dtb=$run/board.dtb gem_node=/ethernet@ff0c0000
		"$qemu" "${machine[@]}" -machine "dumpdtb=$dtb" -accel tcg -m "$mem" -smp "$smp" -kernel "$kernel" \
			-nodefaults -no-user-config -display none >"$run/dumpdtb.log" 2>&1 ||
			die "could not dump the board's DT ($run/dumpdtb.log)"
		phandle=$(fdtget -t u "$dtb" "$gem_node/fixed-link" phandle) &&
			fdtput -r "$dtb" "$gem_node/fixed-link" &&
			fdtput -c "$dtb" "$gem_node/mdio" "$gem_node/mdio/ethernet-phy@17" &&
			fdtput -t u "$dtb" "$gem_node/mdio" '#address-cells' 1 &&
			fdtput -t u "$dtb" "$gem_node/mdio" '#size-cells' 0 &&
			fdtput -t u "$dtb" "$gem_node/mdio/ethernet-phy@17" reg 23 &&
			fdtput -t u "$dtb" "$gem_node/mdio/ethernet-phy@17" phandle "$phandle" ||
			die "could not give $gem_node a PHY in $dtb"
		qargs+=(-dtb "$dtb")
	fi
	{
		printf 'export XDPLAB_GEM_PEER=%q XDPLAB_GEM_ADDR=%q XDPLAB_GEM_MAC=%q\n' \
			"$gem_peer" "$gem_addr" "$gem_mac"
	} >>"$run/guest.env"
	# The kernel's xdp_features needs a tester at the other end of the
	# wire: a TCP service on the peer's address that runs it on the tap
	# for the feature the guest's DUT asks for (make kselftest ARCH=arm64).
	if [ -n "${VMTEST_GEM_TESTER:-}" ]; then
		[ -x "$VMTEST_GEM_TESTER" ] || die "VMTEST_GEM_TESTER=$VMTEST_GEM_TESTER: no such program" \
			"give a host build of xdp_features (vmtest/kselftest-gem-build.sh makes one)"
		command -v socat >/dev/null || die "socat not found (the GEM's xdp_features tester service)" "run 'scripts/deps.sh kselftest'"
		tester_port=7410
		"${netns[@]}" socat TCP-LISTEN:"$tester_port",bind="$gem_peer",reuseaddr,fork \
			EXEC:"$VMTEST_DIR/gem-tester.sh $VMTEST_GEM_TESTER $tap $gem_peer ${gem_addr%/*}" \
			>"$run/tester.log" 2>&1 </dev/null &
		listening=0
		for _ in $(seq 50); do
			ip netns exec "$gem_ns" ss -Htln "sport = :$tester_port" | grep -q . && { listening=1; break; }
			sleep 0.1
		done
		[ "$listening" = 1 ] || die "the xdp_features tester service did not listen in $gem_ns (log: $run/tester.log)"
		printf 'export XDPLAB_GEM_TESTER=%q\n' "$gem_peer:$tester_port" >>"$run/guest.env"
	fi
	# The control service: the guest asks for a DMA bus error on the GEM
	# or a link change (vmtest/gem-control.sh), QEMU does it through QMP.
	if command -v socat >/dev/null; then
		control_port=7411
		"${netns[@]}" socat TCP-LISTEN:"$control_port",bind="$gem_peer",reuseaddr,fork \
			EXEC:"$VMTEST_DIR/gem-control.sh $run/qmp.sock /machine/xlnx-versal/gem0 $gem_netdev" \
			>"$run/control.log" 2>&1 </dev/null &
		listening=0
		for _ in $(seq 50); do
			ip netns exec "$gem_ns" ss -Htln "sport = :$control_port" | grep -q . && { listening=1; break; }
			sleep 0.1
		done
		[ "$listening" = 1 ] || die "the GEM control service did not listen in $gem_ns (log: $run/control.log)"
		printf 'export XDPLAB_GEM_CONTROL=%q\n' "$gem_peer:$control_port" >>"$run/guest.env"
	else
		log "socat not found: no GEM control service (the macb_hresp tests skip); run 'scripts/deps.sh vm-arm64'"
	fi
	# The initramfs: the cached Debian userland, then this run's init.sh
	# and settings (the kernel unpacks concatenated archives in order).
	rootfs=$("$VMTEST_DIR/rootfs.sh" arm64)
	mkdir -p "$run/initrd/xdplab/run"
	cp "$VMTEST_DIR/init.sh" "$run/initrd/xdplab/init.sh"
	if [ -n "${VMTEST_GEM_FILES:-}" ]; then
		[ -d "$VMTEST_GEM_FILES" ] || die "VMTEST_GEM_FILES=$VMTEST_GEM_FILES: not a directory"
		mkdir -p "$run/initrd$VMTEST_GEM_FILES"
		cp -a "$VMTEST_GEM_FILES/." "$run/initrd$VMTEST_GEM_FILES/"
	fi
	cp "$run/guest.env" "$run/initrd/xdplab/run/"
	(cd "$run/initrd" && find . | cpio -o -H newc --quiet) >"$run/extra.cpio"
	cat "$rootfs/rootfs.cpio" "$run/extra.cpio" >"$run/initrd.cpio"
	rm -rf "$run/initrd" "$run/extra.cpio"
	qargs+=(-initrd "$run/initrd.cpio")
	append="console=$console $stall_opts rdinit=/init panic=-1 printk.time=1 dummy.numdummies=0 xdplab_run=/xdplab/run"
fi
[ -z "${VMTEST_APPEND:-}" ] || append="$append $VMTEST_APPEND"
qargs+=(-append "$append")
echo "${netns[*]} ${qargs[*]}" >"$run/qemu.cmdline"

t0=$EPOCHREALTIME
if [ "$interactive" = 1 ]; then
	log "booting $label (interactive; log: $log)"
	qargs+=(-chardev "stdio,id=con,mux=on,signal=off,logfile=$log"
		-serial chardev:con -mon chardev=con,mode=readline)
	set +e
	"${qargs[@]}"
	set -e
	exit 0
fi

log "booting $label under ${accel[1]}${icount:+ with -icount shift=$icount} (timeout ${timeout}s; log: $log)"
qargs+=(-serial stdio -monitor none)
# Show the guest from the start marker on (everything with VMTEST_VERBOSE=1)
# and say how long the boot took.
show() {
	local line started=${VMTEST_VERBOSE:-0}
	while IFS= read -r line; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$log"
		if [[ "$line" == XDPLAB-VMTEST-START* ]]; then
			printf 'vmtest: guest up in %.1f s: %s\n' "$(echo "$EPOCHREALTIME - $t0" | bc)" "${line#XDPLAB-VMTEST-START }" >&2
			started=1
			continue
		fi
		[ "$started" = 0 ] || printf '%s\n' "$line"
		# An oops inside the oops handler leaves the guest wedged, not
		# rebooted (panic=-1 covers panics only): stop it now instead of
		# letting TCG spin until the timeout, up to an hour.
		if [[ "$line" == *"Fixing recursive fault but reboot is needed"* ]] && [ ! -e "$run/wedged" ]; then
			: >"$run/wedged"
			pkill -f -- "qemu-system-[^ ]* .*$run" || true
		fi
	done
}
set +e
if [ "$timeout" = 0 ]; then
	${netns[@]+"${netns[@]}"} "${qargs[@]}" </dev/null 2>&1 | show
	qrc=${PIPESTATUS[0]}
else
	timeout -k 10 "$timeout" ${netns[@]+"${netns[@]}"} "${qargs[@]}" </dev/null 2>&1 | show
	qrc=${PIPESTATUS[0]}
fi
set -e
elapsed=$(printf '%.1f' "$(echo "$EPOCHREALTIME - $t0" | bc)")
if [ -n "$gem_ns" ]; then
	# What the host's end saw (an XDP_TX test's reflected frames arrive here).
	ip -n "$gem_ns" -s link show "$tap" >"$run/tap.stats" 2>&1 || true
	log "host tap $tap: $(awk '/RX:/ {getline; rx=$2} /TX:/ {getline; tx=$2} END {print "received " rx ", sent " tx " packets"}' "$run/tap.stats")"
fi

# The atomic-context reports (RT=1, DEBUG=1) are named on their own although
# they start with "BUG:" today: they are what RT=1 is for.
splat_re='^\[ *[0-9]+\.[0-9]+\].*(WARNING:|BUG:|KASAN|possible circular locking|possible recursive locking|suspected memory leak|Oops|Kernel panic|UBSAN:|general protection fault|detected stalls? on CPU|soft lockup|blocked for more than [0-9]+ seconds|sleeping function called from invalid context|scheduling while atomic|Invalid wait context)'
splats=$(grep -E "$splat_re" "$log" || true)
status=$(grep -oE 'XDPLAB-VMTEST-EXIT=[0-9]+' "$log" | tail -n 1 | cut -d= -f2 || true)

if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	DIE_STATUS=124 die "guest timed out after ${timeout}s and was killed (log: $log)" \
		"raise VMTEST_TIMEOUT=<seconds>, or look at the end of the log for where it hung"
fi
if [ -n "$splats" ]; then
	log "kernel problems in the guest's log:"
	echo "$splats" | head -20 | sed 's/^/vmtest:   /' >&2
fi
if [ -z "$status" ]; then
	tail -n 20 "$log" | sed 's/^/vmtest:   /' >&2
	if [ -e "$run/wedged" ]; then
		die "guest oopsed while handling an oops and was stopped (log: $log)" \
			"the first Oops or BUG in the log is the cause; the run's kernel reports are listed above"
	fi
	if grep -q 'Oops: int3' "$log" && grep -q 'RIP: .*bpf_dispatcher_xdp_func' "$log"; then
		die "guest panicked on a stale int3 in the BPF dispatcher (log: $log)" \
			"a known race of QEMU's multi-threaded TCG with XDP attach/detach under traffic (vmtest/README.md): rerun, or set VMTEST_TCG_THREAD=single"
	fi
	die "guest ended without reporting an exit status (QEMU exit $qrc; crash or panic?; log: $log)" \
		"VMTEST_VERBOSE=1 shows the whole boot"
fi
if [ "$status" != 0 ]; then
	log "FAIL: command exited $status in the guest ($label, ${elapsed}s; log: $log)"
	exit "$status"
fi
if [ -n "$splats" ]; then
	log "FAIL: the command passed but the guest kernel logged the problems above ($label; log: $log)"
	exit 1
fi
log "PASS: command exited 0 in the guest ($label, ${elapsed}s)"
