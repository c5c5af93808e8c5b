#!/usr/bin/env bash
# Bring a kernel tree to "pristine + the selected patch series" and print its
# path. The caller (vmtest/build.sh) holds the tree's lock.
#
#   vmtest/patch.sh SRC SELECTION PATCHDIR
#
# SRC is the pristine git tree from vmtest/source.sh; SELECTION is "none",
# "all" or drivers separated by commas or spaces ("veth,tun"); PATCHDIR holds
# one <driver>/ directory of `git format-patch` files per driver.
#
# All selections share one git worktree (<cache>/trees/<source>-work), and
# the build directories (one per arch and DEBUG flavour) share it too: on a
# 2-core machine switching PATCHES=none to all and back must cost an
# incremental build, not a cold one. When the series to apply differ from
# what the tree holds, it is reset to the pristine commit (dropping anything
# done in it by hand) and the series re-applied with `git am`; files whose
# content came out the same get their old mtime back, so make rebuilds only
# what the change really touched.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 3 ] || die "usage: vmtest/patch.sh SRC SELECTION PATCHDIR"
src=$1 sel=$2 patchdir=$3

drivers=$("$VMTEST_DIR/series.sh" drivers "$sel")
applied=$("$VMTEST_DIR/series.sh" applied "$sel" "$patchdir")
mapfile -t patches < <("$VMTEST_DIR/series.sh" files "$sel" "$patchdir")
want=$("$VMTEST_DIR/series.sh" hash "$sel" "$patchdir")

cache=$(cache_dir)
name=$(basename "$src")-work
tree=$cache/trees/$name
state=$cache/trees/$name.applied

if [ ! -e "$tree/.git" ]; then
	mkdir -p "$cache/trees"
	log "creating worktree $tree"
	with_lock "$src.lock" git -C "$src" worktree add -q --detach "$tree" pristine ||
		die "could not create a worktree of $src at $tree" "remove $tree and run again"
	rm -f "$state"
fi

# Same series as last time: leave the tree alone, with whatever a developer
# committed or edited in it since.
if [ -f "$state" ] && [ "$(cat "$state")" = "$want" ]; then
	echo "$tree"
	exit 0
fi

export GIT_AUTHOR_NAME=xdplab GIT_AUTHOR_EMAIL=vmtest@xdplab.invalid \
	GIT_COMMITTER_NAME=xdplab GIT_COMMITTER_EMAIL=vmtest@xdplab.invalid
cd "$tree"
rm -f "$state"

# Remember blob and mtime of every file the old series touched.
declare -A old_blob old_mtime
while IFS= read -r f; do
	[ -f "$f" ] || continue
	old_blob[$f]=$(git rev-parse "HEAD:$f" 2>/dev/null || echo none)
	old_mtime[$f]=$(stat -c %Y "$f")
done < <(git diff --name-only pristine HEAD)

[ ! -d "$(git rev-parse --git-path rebase-apply)" ] || git am --abort >/dev/null 2>&1 || true
git reset -q --hard pristine

if [ ${#patches[@]} -eq 0 ] && [ -n "$drivers" ]; then
	log "PATCHES=$sel: nothing to apply (no series in $patchdir for: $drivers)"
fi
for p in "${patches[@]}"; do
	rel=${p#"$patchdir"/}
	if ! out=$(git am -q --whitespace=nowarn "$p" 2>&1); then
		git am --abort >/dev/null 2>&1 || true
		git reset -q --hard pristine
		{
			printf 'vmtest: error: patch %s does not apply to %s\n' "$rel" "$(basename "$src")"
			echo "$out" | grep -E '^(error|Patch failed)' | sed 's/^/vmtest:   /'
			check=$(git apply --check -v "$p" 2>&1 || true)
			hunk=$(echo "$check" | sed -n '/^error: while searching for:/,/^error: patch failed/p' | head -40)
			if [ -n "$hunk" ]; then
				echo "vmtest: the hunk that failed (git apply --check -v):"
				echo "$hunk" | sed 's/^/vmtest:   /'
			else
				echo "$check" | grep -E '^(error|fatal)' | head -10 | sed 's/^/vmtest:   /'
			fi
			echo "vmtest: hint: rebase the series onto Linux 6.12.y (git am -3 in $tree), or leave it out with PATCHES=<other drivers>"
		} >&2
		exit 1
	fi
done
n=${#patches[@]}
[ "$n" -eq 0 ] || log "applied $n patch(es) for PATCHES=$sel onto $(basename "$src")"

# Unchanged content keeps its old mtime: make then leaves its objects alone.
for f in "${!old_blob[@]}"; do
	[ -f "$f" ] || continue
	new=$(git rev-parse "HEAD:$f" 2>/dev/null || echo none)
	[ "$new" != "${old_blob[$f]}" ] || touch -m -d "@${old_mtime[$f]}" "$f"
done

echo "$want" >"$state"
echo "$tree"
