"""Commands and files on a host: over OpenSSH, or here for ``address = "local"``.

The runner drives the system's OpenSSH client (``ssh``), as Google's
transperf does, rather than a Python SSH library such as asyncssh: the
operator's ``~/.ssh/config`` (``Host`` aliases, ``ProxyJump``, agents,
certificates, hardware keys) and known_hosts work exactly as they do for
``ssh`` itself, no key or passphrase is ever loaded into this process, and
there is no further Python dependency to keep; what asyncssh would add
(many channels at once, no process per command) matters little for a
handful of hosts and a command every few seconds, and ControlMaster
multiplexing removes the cost of a handshake per command.  Every host gets one multiplexed connection (``ControlMaster``,
its socket in a private temporary directory, never in the run directory)
that every command reuses; ``BatchMode=yes`` makes a missing key a failure
instead of a password prompt.

A command is a POSIX shell script run by the host's ``sh -c``; files go
both ways as tar streams over the same connection (no scp or sftp needed).
Failures are :class:`HostError` with one line naming the host and, for
connection failures, what to check.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .inventory import Host, SshSettings

#: ssh's exit status when the connection itself failed
SSH_FAILED = 255


class HostError(RuntimeError):
    """A host could not be reached or a command on it failed; one line naming the host."""

    def __init__(self, host: str, msg: str, lost: bool = False):
        super().__init__(f"host {host}: {msg}")
        self.host = host
        #: the connection failed (unreachable, refused, timed out), not the command
        self.lost = lost


@dataclass
class Result:
    rc: int
    out: str
    err: str


#: ssh's words for a failed connection -> (what happened, what to check)
CONNECT_ERRORS = (
    ("connection refused", "connection refused", "is sshd running and listening on that port?"),
    ("connection timed out", "no answer (timed out)",
     "is the host up and the address right? a firewall?"),
    ("operation timed out", "no answer (timed out)", "is the host up and the address right?"),
    ("no route to host", "no route to host", "is the host up, and on a network this machine reaches?"),
    ("network is unreachable", "network unreachable", "a route from this machine to the host"),
    ("could not resolve hostname", "unknown host name",
     "the address, or the Host entry of ~/.ssh/config"),
    ("permission denied", "refused the login",
     "the user and key (ssh-copy-id; BatchMode: no password prompts)"),
    ("host key verification failed", "host key verification failed",
     "the host's key in known_hosts (ssh-keygen -R HOST if it was reinstalled)"),
    ("connection closed", "closed the connection", "sshd's log on the host"),
    ("connection reset", "reset the connection", "sshd's log on the host"),
    ("broken pipe", "connection lost", "the network between this machine and the host"),
    ("timeout, server", "connection lost (no answer to keep-alives)",
     "the network between this machine and the host"),
)


def connect_error(stderr: str, where: str) -> str:
    """ssh's stderr of a failed connection to ``where`` as one line:
    "what happened (where); check: what"."""
    low = stderr.lower()
    for needle, what, fix in CONNECT_ERRORS:
        if needle in low:
            return f"{what} ({where}); check: {fix}"
    last = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()][-1:]
    return f"{last[0] if last else 'ssh failed without a message'} ({where})"


class Transport:
    """How the runner reaches one host: :meth:`run` a script, :meth:`put` and :meth:`get` files."""

    def __init__(self, host: Host):
        self.host = host

    def argv(self, script: str) -> List[str]:
        raise NotImplementedError

    def run(self, script: str, timeout: float = 60.0, input: Optional[bytes] = None,
            check: bool = True) -> Result:
        """Run ``script`` with the host's ``sh``; HostError when the host cannot be
        reached or (``check``) the script fails."""
        argv = self.argv(script)
        try:
            res = subprocess.run(argv, input=input, capture_output=True, timeout=timeout,
                                 stdin=None if input is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise HostError(self.host.name, f"no answer within {timeout:g} s "
                            f"({self.host.where}); check: the network between this machine "
                            f"and the host", lost=True) from None
        except FileNotFoundError as exc:
            raise HostError(self.host.name, f"{exc.filename}: not found (apt-get install "
                            f"openssh-client)") from None
        out = res.stdout.decode(errors="replace")
        err = res.stderr.decode(errors="replace")
        if res.returncode == SSH_FAILED and self.remote:
            raise HostError(self.host.name, connect_error(err, self.host.where), lost=True)
        if check and res.returncode != 0:
            said = (err.strip() or out.strip()).splitlines()
            raise HostError(self.host.name, f"{_first_line(script)}: exit {res.returncode}: "
                            f"{said[-1] if said else 'no message'}")
        return Result(res.returncode, out, err)

    @property
    def remote(self) -> bool:
        return True

    def put_files(self, files: Dict[str, bytes], dest: str, timeout: float = 120.0) -> None:
        """Write ``files`` (name -> content, names relative) under directory ``dest``."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, data in sorted(files.items()):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = 0o755 if name.endswith(".sh") else 0o644
                info.mtime = int(time.time())
                tar.addfile(info, io.BytesIO(data))
        q = shlex.quote(dest)
        self.run(f"mkdir -p {q} && tar -C {q} -xf -", timeout=timeout, input=buf.getvalue())

    def get_dir(self, src: str, dest: Path, names: Sequence[str] = (),
                timeout: float = 300.0) -> List[str]:
        """Copy directory ``src`` of the host (or only ``names`` in it that exist) into
        ``dest``; the names copied."""
        q = shlex.quote(src)
        pick = " ".join(shlex.quote(n) for n in names)
        script = (f"cd {q} && tar -cf - {pick or '.'}" if not names else
                  f"cd {q} && set -- && for f in {pick}; do [ -e \"$f\" ] && set -- \"$@\" "
                  f"\"$f\"; done; tar -cf - \"$@\" 2>/dev/null || tar -cf - -T /dev/null")
        argv = self.argv(script)
        try:
            res = subprocess.run(argv, capture_output=True, timeout=timeout,
                                 stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise HostError(self.host.name, f"copying {src} back took over {timeout:g} s",
                            lost=True) from None
        if res.returncode == SSH_FAILED and self.remote:
            raise HostError(self.host.name, connect_error(res.stderr.decode(errors="replace"),
                                                          self.host.where), lost=True)
        if res.returncode != 0:
            raise HostError(self.host.name, f"copying {src} back: "
                            f"{res.stderr.decode(errors='replace').strip()[-200:]}")
        got = []
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(res.stdout), mode="r") as tar:
            for m in tar.getmembers():
                # plain files straight under dest only: nothing a host sends can land elsewhere
                name = m.name[2:] if m.name.startswith("./") else m.name
                if not m.isfile() or "/" in name or name in ("", ".", ".."):
                    continue
                f = tar.extractfile(m)
                if f is None:
                    continue
                (dest / name).write_bytes(f.read())
                got.append(name)
        return got

    def start(self) -> None:
        """Open the host's connection (the multiplexing master)."""

    def close(self) -> None:
        """Close the host's connection."""


def _first_line(script: str) -> str:
    line = script.strip().splitlines()[0] if script.strip() else ""
    return line if len(line) <= 60 else line[:57] + "..."


class LocalTransport(Transport):
    """``address = "local"``: the scripts run on this machine, without SSH."""

    @property
    def remote(self) -> bool:
        return False

    def argv(self, script: str) -> List[str]:
        return ["sh", "-c", script]


class SshTransport(Transport):
    """One host over OpenSSH, with a multiplexed connection in ``control_dir``."""

    def __init__(self, host: Host, settings: SshSettings, control_dir: Path):
        super().__init__(host)
        self.settings = settings
        self.control = control_dir / f"{host.name}.sock"
        self.master: Optional[subprocess.Popen] = None

    def options(self) -> List[str]:
        s = self.settings
        alive = 5
        opts = ["BatchMode=yes", f"ConnectTimeout={int(s.connect_timeout_s)}",
                f"ServerAliveInterval={alive}",
                f"ServerAliveCountMax={max(1, int(s.alive_timeout_s // alive))}",
                "ControlMaster=auto", f"ControlPath={self.control}", "ControlPersist=no",
                "LogLevel=ERROR"]
        if s.known_hosts:
            opts.append(f"UserKnownHostsFile={Path(s.known_hosts).expanduser()}")
        if not any(o.lower().startswith("stricthostkeychecking=") for o in s.options):
            opts.append("StrictHostKeyChecking=accept-new")
        opts += s.options
        return opts

    def base(self) -> List[str]:
        h = self.host
        argv = ["ssh"]
        for o in self.options():
            argv += ["-o", o]
        if h.ssh_host:
            return argv + [h.ssh_host]
        argv += ["-p", str(h.port)]
        if h.user:
            argv += ["-l", h.user]
        if h.key:
            argv += ["-i", str(Path(h.key).expanduser()), "-o", "IdentitiesOnly=yes"]
        return argv + [h.address]

    def argv(self, script: str) -> List[str]:
        base = self.base()
        return base[:-1] + ["--", base[-1], f"sh -c {shlex.quote(script)}"]

    def start(self) -> None:
        """The master connection, in the background (-N: no command), ready when its
        socket is there; HostError (lost) when it cannot connect."""
        if self.master is not None and self.master.poll() is None:
            return
        base = self.base()
        argv = base[:-1] + ["-o", "ControlMaster=yes", "-N", "--", base[-1]]
        err = tempfile.TemporaryFile()
        self.master = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=err, start_new_session=True)
        deadline = time.monotonic() + self.settings.connect_timeout_s + 5
        while time.monotonic() < deadline:
            if self.control.exists():
                err.close()
                return
            if self.master.poll() is not None:
                err.seek(0)
                msg = err.read().decode(errors="replace")
                err.close()
                self.master = None
                raise HostError(self.host.name, connect_error(msg, self.host.where), lost=True)
            time.sleep(0.05)
        self.close()
        err.close()
        raise HostError(self.host.name, f"no answer within {self.settings.connect_timeout_s:g} s "
                        f"({self.host.where}); check: is the host up and the address right?",
                        lost=True)

    def close(self) -> None:
        if self.master is None:
            return
        if self.master.poll() is None:
            try:
                os.killpg(self.master.pid, 15)
            except ProcessLookupError:
                pass
            try:
                self.master.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.master.pid, 9)
                self.master.wait()
        self.master = None
        self.control.unlink(missing_ok=True)


class Connections:
    """Every host's transport, with the private directory of the SSH control sockets."""

    def __init__(self, hosts: Sequence[Host], settings: SshSettings):
        self.dir = Path(tempfile.mkdtemp(prefix="synctcp-ssh-"))
        os.chmod(self.dir, 0o700)
        self.by_name: Dict[str, Transport] = {}
        for h in hosts:
            self.by_name[h.name] = (LocalTransport(h) if h.local
                                    else SshTransport(h, settings, self.dir))

    def __getitem__(self, name: str) -> Transport:
        return self.by_name[name]

    def connect_all(self) -> List[HostError]:
        """Open every host's connection; the hosts that could not be reached."""
        errors = []
        for t in self.by_name.values():
            try:
                t.start()
                t.run("true", timeout=30)
            except HostError as exc:
                errors.append(exc)
        return errors

    def close(self) -> None:
        for t in self.by_name.values():
            t.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Connections":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
