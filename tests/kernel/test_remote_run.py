"""``synctcp-testbed run SCENARIO --hosts`` over SSH on the namespace hosts of
remote/lab.py (issue 30): the same figures as the local runner on the same
topology, a host lost in the middle of a case, ``--resume``, and nothing
left running on a host afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from synctcp_testbed.network.netns import pids_in_netns
from synctcp_testbed.remote import lab as labmod
from synctcp_testbed.remote.lab import Lab

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces need root")

ROOT = Path(__file__).resolve().parents[2]

#: a scenario's head: NAME, CCS (a TOML list), then its [topology]
HEAD = """\
name = "hosts-{name}"
description = "bulk flows through the emulator host"
cc = {cc}
aqm = ["droptail"]
duration_s = 30
warmup_s = 5
seed = 1
ceiling = false

[topology]
"""

SCENARIO = HEAD + """\
kind = "dumbbell"
rate_mbit = 20
rtts_ms = [40]
queue_pkts = 100
measure = ["lr"]
"""


def _scenario(tmp: Path, name: str, ccs: List[str]) -> Path:
    p = tmp / f"{name}.toml"
    p.write_text(SCENARIO.format(name=name, cc=json.dumps(ccs)))
    return p


def _testbed(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "synctcp_testbed.cli", "run", "--no-report",
                           *args], capture_output=True, text=True, timeout=900)


def _cases(rundir: Path) -> Dict[str, Dict[str, Any]]:
    return {c["id"]: c for c in json.loads((rundir / "summary.json").read_text())["cases"]}


def _leftovers() -> List[str]:
    """Every process in a lab namespace but the hosts' sshd listeners."""
    out = []
    for pid in pids_in_netns(labmod.namespaces()):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        if not (cmd.startswith("/usr/sbin/sshd -f ") or cmd.startswith("sshd: /usr/sbin/sshd")):
            out.append(f"{pid} {cmd}")
    return out


def _over_ssh_then_local(sc: Path, hosts: Path, lab_dir: Path, tmp_path: Path
                         ) -> "tuple[Dict[str, Dict[str, Any]], Dict[str, Dict[str, Any]]]":
    """``sc`` over SSH on the lab's hosts (nothing left running after), the lab taken
    down, then ``sc`` by the local runner on the same kernel: both runs' cases."""
    remote = _testbed(str(sc), "--hosts", str(hosts), "--out", str(tmp_path / "remote"))
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert _leftovers() == []
    labmod.down(lab_dir)
    local = _testbed(str(sc), "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr[-3000:]
    return _cases(tmp_path / "remote"), _cases(tmp_path / "local")


@pytest.fixture
def lab_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "lab"
    labmod.down(tmp_path / "lab")


@pytest.mark.figures
def test_over_ssh_the_figures_of_the_local_runner(lab_dir: Path, tmp_path: Path) -> None:
    # the hosts have the module, as DKMS would install it (they share this kernel)
    if "sync" not in Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text():
        subprocess.run(["insmod", str(ROOT / "kmod" / "tcp_sync.ko")], check=True)
    hosts = Lab(lab_dir, senders=1, emulator=True).up()
    sc = _scenario(tmp_path, "equal", ["reno", "cubic", "sync"])
    got, want = _over_ssh_then_local(sc, hosts, lab_dir, tmp_path)
    assert sorted(got) == sorted(want) == ["cubic-droptail", "reno-droptail", "sync-droptail"]
    for cid in sorted(got):
        g, w = got[cid], want[cid]
        gb, wb = g["bottlenecks"][0], w["bottlenecks"][0]
        line = (f"{cid}: goodput {g['goodput_mbit']:.4f} / {w['goodput_mbit']:.4f} Mbit/s, "
                f"mean queue {gb['mean_pkts']:.2f} / {wb['mean_pkts']:.2f} packets, "
                f"drops {gb['drops']} / {wb['drops']} (over SSH / local)")
        print(f"FIGURES {line}")
        if cid == "sync-droptail":
            # its queue follows the phase of its cuts, which the microseconds the
            # two runners' own work takes move: 19.00 against 19.76 packets when
            # measured (docs/real-hosts.md); the loss-based cases are the check
            continue
        assert abs(g["goodput_mbit"] / w["goodput_mbit"] - 1) <= 0.01, line
        assert abs(gb["mean_pkts"] / wb["mean_pkts"] - 1) <= 0.01, line
        assert abs(gb["drops"] - wb["drops"]) <= max(2, 0.01 * wb["drops"]), line
    # one kernel's clock: the one-way figures with a bound of 0 (the sync case)
    s = got["sync-droptail"]
    assert s["clock_bound_ms"] == 0.0 and s["qdelay_ms"] > 0 and s["ott_ms"] > 0, s
    meta = json.loads((tmp_path / "remote" / "meta.json").read_text())
    assert meta["platform"] == "hosts" and "key" not in json.dumps(meta["hosts"])


def test_a_host_lost_fails_its_case_the_others_run_and_resume_finishes(
        lab_dir: Path, tmp_path: Path) -> None:
    hosts = Lab(lab_dir, senders=1, emulator=True).up()
    sc = _scenario(tmp_path, "faults", ["reno", "cubic"])
    out = tmp_path / "run"
    first = out / "reno-droptail"

    def lose_during_the_first_case() -> None:
        deadline = time.monotonic() + 300
        while not (first / "flowgen-send-s1.sh").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)                   # its flows are running
        labmod.lose(lab_dir, "r1")
        while not (first / "error.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        labmod.lose(lab_dir, "r1", lost=False)

    # a host unreachable before the run: one line, exit 2, nothing run or written
    labmod.lose(lab_dir, "r1")
    gone = _testbed(str(sc), "--hosts", str(hosts), "--out", str(out))
    labmod.lose(lab_dir, "r1", lost=False)
    print(f"unreachable: exit {gone.returncode}: {gone.stderr.strip()}")
    assert gone.returncode == 2 and gone.stderr.strip().splitlines() == [
        "synctcp-testbed: host r1: no answer (timed out) (root@10.250.0.12:22); check: is the "
        "host up and the address right? a firewall?"], gone.stderr
    assert not (out / "meta.json").exists() and not (out / "reno-droptail").exists()

    t = threading.Thread(target=lose_during_the_first_case)
    t.start()
    res = _testbed(str(sc), "--hosts", str(hosts), "--out", str(out))
    t.join()
    assert res.returncode == 1, res.stderr[-3000:]
    why = (first / "error.txt").read_text()
    print(f"lost mid-case: exit {res.returncode}; reno-droptail/error.txt: {why.strip()}")
    assert "r1" in why and ("lost" in why or "no answer" in why), why
    assert (out / "cubic-droptail" / "result.json").is_file()
    assert not (first / "result.json").exists()
    assert _leftovers() == []
    again = _testbed("--resume", str(out), "--hosts", str(hosts))
    assert again.returncode == 0, again.stderr[-3000:]
    print(f"--resume: exit {again.returncode}; cases {sorted(_cases(out))}")
    assert sorted(_cases(out)) == ["cubic-droptail", "reno-droptail"]
    assert _leftovers() == []
    # keys and passwords never reach the run directory
    key = Path(lab_dir / "id").read_text().splitlines()[1]
    for p in out.rglob("*"):
        if p.is_file():
            assert key not in p.read_text(errors="replace"), p


def test_a_path_scenario_over_the_real_path_with_its_one_way_bounds(
        lab_dir: Path, tmp_path: Path) -> None:
    """Kind path: nothing emulated by the run, the lab's own WAN (10 Mbit/s, 40 ms,
    50 packets) is the path; sync's queuing delay carries the peer's tick as its bound
    and its absolute OTT none (RFC 7323 timestamps, no synchronised clock).  With
    ``capture = true``: the first flow's headers at both ends, and the loss-delay
    correlation from the sender's capture, as the local runner has them."""
    if "sync" not in Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text():
        subprocess.run(["insmod", str(ROOT / "kmod" / "tcp_sync.ko")], check=True)
    hosts = Lab(lab_dir, senders=1, rate_mbit=10, delay_ms=40, queue_pkts=50).up()
    sc = tmp_path / "path.toml"
    sc.write_text('name = "hosts-path"\ndescription = "the real path"\ncc = ["reno", "sync"]\n'
                  'aqm = ["droptail"]\nduration_s = 15\nwarmup_s = 3\nseed = 1\n'
                  'capture = true\n\n'
                  '[topology]\nkind = "path"\nrate_mbit = 10\nrtts_ms = [40]\n')
    res = _testbed(str(sc), "--hosts", str(hosts), "--out", str(tmp_path / "run"))
    assert res.returncode == 0, res.stderr[-3000:]
    got = _cases(tmp_path / "run")
    for cid, c in got.items():
        print(f"FIGURES {cid}: goodput {c['goodput_mbit']:.3f} Mbit/s, "
              f"qdelay {c.get('qdelay_ms')} ± {c.get('qdelay_bound_ms')} ms")
        assert c["bottlenecks"] == [] and c["goodput_mbit"] >= 0.9 * 10, c
    s = got["sync-droptail"]["oneway"]
    assert s["source"] == "ts" and s["qdelay_ms"] > 0 and s["qdelay_bound_ms"] == 1.0, s
    assert s["ott_bound_ms"] is None and "not" in s["note"], s
    from synctcp.pcap import read_tcp
    for cid in got:
        cdir = tmp_path / "run" / cid
        res_ = json.loads((cdir / "result.json").read_text())
        corr = res_["correlation"]
        sent, _ = read_tcp(cdir / "f01.pcap")
        recvd, _ = read_tcp(cdir / "f01-receiver.pcap")
        print(f"CAPTURE {cid}: {len(sent)} packets at the sender, {len(recvd)} at the "
              f"receiver; correlation over {corr['capture']['packets']} packets")
        # 15 s of a 10 Mbit/s flow: about 13,000 data segments and their ACKs each end
        assert len(sent) > 10000 and len(recvd) > 10000, (len(sent), len(recvd))
        assert corr["capture"]["packets"] == len(sent), corr["capture"]
    assert _leftovers() == []


@pytest.mark.figures
def test_iperf3_in_place_of_flowgen_gives_the_same_goodput(lab_dir: Path, tmp_path: Path) -> None:
    """Hosts with ``traffic = "iperf3"`` (as hosts without a C compiler get): each flow is
    ``iperf3 -C ALG`` between them, converted into the same case directory (remote/iperf.py);
    a link-filling Reno flow's goodput within 1% of flowgen's on the same lab."""
    hosts = Lab(lab_dir, senders=1, emulator=True).up()
    text = hosts.read_text()
    iperf_hosts = hosts.with_name("hosts-iperf3.toml")
    iperf_hosts.write_text(text.replace('roles = ["sender"]', 'roles = ["sender"]\ntraffic = "iperf3"')
                           .replace('roles = ["receiver"]', 'roles = ["receiver"]\ntraffic = "iperf3"'))
    sc = tmp_path / "iperf3.toml"
    sc.write_text(_scenario(tmp_path, "iperf3", ["reno"]).read_text()
                  .replace("duration_s = 30", "duration_s = 20"))
    got = {}
    for name, inv in (("flowgen", hosts), ("iperf3", iperf_hosts)):
        res = _testbed(str(sc), "--hosts", str(inv), "--out", str(tmp_path / name))
        assert res.returncode == 0, res.stderr[-3000:]
        got[name] = _cases(tmp_path / name)["reno-droptail"]
        assert _leftovers() == []
    meta = json.loads((tmp_path / "iperf3" / "meta.json").read_text())
    assert meta["traffic"] == {"s1": "iperf3", "r1": "iperf3"}, meta["traffic"]
    flows = json.loads((tmp_path / "iperf3" / "reno-droptail" / "flowgen.json").read_text())
    f = flows["flows"][0]
    assert f["traffic"] == "iperf3" and f["cc"] == "reno" and f["error"] is None, f
    g, w = got["iperf3"], got["flowgen"]
    line = (f"goodput {g['goodput_mbit']:.4f} / {w['goodput_mbit']:.4f} Mbit/s, retransmits "
            f"{g['retransmits']} / {w['retransmits']} (iperf3 / flowgen)")
    print(f"FIGURES reno-droptail: {line}")
    assert abs(g["goodput_mbit"] / w["goodput_mbit"] - 1) <= 0.01, line
    assert g["retransmits"] > 0 and g["bottlenecks"][0]["drops"] > 0, line


@pytest.mark.figures
def test_an_http_workload_beside_a_bulk_flow_on_hosts(lab_dir: Path, tmp_path: Path) -> None:
    """The HTTP workload on hosts: the asyncio server on the sender-side host, the
    PackMime client on the receiver-side host, released with the bulk flow, their
    responses put on the reference clock; the same case with the local runner on the
    same topology (HTTP figures within 10%: the clients' clocks and start differ)."""
    hosts = Lab(lab_dir, senders=1, emulator=True).up()
    sc = tmp_path / "http.toml"
    sc.write_text(_scenario(tmp_path, "http", ["reno"]).read_text()
                  .replace("duration_s = 30", "duration_s = 20")
                  + '\n[traffic]\nbulk_fwd = true\nhttp_pairs = 1\nhttp_load_pct = 20\n'
                    'http_server = "asyncio"\n')
    got, want = _over_ssh_then_local(sc, hosts, lab_dir, tmp_path)
    g, w = got["reno-droptail"], want["reno-droptail"]
    gh, wh = g["http"], w["http"]
    line = (f"HTTP responses {gh['responses']} / {wh['responses']}, errors {gh['errors']} / "
            f"{wh['errors']}, median {gh['median_ms']:.1f} / {wh['median_ms']:.1f} ms; bulk "
            f"goodput {g['goodput_mbit']:.3f} / {w['goodput_mbit']:.3f} Mbit/s (hosts / local)")
    print(f"FIGURES {line}")
    assert gh["responses"] > 50 and gh["errors"] == 0, line
    assert abs(gh["responses"] / wh["responses"] - 1) <= 0.10, line
    assert abs(gh["median_ms"] / wh["median_ms"] - 1) <= 0.10, line


LOT = HEAD.format(name="lot", cc='["reno"]') + """\
kind = "parking-lot"
routers = 2
rate_mbit = 10
link_delay_ms = 1
rtts_ms = [20, 60, 100]
queue_pkts = 50
window_segs = 30
measure = ["r0r1", "r0r1-rev"]

[traffic]
bulk_fwd = true
bulk_rev = true
"""


def _lab_state() -> List[str]:
    """The per-case state a run leaves on the lab's hosts: host routes, IFB devices and
    ingress qdiscs."""
    out = []
    for ns in labmod.namespaces():
        for cmd in (["ip", "-4", "route", "show"], ["ip", "-o", "link", "show", "type", "ifb"],
                    ["tc", "qdisc", "show"]):
            text = subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True,
                                  text=True, timeout=30).stdout
            out += [f"{ns}: {ln}" for ln in text.splitlines()
                    if "/32" in ln or "ifb" in ln or "ingress" in ln]
    return out


@pytest.mark.figures
def test_pairs_of_their_own_rtts_through_the_emulator_as_the_local_parking_lot(
        lab_dir: Path, tmp_path: Path) -> None:
    """A parking lot whose three pairs have base RTTs of 20, 60 and 100 ms, two-way, with
    Weigle's window clamp, on two sender and two receiver hosts (pairs 1 and 3 share
    s1 -> r1): every flow's smallest RTT is its pair's, every receiver holds its window
    to 30 segments (flowgen -W, as the local runner's), the figures are the local runner's
    parking lot of the same routers, and nothing of the case stays on the hosts (routes, IFBs, ingress
    qdiscs).  Goodput within 2%, the queues within 20% and the drops within three standard
    deviations of a count (3 sqrt(n)), not the dumbbell's 1%: the emulator puts each
    pair's delay before the queue, the local lot half before and half after, so the pairs
    reach the queue in other phases (each flow's round trip is the same), and six two-way
    flows amplify any perturbation: two runs of this test that differed only in its
    assertions gave the local case mean queues of 22.25 and 19.99 packets on the reverse
    bottleneck (drops 194 and 234), the SSH case the same figures both times."""
    hosts = Lab(lab_dir, senders=2, emulator=True).up()
    before = _lab_state()
    sc = tmp_path / "lot.toml"
    sc.write_text(LOT)
    remote = _testbed(str(sc), "--hosts", str(hosts), "--out", str(tmp_path / "remote"))
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert _leftovers() == [] and _lab_state() == before, _lab_state()
    cdir = tmp_path / "remote" / "reno-droptail"
    setup = (cdir / "topology.sh").read_text()
    assert setup.count("type ifb") == 2 * 3, setup      # 3 delays, each side
    for h in ("s1", "s2", "r1", "r2"):                  # the clamp, on every receiver
        assert f" -W {30 * 1448}" in (cdir / f"flowgen-recv-{h}.sh").read_text(), h
    rtt = {f["id"]: f["base_rtt_ms"] for f in json.loads((cdir / "flows.json").read_text())}
    port = {f["port"]: f["id"] for f in json.loads((cdir / "flowgen.json").read_text())["flows"]}
    low: Dict[str, float] = {}
    cwnd: Dict[str, int] = {}
    from synctcp_testbed.analysis.rundir import read_tcp_jsonl
    for p in cdir.glob("tcp-*.jsonl"):
        for s in read_tcp_jsonl(p):
            for sock in s.sockets:
                fid = port.get(sock["dport"])
                info = sock["tcp_info"]
                if fid and info.get("min_rtt_us"):
                    low[fid] = min(low.get(fid, 1e9), info["min_rtt_us"] / 1000)
                    cwnd[fid] = max(cwnd.get(fid, 0), info.get("cwnd", 0))
    assert sorted(low) == sorted(rtt), (low, rtt)
    for fid in sorted(low):
        print(f"FIGURES {fid}: base RTT {rtt[fid]:g} ms, smallest RTT seen {low[fid]:.2f} ms, "
              f"largest cwnd {cwnd[fid]}")
        # a 1500-byte packet takes 1.2 ms at 10 Mbit/s, its ACK 0.05
        assert rtt[fid] <= low[fid] <= rtt[fid] + 3, (fid, low[fid], rtt[fid])
        # at most 30 segments in flight: Linux grows cwnd to twice what is in flight
        # in slow start (tcp_is_cwnd_limited()), a stretch ACK's few more; 92 without
        # the clamp (a route window: docs/platform.md)
        assert cwnd[fid] <= 2 * 30 + 4, (fid, cwnd[fid])
    labmod.down(lab_dir)
    local = _testbed(str(sc), "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr[-3000:]
    g, w = _cases(tmp_path / "remote")["reno-droptail"], _cases(tmp_path / "local")["reno-droptail"]
    for gb, wb in zip(g["bottlenecks"], w["bottlenecks"]):
        print(f"FIGURES {gb['link']}: mean queue {gb['mean_pkts']:.2f} / {wb['mean_pkts']:.2f} "
              f"packets, drops {gb['drops']} / {wb['drops']} (over SSH / local)")
    print(f"FIGURES goodput {g['goodput_mbit']:.4f} / {w['goodput_mbit']:.4f} Mbit/s "
          f"(over SSH / local)")
    gf = {f["id"]: f for f in json.loads((cdir / "flows.json").read_text())}
    wf = {f["id"]: f for f in json.loads((tmp_path / "local" / "reno-droptail" /
                                          "flows.json").read_text())}
    for fid in sorted(gf):
        print(f"FIGURES {fid} ({gf[fid]['group']}, {rtt[fid]:g} ms): goodput "
              f"{gf[fid]['goodput_mbit']:.3f} / {wf[fid]['goodput_mbit']:.3f} Mbit/s")
    assert [b["link"] for b in g["bottlenecks"]] == [b["link"] for b in w["bottlenecks"]]
    assert abs(g["goodput_mbit"] / w["goodput_mbit"] - 1) <= 0.02
    for gb, wb in zip(g["bottlenecks"], w["bottlenecks"]):
        assert abs(gb["mean_pkts"] / wb["mean_pkts"] - 1) <= 0.20, gb["link"]
        assert abs(gb["drops"] - wb["drops"]) <= 3 * wb["drops"] ** 0.5, gb["link"]


@pytest.mark.figures
def test_an_http_only_parking_lot_with_pairs_of_their_own_rtts(lab_dir: Path,
                                                              tmp_path: Path) -> None:
    """weigle-http's shape on hosts: HTTP pairs only (the case's clock is a client host's),
    of 20 and 100 ms, both between s1 and r1, each pair's server on its own port and its
    delay on the emulator: each pair's fastest response takes three of its round trips
    on both runners (HTTP/1.0: the handshake, the request and the response, the close;
    measured 60.0 and 300.0 ms), and the responses and their median are the local
    runner's within 10%."""
    hosts = Lab(lab_dir, senders=1, emulator=True).up()
    sc = tmp_path / "http-lot.toml"
    sc.write_text('name = "hosts-http-lot"\ndescription = "HTTP only, two RTTs"\n'
                  'cc = ["reno"]\naqm = ["droptail"]\nduration_s = 30\nwarmup_s = 5\nseed = 1\n'
                  'ceiling = false\n\n[topology]\nkind = "parking-lot"\nrouters = 2\n'
                  'rate_mbit = 10\nlink_delay_ms = 1\nrtts_ms = [20, 100]\nqueue_pkts = 50\n'
                  'measure = ["r0r1"]\n\n[traffic]\nbulk_fwd = false\nhttp_pairs = 2\n'
                  'http_load_pct = 40\nhttp_server = "asyncio"\n')
    got, want = _over_ssh_then_local(sc, hosts, lab_dir, tmp_path)
    g, w = got["reno-droptail"], want["reno-droptail"]
    gh, wh = g["http"], w["http"]
    line = (f"HTTP responses {gh['responses']} / {wh['responses']}, errors {gh['errors']} / "
            f"{wh['errors']}, median {gh['median_ms']:.1f} / {wh['median_ms']:.1f} ms, mean "
            f"queue {g['bottlenecks'][0]['mean_pkts']:.2f} / "
            f"{w['bottlenecks'][0]['mean_pkts']:.2f} packets (hosts / local)")
    print(f"FIGURES {line}")
    low: Dict[str, Dict[str, float]] = {"remote": {}, "local": {}}
    for run, fastest in low.items():
        for row in (tmp_path / run / "reno-droptail" / "http.csv").read_text().splitlines()[1:]:
            f = row.split(",")
            fastest[f[6]] = min(fastest.get(f[6], 1e9), (float(f[1]) - float(f[0])) * 1000)
    for client, rtt in (("b1", 20), ("b2", 100)):
        got_, want_ = low["remote"][client], low["local"][client]
        print(f"FIGURES pair {client} ({rtt} ms): fastest response {got_:.1f} / {want_:.1f} ms "
              f"(hosts / local)")
        for v in (got_, want_):
            assert 3 * rtt <= v <= 3 * rtt + 5, (client, low)
    assert gh["responses"] > 50 and gh["errors"] == 0, line
    assert abs(gh["responses"] / wh["responses"] - 1) <= 0.10, line
    assert abs(gh["median_ms"] / wh["median_ms"] - 1) <= 0.10, line
