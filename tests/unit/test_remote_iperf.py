"""iperf3 in place of flowgen on hosts (synctcp_testbed.remote.iperf): a real client
document (tests/unit/fixtures/iperf3/) as the flowgen sides the run merges."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from synctcp_testbed.plan.flows import Flow
from synctcp_testbed.remote import iperf
from synctcp_testbed.remote.merge import merge_flowgen
from synctcp_testbed.traffic.flowgen import parse_result, window_bytes

FIX = Path(__file__).parent / "fixtures" / "iperf3"
DOC = (FIX / "client_loopback_3s.json").read_text()
GO, EXIT = "1795837082.4323714 512.142297254\n", "1795837085.650469 515.360394853\n"


def flow(fid: str = "f01", start_s: float = 0.0) -> Flow:
    return Flow(fid, "fwd", "cubic", "s1", "r1", 15201, 40001, 40.0, start_s=start_s,
                src_addr="127.0.0.1", dst_addr="127.0.0.1")


def test_a_recorded_client_document_is_both_sides_of_a_flowgen_result() -> None:
    f = flow()
    docs = iperf.side_docs("s1", {"f01": "r1"}, [f], {"f01": 3.0},
                           {"f01": {"go": GO, "exit": EXIT, "json": DOC}}, {"f01": 0.04})
    assert [(d["side"], d["host"]) for d in docs] == [("send", "s1"), ("recv", "r1")]
    merged = merge_flowgen(docs, docs[0]["go_realtime"], docs[0]["go_monotonic"])
    res = parse_result(json.dumps(merged)).flows["f01"]
    raw = json.loads(DOC)
    # the test ended one round trip (40 ms) before the client exited
    end = 1795837085.650469 - 0.04 - 1795837082.4323714
    assert res.stopped == pytest.approx(end)
    assert res.intervals[-1][1] == pytest.approx(end - 3.000079 + 3.000132)
    assert [n for _, _, n in res.intervals] == [6291456] * 3
    assert res.bytes_received == 3 * 6291456 == raw["end"]["sum_received"]["bytes"]
    assert res.cc == "cubic" and res.cc_requested == "cubic" and res.retransmits == 0
    assert res.retrans[-1] == (pytest.approx(end), 0) and res.error is None
    assert merged["flows"][0]["traffic"] == "iperf3"
    assert res.cport == 15301                  # the port of the document, not the plan's
    # the measured window keeps whole intervals: 2 of 3 inside [0.5, 3.2]
    assert window_bytes(res.intervals, 0.5, 3.2) == (2 * 6291456, pytest.approx(2.0, abs=1e-3))


@pytest.mark.parametrize("json_text, exit_, why", [
    (None, None, "iperf3: iperf3 wrote no result"),
    ('{"start": {}, "intervals": [], "end": {}, "error": "unable to connect to server: '
     'Connection refused"}', EXIT, "iperf3: unable to connect to server: Connection refused"),
    (DOC, None, "iperf3: iperf3 did not finish"),
])
def test_a_failed_iperf3_is_the_flows_error_not_empty_figures(json_text, exit_, why) -> None:
    docs = iperf.side_docs("s1", {"f01": "r1"}, [flow()], {"f01": 3.0},
                           {"f01": {"go": GO, "exit": exit_, "json": json_text}}, {"f01": 0.04})
    merged = merge_flowgen(docs, docs[0]["go_realtime"], docs[0]["go_monotonic"])
    assert merged["flows"][0]["error"] == f"sender: {why}"
    assert merged["flows"][0]["intervals"] == []


def test_a_server_without_json_output_is_named() -> None:
    doc = json.loads(DOC)
    del doc["server_output_json"]
    doc["server_output_text"] = "Accepted connection from 127.0.0.1, port 35007\n"
    docs = iperf.side_docs("s1", {"f01": "r1"}, [flow()], {"f01": 3.0},
                           {"f01": {"go": GO, "exit": EXIT, "json": json.dumps(doc)}},
                           {"f01": 0.04})
    assert docs[0]["flows"][0]["error"] == ("iperf3: the server's output came as text (its "
                                            "iperf3 ran without -J)")
    assert "-J" in iperf.server_argv(flow())


def test_no_go_seen_is_one_line() -> None:
    with pytest.raises(iperf.IperfError, match="host s1: no iperf3 client saw the go"):
        iperf.side_docs("s1", {"f01": "r1"}, [flow()], {"f01": 3.0},
                        {"f01": {"go": None, "exit": None, "json": None}}, {"f01": 0.04})


def test_the_client_wrapper_waits_for_the_go_and_records_the_clocks(tmp_path: Path) -> None:
    """The wrapper itself, with a stand-in iperf3 on PATH that prints a document."""
    fake = tmp_path / "bin" / "iperf3"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho '{\"args\": \"'\"$*\"'\"}'\n")
    fake.chmod(0o755)
    script = iperf.client_script(flow(start_s=0.2), 3.0)
    p = subprocess.Popen(["sh", "-c", script], cwd=tmp_path, stdout=subprocess.PIPE, text=True,
                         env={"PATH": f"{fake.parent}:/usr/bin:/bin"})
    assert p.stdout is not None and p.stdout.readline() == "ready\n"
    assert not (tmp_path / "f01.go").exists()           # waits for the go
    (tmp_path / iperf.GO_FILE).touch()
    assert p.wait(timeout=20) == 0
    go, ex = (iperf.read_clocks((tmp_path / n).read_text()) for n in ("f01.go", "f01.exit"))
    assert ex[1] - go[1] >= 0.2                          # the flow's start offset
    args = json.loads((tmp_path / "f01.iperf3.json").read_text())["args"]
    assert args == ("-c 127.0.0.1 -B 127.0.0.1 -p 15201 -C cubic -t 3 -i 1 -J "
                    "--get-server-output")
