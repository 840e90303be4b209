#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.pl --strict over the kernel C of this tree.  checkpatch comes
# from Debian's linux-source-6.1, extracted once into ~/.cache/synctcp.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/synctcp/checkpatch
cp_pl=$cache/scripts/checkpatch.pl
if [ ! -x "$cp_pl" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1 || true)
	if [ -z "$tarball" ]; then
		echo "checkpatch: installing linux-source-6.1" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-source-6.1 >/dev/null
		tarball=$(ls /usr/src/linux-source-6.1.tar.* | head -n 1)
	fi
	mkdir -p "$cache"
	tar -xf "$tarball" -C "$cache" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi
cd "$here"
# The kernel patch series (tcp_option/linux-*/): whole patches, strict.
patches=$(git ls-files -co --exclude-standard -- 'tcp_option/linux-*/*.patch')
rc=0
# (run outside this git tree: inside it, checkpatch reads a tracked .patch
# file as source code, not as a patch)
for p in $patches; do
	(cd "$cache" && "$cp_pl" --strict --no-tree --quiet --show-types "$here/$p") || rc=1
done
[ -z "$patches" ] || [ $rc != 0 ] || echo "checkpatch: $(echo $patches | wc -w) patches clean"
files=$(git ls-files -co --exclude-standard -- 'kmod/*.[ch]' ':!kmod/tests/*')
# Out-of-tree code supports several kernels, so version checks are its job
# (LINUX_VERSION_CODE); the compat headers define the kernel types for user
# space (PREFER_KERNEL_TYPES).  The unit tests are user-space only.
for f in $files; do
	ignore=LINUX_VERSION_CODE
	case $f in */synctcp_compat.h|*/synctcp_info.h) ignore=$ignore,PREFER_KERNEL_TYPES ;; esac
	"$cp_pl" --strict --no-tree --quiet --show-types --ignore "$ignore" -f "$f" || rc=1
done
[ $rc = 0 ] && echo "checkpatch: $(echo $files | wc -w) files clean"
exit $rc
