#!/usr/bin/env bash
# Print the path of the pristine Linux source tree in the cache, extracting
# Debian's linux-source-6.12 tarball and committing it to git (tag
# "pristine") the first time. Patch series are applied in git worktrees of
# this repository (vmtest/patch.sh); this tree itself is never modified.
#
#   vmtest/source.sh            -> prints <cache>/src/linux-<version>
#   LINUX_TARBALL=<file.tar.xz> overrides /usr/src/linux-source-6.12.tar.xz
set -euo pipefail
. "$(dirname "$0")/common.sh"

tarball=${LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
[ -r "$tarball" ] || die "no kernel source tarball at $tarball" \
	"run 'scripts/deps.sh vm' (installs linux-source-6.12), or build another tree with KERNEL_SRC=<dir>"

# The source version names the tree: the Debian package version when the
# tarball is the packaged one, else the tarball's size and mtime.
if [ -z "${LINUX_TARBALL:-}" ]; then
	id=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
		die "linux-source-6.12 is not installed" "run 'scripts/deps.sh vm'"
else
	id=$(basename "$tarball" .tar.xz)-$(stat -c '%s-%Y' "$tarball")
fi
id=${id//[^A-Za-z0-9._-]/-}

cache=$(cache_dir)
src=$cache/src/linux-$id
if [ -f "$src/.xdplab-pristine" ]; then
	echo "$src"
	exit 0
fi

mkdir -p "$cache/src"
extract() {
	[ ! -f "$src/.xdplab-pristine" ] || return 0
	local tmp=$src.tmp t0=$SECONDS
	rm -rf "$tmp" "$src"
	mkdir -p "$tmp"
	log "extracting $tarball into $src"
	tar -xJf "$tarball" -C "$tmp" --strip-components=1 ||
		die "could not extract $tarball" "check free space in $cache (df -h), or move the cache with XDPLAB_CACHE=<dir>"
	log "committing the pristine tree to git"
	(
		cd "$tmp"
		export GIT_AUTHOR_NAME=xdplab GIT_AUTHOR_EMAIL=vmtest@xdplab.invalid \
			GIT_COMMITTER_NAME=xdplab GIT_COMMITTER_EMAIL=vmtest@xdplab.invalid
		git init -q
		git config gc.auto 0
		git config core.untrackedCache true
		git add -A -f  # Debian's tarball ships a .gitignore of "/*"
		git commit -q -m "linux-source $id (pristine)"
		git tag pristine
	) || die "could not commit the kernel source to git in $tmp" "check that git works and that $cache has space"
	# Marker outside git's view, so the tree stays "clean" for kbuild.
	echo "$id" >"$tmp/.git/xdplab-id"
	touch "$tmp/.xdplab-pristine"
	echo "/.xdplab-pristine" >>"$tmp/.git/info/exclude"
	mv "$tmp" "$src"
	log "source ready in $((SECONDS - t0)) s"
}
with_lock "$cache/src/.lock" extract
echo "$src"
