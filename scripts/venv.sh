#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# This checkout's own Python environment: .venv/, a venv that sees the
# system's site-packages (the libraries make setup installs there, or pip
# resolves into the venv when they are missing) and holds this checkout's
# packages, synctcp, synctcp_testbed and synctcp_mininet, installed editable
# with their commands (.venv/bin/synctcp, synctcp-testbed, synctcp-mininet).
# Nothing is installed outside the checkout: another clone's make setup or
# make test cannot re-point these commands, and deleting that clone breaks
# nothing here.  Quiet and fast when the environment is already there.
# No root needed (make setup runs it after the system packages).
#
#   SYNCTCP_BASE_PYTHON   the Python the venv is made from (default Debian's
#                         /usr/bin/python3 where it is, else python3 on PATH:
#                         the instances' image has the same interpreter at
#                         that path, so the venv's scripts run in them too;
#                         a venv of a pyenv Python did not, "cannot execute")
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$here/.venv
py=$venv/bin/python3
default=python3
[ -x /usr/bin/python3 ] && default=/usr/bin/python3
base=${SYNCTCP_BASE_PYTHON:-$default}

# the packages importable, and imported from this checkout
ready() {
	[ -x "$py" ] && [ "$("$py" -c 'import os, synctcp, synctcp_testbed, synctcp_mininet, pyroute2, matplotlib, rich, pydantic, scipy, pytest, scapy, distributed, dask_jobqueue; print(os.path.realpath(synctcp_testbed.__file__))' 2>/dev/null)" = "$here/testbed/synctcp_testbed/__init__.py" ]
}
ready && exit 0

command -v "$base" >/dev/null || { echo "setup: no $base to make $venv from (SYNCTCP_BASE_PYTHON)" >&2; exit 1; }
if [ ! -x "$py" ]; then
	echo "setup: this checkout's Python environment: $venv"
	"$base" -m venv --system-site-packages "$venv" ||
		{ echo "setup: $base -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
echo "setup: installing this checkout's packages into $venv (editable)"
"$py" -m pip install -q --disable-pip-version-check -e "$here[test]"
ready || { echo "setup: $venv does not import this checkout's packages" >&2; exit 1; }
