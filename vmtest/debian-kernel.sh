#!/usr/bin/env bash
# Fetch Debian's prebuilt linux-image-6.1.0-*-amd64-unsigned (the newest the
# apt lists know; the -cloud flavour has no 9p), unpack it into the cache,
# and build the initramfs that loads its virtio and 9p modules. Prints shell
# assignments for vmtest/run.sh:
#
#   DEBIAN_KERNEL   vmlinuz          DEBIAN_INITRD   initramfs (gzip cpio)
#   DEBIAN_MODDIR   modprobe -d dir  DEBIAN_MODULES  modules the guest loads
#   DEBIAN_RELEASE  uname -r
#
# Once a kernel is unpacked it is used without asking apt again; remove
# <cache>/debian/ (or set DEBIAN_REFRESH=1) to look for a newer one.
set -euo pipefail
. "$(dirname "$0")/common.sh"

cache=$(cache_dir)
dir=$cache/debian
mkdir -p "$dir"

# Loaded before the command: what the selftests use that Debian builds as
# modules (request_module() finds the rest through the guest's modprobe).
guest_modules="veth tun dummy vhost_net sch_ingress cls_bpf act_bpf"
# Needed to mount the root: in the initramfs, dependencies resolved below.
root_modules="virtio_pci 9pnet_virtio 9p"

newest_unpacked() {
	local d
	d=$(find "$dir" -mindepth 2 -maxdepth 2 -name .ready -printf '%h\n' 2>/dev/null | sort -V | tail -n 1)
	[ -z "$d" ] || basename "$d"
}

fetch() {
	local pkg deb rel
	pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' 2>/dev/null |
		awk '{print $1}' | sort -V | tail -n 1)
	if [ -z "$pkg" ]; then
		log "no linux-image-6.1.0-*-amd64-unsigned in the apt lists; running apt-get update"
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' |
			awk '{print $1}' | sort -V | tail -n 1)
	fi
	[ -n "$pkg" ] || die "apt knows no linux-image-6.1.0-*-amd64-unsigned package" \
		"check /etc/apt/sources.list for Debian 12 (bookworm) main, then 'apt-get update'"
	rel=${pkg#linux-image-}
	rel=${rel%-unsigned}
	if [ -f "$dir/$rel/.ready" ]; then
		echo "$rel"
		return 0
	fi
	log "downloading $pkg"
	rm -rf "$dir/$rel" "$dir/$rel.tmp"
	mkdir -p "$dir/$rel.tmp"
	(cd "$dir/$rel.tmp" && apt-get download -qq -o APT::Sandbox::User=root "$pkg" >/dev/null) ||
		die "apt-get download $pkg failed" "check the network to the Debian mirror ('apt-get update')"
	deb=$(ls "$dir/$rel.tmp"/*.deb)
	dpkg-deb -x "$deb" "$dir/$rel.tmp/root"
	rm -f "$deb"
	# The package leaves modules.dep to its postinst; make it here.
	depmod -b "$dir/$rel.tmp/root" "$rel"
	touch "$dir/$rel.tmp/.ready"
	mv "$dir/$rel.tmp" "$dir/$rel"
	echo "$rel"
}

rel=""
[ "${DEBIAN_REFRESH:-0}" = 1 ] || rel=$(newest_unpacked)
[ -n "$rel" ] || rel=$(with_lock "$dir/.lock" fetch)
root=$dir/$rel/root
moddir=$root/lib/modules/$rel
kernel=$root/boot/vmlinuz-$rel
[ -r "$kernel" ] || die "$kernel missing" "remove $dir/$rel and run again"

# Dependencies first: a depth-first walk of modules.dep.
declare -A deps seen
while IFS=: read -r mod rest; do
	deps[$mod]=$rest
done <"$moddir/modules.dep"
order=()
visit() {
	local path=$1 d
	[ -z "${seen[$path]:-}" ] || return 0
	seen[$path]=1
	for d in ${deps[$path]}; do visit "$d"; done
	order+=("$path")
}
for m in $root_modules; do
	path=$(awk -F: -v m="/$m.ko" 'index($1, m) && substr($1, length($1) - length(m) + 1) == m {print $1; exit}' "$moddir/modules.dep")
	[ -n "$path" ] || die "module $m not in $rel" "is this a -cloud kernel? use the plain amd64 flavour"
	visit "$path"
done

initrd=$dir/$rel/initramfs.cpio.gz
# Rebuilt when the init script changes.
if [ ! -f "$initrd" ] || [ "$VMTEST_DIR/initramfs-init.sh" -nt "$initrd" ]; then
	t=$(mktemp -d)
	mkdir -p "$t"/{bin,dev,proc,sys,newroot,lib/modules}
	cp /bin/busybox "$t/bin/busybox" || die "no /bin/busybox" "run 'scripts/deps.sh vm' (busybox-static)"
	for a in sh mount umount insmod switch_root poweroff sleep echo; do ln -s busybox "$t/bin/$a"; done
	for p in "${order[@]}"; do
		mkdir -p "$t/lib/modules/$(dirname "$p")"
		cp "$moddir/$p" "$t/lib/modules/$p"
		echo "$p"
	done >"$t/modules.list"
	install -m 755 "$VMTEST_DIR/initramfs-init.sh" "$t/init"
	(cd "$t" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$t"
	log "initramfs for $rel: $(wc -l <<<"$(printf '%s\n' "${order[@]}")") modules, $(du -k "$initrd" | cut -f1) KiB"
fi

printf 'DEBIAN_KERNEL=%q\nDEBIAN_INITRD=%q\nDEBIAN_MODDIR=%q\nDEBIAN_MODULES=%q\nDEBIAN_RELEASE=%q\n' \
	"$kernel" "$initrd" "$root" "$guest_modules" "$rel"
