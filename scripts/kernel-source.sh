# SPDX-License-Identifier: GPL-2.0
# Sourced by the kernel build scripts (tcp_option/build-kernel.sh,
# uml/build-uml.sh): Debian's linux-source package of a series, unpacked
# once into the cache when it is not bookworm's.
#
#   . scripts/kernel-source.sh
#   kernel_source SERIES REPO CACHE     prints "TARBALL PACKAGE_VERSION"
#
# 6.1 is bookworm's linux-source-6.1 (installed with apt); any other series
# is sid's linux-source-SERIES, downloaded with a private apt configuration
# (scripts/private-apt.sh; the system's sources are not touched) and its
# tarball extracted to CACHE/kernel/linux-source-SERIES.tar.xz.
# PACKAGE_VERSION is e.g. linux-source-6.1_6.1.192-2 or
# linux-source-7.2_7.2.13-1_all.  Messages go to stderr.

kernel_source() {
	local series=$1 repo=$2 cache=$3 deb out
	case $series in
	6.1)
		if [ ! -f /usr/src/linux-source-6.1.tar.xz ]; then
			echo "apt-get install linux-source-6.1" >&2
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-source-6.1 >&2
		fi
		echo "/usr/src/linux-source-6.1.tar.xz linux-source-6.1_$(dpkg-query -W -f '${Version}' linux-source-6.1)"
		;;
	*)
		# shellcheck source=private-apt.sh
		. "$repo/scripts/private-apt.sh"
		private_apt_init sid
		deb=$(ls "$APTDIR"/debs/linux-source-"$series"_*.deb 2>/dev/null | sort -V | tail -n1 || true)
		if [ -z "$deb" ]; then
			echo "downloading linux-source-$series from sid" >&2
			apt-get -q "${APTOPTS[@]}" update >&2
			(cd "$APTDIR/debs" && apt-get -q "${APTOPTS[@]}" download "linux-source-$series" >&2)
			deb=$(ls "$APTDIR"/debs/linux-source-"$series"_*.deb 2>/dev/null | sort -V | tail -n1 || true)
			[ -n "$deb" ] || { echo "no linux-source-$series in sid" >&2; return 1; }
		fi
		out=$cache/kernel/linux-source-$series.tar.xz
		if [ ! -f "$out" ] || [ "$deb" -nt "$out" ]; then
			mkdir -p "$cache/kernel"
			dpkg-deb --fsys-tarfile "$deb" |
				tar -xO --wildcards "./usr/src/linux-source-$series.tar.xz" >"$out.tmp"
			mv "$out.tmp" "$out"
		fi
		echo "$out $(basename "$deb" .deb)"
		;;
	esac
}

#   kernel_unpack TARBALL DIR [PATCH...]
# A fresh DIR/src from TARBALL with the patches applied (patch -p1), telling
# each step through the caller's log function; fails naming a patch that
# does not apply.
kernel_unpack() {
	local tarball=$1 dir=$2 p
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir/src"
	log "unpacking $(basename "$tarball")"
	tar -xf "$tarball" -C "$dir/src" --strip-components=1
	for p in "$@"; do
		log "applying $(basename "$p")"
		patch -d "$dir/src" -p1 --forward --batch --quiet <"$p" || { log "$(basename "$p") does not apply"; return 1; }
	done
}
