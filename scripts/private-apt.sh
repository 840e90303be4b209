# SPDX-License-Identifier: GPL-2.0
# Sourced by scripts that fetch packages of another Debian suite (sid,
# trixie...) without touching the system's apt sources or dpkg database:
#
#   . scripts/private-apt.sh
#   private_apt_init SUITE          # sets APTDIR and the APTOPTS array
#   apt-get -q "${APTOPTS[@]}" update
#   apt-get -q "${APTOPTS[@]}" download PKG
#
#   private_apt_init NAME SOURCES   # the same over a sources file (one-line
#                                   # or deb822) instead of the mirror's SUITE
#
# apt runs with a private sources.list, lists and cache under
# ~/.cache/synctcp/apt-SUITE (apt-NAME) and an empty private dpkg status,
# so it resolves dependencies as on an empty system.  Callers serialise
# runs (flock) themselves: the private dirs take no apt lock.

private_apt_init() {
	local suite=$1 sources=${2:-} mirror=${SYNCTCP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
	local cache=${SYNCTCP_CACHE:-$HOME/.cache/synctcp}
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg signed=""

	APTDIR=$cache/apt-$suite
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/debs" "$APTDIR/parts"
	rm -f "$APTDIR"/parts/*
	if [ -z "$sources" ]; then
		[ -f "$keyring" ] && signed="[signed-by=$keyring] "
		echo "deb ${signed}$mirror $suite main" >"$APTDIR/sources.list"
	elif grep -qE '^(Types|URIs):' "$sources"; then
		# deb822 is read only from SourceParts, by its .sources name
		: >"$APTDIR/sources.list"
		cp "$sources" "$APTDIR/parts/mirror.sources"
	else
		cp "$sources" "$APTDIR/sources.list"
	fi
	: >"$APTDIR/status"
	# Debug::NoLocking: the private dirs need no lock (callers flock);
	# APT::Sandbox::User: they belong to us, not to _apt.
	APTOPTS=(
		-o Dir::Etc::SourceList="$APTDIR/sources.list"
		-o Dir::Etc::SourceParts="$APTDIR/parts"
		-o Dir::State::Lists="$APTDIR/lists"
		-o Dir::Cache="$APTDIR/cache"
		-o Dir::State::status="$APTDIR/status"
		-o APT::Architecture=amd64
		-o APT::Architectures::=amd64
		-o Debug::NoLocking=1
		-o APT::Sandbox::User="$(id -un)"
		-o Acquire::Languages=none
		# a mirror that is a snapshot (as here) serves a sid Release whose
		# Valid-Until has passed; the signature is still checked, and what
		# comes from here is source for test kernels, never installed (or,
		# with SOURCES, versions and hashes that mmdebstrap checks again
		# when it builds the image)
		-o Acquire::Check-Valid-Until=false
		-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
		-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
		-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
		-o Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false
	)
}
