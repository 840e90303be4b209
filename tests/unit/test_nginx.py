"""The HTTP workload's nginx server: its files and configuration (synctcp_testbed.traffic.nginx)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from synctcp_testbed.traffic.http import client, model
from synctcp_testbed.traffic.nginx import conf, make_www
from synctcp_testbed.case.scripts import nginx_setup, servers_script
from synctcp_testbed.plan.flows import HttpPair, Plan
from synctcp_testbed.scenario import ScenarioError, from_dict


def test_www_holds_sparse_files_of_each_size(tmp_path: Path) -> None:
    assert make_www(tmp_path / "www", [0, 5, 5, 30_000_000]) == 3
    assert sorted(p.name for p in (tmp_path / "www").iterdir()) == ["0", "30000000", "5"]
    big = tmp_path / "www" / "30000000"
    assert big.stat().st_size == 30_000_000
    assert big.stat().st_blocks * 512 < 1_000_000          # a hole, not 30 MB written
    with pytest.raises(ValueError):
        make_www(tmp_path / "w2", [-1])


def test_response_sizes_are_the_clients_own_plan() -> None:
    cfg = client.ClientConfig(host="10.0.0.1", port=8080, family=2, load_pct=85,
                            capacity_mbit=10, seconds=30, seed=4001, out=io.StringIO())
    gen = client.LoadGenerator(cfg)
    asked = {c.resp_bytes for c in model.plan(gen.rate, 30, 4001, gen.model, gen.shape)}
    assert model.response_sizes(85, 10, 30, 4001) == asked and len(asked) > 100
    assert model.response_sizes(85, 10, 30, 4002) != asked


def test_nginx_setup_and_script(tmp_path: Path) -> None:
    class Topo:
        def ns(self, node: str) -> str:
            return f"st-{node}"

    plan = Plan(http=[HttpPair("s1", "r1", "10.0.1.1", 35.0), HttpPair("s2", "r2", "10.0.2.1", 35.0)])
    nginx_setup(plan, tmp_path, 10.0, 20.0, seed=3)
    for i, h in enumerate(plan.http):
        www = {int(p.name) for p in (tmp_path / h.server / "www").iterdir()}
        assert www == model.response_sizes(35.0, 10.0, 20.0, 3000 + i)
        text = (tmp_path / h.server / "nginx.conf").read_text()
        assert f"listen {h.server_addr}:8080" in text and f"root {tmp_path / h.server}/www;" in text
    script = servers_script(plan, Topo(), tmp_path, 20.0, tmp_path)  # type: ignore[arg-type]
    assert f"ip netns exec st-s1 nginx -c {tmp_path}/s1/nginx.conf -g 'daemon off;'" in script
    assert "synctcp_testbed.traffic.http" not in script
    assert "synctcp_testbed.traffic.http server" in " ".join(
        servers_script(plan, Topo(), tmp_path, 20.0).split())  # type: ignore[arg-type]


def test_conf_and_http_server_key() -> None:
    text = conf(Path("/t"), "10.0.0.1", 100, port=9000)
    assert "listen 10.0.0.1:9000 backlog=100;" in text and "worker_rlimit_nofile 200;" in text
    base = {"name": "x", "topology": {"rtts_ms": [40]}}
    assert from_dict({**base, "traffic": {"http_server": "asyncio"}}).traffic.http_server == "asyncio"
    assert from_dict(base).traffic.http_server == "nginx"
    with pytest.raises(ScenarioError, match="traffic.http_server 'apache': one of nginx, asyncio"):
        from_dict({**base, "traffic": {"http_server": "apache"}}, where="x.toml")
