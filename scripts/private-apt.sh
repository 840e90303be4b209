# SPDX-License-Identifier: GPL-2.0
# Sourced by scripts that fetch packages of another Debian suite (sid,
# trixie...) without touching the system's apt sources or dpkg database:
#
#   . scripts/private-apt.sh
#   private_apt_init SUITE          # sets APTDIR and the APTOPTS array
#   apt-get -q "${APTOPTS[@]}" update
#   apt-get -q "${APTOPTS[@]}" download PKG
#
# apt runs with a private sources.list, lists and cache under
# ~/.cache/synctcp/apt-SUITE and an empty private dpkg status, so it
# resolves dependencies as on an empty system.  Callers serialise runs
# (flock) themselves: the private dirs take no apt lock.

private_apt_init() {
	local suite=$1 mirror=${SYNCTCP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
	local cache=${SYNCTCP_CACHE:-$HOME/.cache/synctcp}
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg signed=""

	APTDIR=$cache/apt-$suite
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/debs"
	[ -f "$keyring" ] && signed="[signed-by=$keyring] "
	echo "deb ${signed}$mirror $suite main" >"$APTDIR/sources.list"
	: >"$APTDIR/status"
	# Debug::NoLocking: the private dirs need no lock (callers flock);
	# APT::Sandbox::User: they belong to us, not to _apt.
	APTOPTS=(
		-o Dir::Etc::SourceList="$APTDIR/sources.list"
		-o Dir::Etc::SourceParts=/dev/null
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
		# comes from here is source for test kernels, never installed
		-o Acquire::Check-Valid-Until=false
		-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
		-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false
		-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
		-o Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false
	)
}
