# Shared helpers for hawkeye's scripts; sourced, never run.
# shellcheck shell=bash

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$REPO/build
KTREE=$BUILD/linux
VENV=$BUILD/venv
VIRTME_NG_VERSION=1.42
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/hawkeye-ccache}
# Relative paths in the cache key: a fresh clone elsewhere still hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$REPO}

say() { printf '%s\n' "hawkeye: $*" >&2; }
die() { printf '%s\n' "hawkeye: error: $*" >&2; exit 2; }
warn_loud() {
	printf '\n%s\n' '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!' >&2
	printf 'hawkeye: WARNING: %s\n' "$@" >&2
	printf '%s\n\n' '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!' >&2
}

check_flavour() {
	case $1 in
	debug | release | kcsan) ;;
	*) die "unknown flavour '$1' (debug, release or kcsan)" ;;
	esac
}

# Hash of everything under kernel/ that goes into the patched tree.
kernel_inputs_hash() {
	(cd "$REPO" && find kernel -type f ! -path 'kernel/configs/*' -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}

# The copies, under kernel/, of the files the series adds (for reading).
kernel_new_files() {
	(cd "$REPO/kernel" && find . -type f ! -path './patches/*' \
		! -path './configs/*' ! -name base.env | sed 's|^\./||' | LC_ALL=C sort)
}

# The state of build/linux against kernel/:
#   missing     no tree yet
#   dirty       uncommitted edits or untracked files in the tree
#   unexported  commits in the tree that kernel-export has not carried back
#   copies      the tree is the series, but the copies of its new files
#               under kernel/ are not what it makes (kernel-export rewrites them)
#   stale       kernel/ changed since the tree was made (e.g. after git pull)
#   clean       the tree is kernel/, applied
tree_state() {
	local git="git -C $KTREE"
	# A tree without the base tag is a half-made one: make it again.
	$git rev-parse -q --verify hawkeye-base >/dev/null 2>&1 || { echo missing; return; }
	if [ -n "$($git status --porcelain 2>/dev/null | head -1)" ]; then
		echo dirty
	elif [ "$($git rev-parse HEAD)" != "$(cat "$KTREE/.git/hawkeye-exported-head" 2>/dev/null)" ]; then
		echo unexported
	elif [ "$(cat "$KTREE/.git/hawkeye-inputs" 2>/dev/null)" = copies ]; then
		echo copies
	elif [ "$(kernel_inputs_hash)" != "$(cat "$KTREE/.git/hawkeye-inputs" 2>/dev/null)" ]; then
		echo stale
	else
		echo clean
	fi
}

record_export() {
	git -C "$KTREE" rev-parse HEAD >"$KTREE/.git/hawkeye-exported-head"
	kernel_inputs_hash >"$KTREE/.git/hawkeye-inputs"
}
