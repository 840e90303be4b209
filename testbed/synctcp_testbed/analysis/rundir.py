"""Read a run directory of ``synctcp-testbed run`` (schema 1).

The layout is described in ``docs/testbed-rundir.md``.  :func:`load_run`
reads ``meta.json`` and ``summary.json`` at once and gives lazy access to
each case's samples (queue CSVs, TCP JSONL, ``flows.json``, ``http.csv``).

The readers are tolerant of runs that were interrupted or are still being
written: a last line without its newline is treated as truncated and
skipped, as is any line that does not parse; missing optional files read
as empty.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

SCHEMA = 1
QUEUE_COLUMNS = ("t", "qlen_pkts", "backlog_bytes", "drops", "sent_pkts", "sent_bytes", "marks")
HTTP_COLUMNS = ("t_start", "t_end", "req_bytes", "resp_bytes", "rcvd_bytes", "ok", "flow_group")

PathLike = Union[str, Path]


class RunDirError(Exception):
    """The directory is not a readable run directory of a known schema."""


class QueueSample(NamedTuple):
    """One row of ``queue-LINK.csv``."""

    t: float
    qlen_pkts: float
    backlog_bytes: float
    drops: float
    sent_pkts: float
    sent_bytes: float
    marks: float


class HttpResponse(NamedTuple):
    """One row of ``http.csv``."""

    t_start: float
    t_end: float
    req_bytes: float
    resp_bytes: float
    rcvd_bytes: float
    ok: bool
    flow_group: str

    @property
    def response_ms(self) -> float:
        """Response time, connect to last byte, in milliseconds."""
        return (self.t_end - self.t_start) * 1e3


class TcpSample(NamedTuple):
    """One line of ``tcp-NODE.jsonl``: the sender sockets at time ``t``."""

    node: str
    t: float
    sockets: List[Dict[str, Any]]


FlowKey = Tuple[str, int, str, int]
"""``(src, sport, dst, dport)`` of a TCP flow."""


@dataclass
class Bottleneck:
    """Queue statistics of one bottleneck link of a case (summary.json)."""

    link: str
    rate_mbit: Optional[float] = None
    samples: Optional[int] = None
    sample_hz: Optional[float] = None
    mean_pkts: Optional[float] = None
    p95_pkts: Optional[float] = None
    max_pkts: Optional[float] = None
    mean_delay_ms: Optional[float] = None
    p95_delay_ms: Optional[float] = None
    drops: Optional[int] = None
    marks: Optional[int] = None
    sent_pkts: Optional[int] = None
    drop_pct: Optional[float] = None
    mark_pct: Optional[float] = None
    utilization: Optional[float] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Bottleneck":
        """Build from a ``bottlenecks`` record; unknown keys stay in ``raw``."""
        known = {k: d.get(k) for k in cls.__dataclass_fields__ if k not in ("raw", "link")}
        return cls(link=str(d.get("link", "?")), raw=dict(d), **known)


@dataclass
class CaseSummary:
    """One record of ``summary.json``'s ``cases``."""

    id: str
    cc: str
    aqm: str
    t_start: Optional[float] = None
    t_end: Optional[float] = None
    duration_s: Optional[float] = None
    bottlenecks: List[Bottleneck] = field(default_factory=list)
    goodput_mbit: Optional[float] = None
    retransmits: Optional[int] = None
    flows: List[Dict[str, Any]] = field(default_factory=list)
    http: Optional[Dict[str, Any]] = None
    platform_ceiling_mbit: Optional[float] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "CaseSummary":
        """Build from a case record; unknown keys stay in ``raw``."""
        cid = str(d.get("id") or f"{d.get('cc', '?')}-{d.get('aqm', '?')}")
        cc = str(d.get("cc") or cid.split("-", 1)[0])
        aqm = str(d.get("aqm") or (cid.split("-", 1)[1] if "-" in cid else ""))
        http = d.get("http")
        return cls(
            id=cid, cc=cc, aqm=aqm,
            t_start=_opt_float(d.get("t_start")), t_end=_opt_float(d.get("t_end")),
            duration_s=_opt_float(d.get("duration_s")),
            bottlenecks=[Bottleneck.from_dict(b) for b in d.get("bottlenecks") or []
                         if isinstance(b, dict)],
            goodput_mbit=_opt_float(d.get("goodput_mbit")),
            retransmits=d.get("retransmits"),
            flows=[f for f in d.get("flows") or [] if isinstance(f, dict)],
            http=http if isinstance(http, dict) else None,
            platform_ceiling_mbit=_opt_float(d.get("platform_ceiling_mbit")),
            raw=dict(d),
        )

    def bottleneck(self, link: str) -> Optional[Bottleneck]:
        """The bottleneck record of ``link``, if this case has one."""
        return next((b for b in self.bottlenecks if b.link == link), None)


class Case:
    """A case of a run: its summary record plus lazy access to its samples."""

    def __init__(self, run_path: Path, summary: CaseSummary) -> None:
        self.summary = summary
        # a case id names one directory; anything else ("..", a path) has no samples
        self.path: Optional[Path] = run_path / summary.id if _is_name(summary.id) else None
        self._queue: Dict[str, List[QueueSample]] = {}
        self._flows: Optional[List[Dict[str, Any]]] = None
        self._http: Optional[List[HttpResponse]] = None

    @property
    def id(self) -> str:
        """Case id, ``<cc>-<aqm>``, also its directory name."""
        return self.summary.id

    def file(self, name: str) -> Optional[Path]:
        """Path of file ``name`` in the case directory (None if either is not a plain name)."""
        return self.path / name if self.path is not None and _is_name(name) else None

    def _glob(self, prefix: str, suffix: str) -> List[str]:
        """Sorted middle parts of the names ``prefix*suffix`` in the case directory."""
        if self.path is None or not self.path.is_dir():
            return []
        return sorted(p.name[len(prefix):-len(suffix)] for p in self.path.glob(f"{prefix}*{suffix}")
                      if len(p.name) > len(prefix) + len(suffix))

    def queue_links(self) -> List[str]:
        """Links with a ``queue-LINK.csv`` in the case directory, sorted."""
        return self._glob("queue-", ".csv")

    def queue(self, link: str) -> List[QueueSample]:
        """Queue samples of ``link`` (empty if the file is missing)."""
        if link not in self._queue:
            path = self.file(f"queue-{link}.csv")
            self._queue[link] = read_queue_csv(path) if path else []
        return self._queue[link]

    def tcp_nodes(self) -> List[str]:
        """Nodes with a ``tcp-NODE.jsonl`` in the case directory, sorted."""
        return self._glob("tcp-", ".jsonl")

    def tcp_samples(self) -> Iterator[TcpSample]:
        """All TCP samples of all nodes, streamed file by file (not cached)."""
        for node in self.tcp_nodes():
            path = self.file(f"tcp-{node}.jsonl")
            if path:
                yield from read_tcp_jsonl(path, node)

    def flows(self) -> List[Dict[str, Any]]:
        """``flows.json``, or the summary's per-flow records when it is missing."""
        if self._flows is None:
            path = self.file("flows.json")
            self._flows = (read_flows_json(path) if path else []) or list(self.summary.flows)
        return self._flows

    def http(self) -> List[HttpResponse]:
        """Rows of ``http.csv`` (empty if the case has none)."""
        if self._http is None:
            path = self.file("http.csv")
            self._http = read_http_csv(path) if path else []
        return self._http


def _is_name(name: str) -> bool:
    """True if ``name`` is a single, ordinary file name (no separator, not . or ..)."""
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name \
        and "\0" not in name


@dataclass
class Run:
    """A loaded run directory."""

    path: Path
    meta: Dict[str, Any]
    summary: Dict[str, Any]
    cases: List[Case]

    @property
    def scenario_name(self) -> str:
        """Scenario name from meta.json, else summary.json, else the directory name."""
        return str(self.meta.get("scenario_name") or self.summary.get("scenario") or self.path.name)

    def links(self) -> List[str]:
        """All bottleneck links, from the summary and the queue files, in first-seen order."""
        seen: Dict[str, None] = {}
        for case in self.cases:
            for b in case.summary.bottlenecks:
                seen.setdefault(b.link, None)
            for link in case.queue_links():
                seen.setdefault(link, None)
        return list(seen)

    def case(self, case_id: str) -> Optional[Case]:
        """The case named ``case_id``, if any."""
        return next((c for c in self.cases if c.id == case_id), None)


def load_run(rundir: PathLike) -> Run:
    """Load ``meta.json`` and ``summary.json`` of ``rundir``.

    Raises :class:`RunDirError` if either is missing, unreadable or of a
    schema other than :data:`SCHEMA`.
    """
    path = Path(rundir)
    if not path.is_dir():
        raise RunDirError(f"{path}: not a directory")
    meta = _read_schema_json(path / "meta.json")
    summary = _read_schema_json(path / "summary.json")
    records = summary.get("cases")
    if not isinstance(records, list):
        raise RunDirError(f"{path / 'summary.json'}: no 'cases' list")
    cases = [Case(path, CaseSummary.from_dict(r)) for r in records if isinstance(r, dict)]
    return Run(path=path, meta=meta, summary=summary, cases=cases)


def _read_schema_json(path: Path) -> Dict[str, Any]:
    """A JSON object file whose ``schema`` is :data:`SCHEMA`."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise RunDirError(f"{path.parent}: not a run directory (no {path.name})") from None
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{path}: unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: not a JSON object")
    if data.get("schema") != SCHEMA:
        raise RunDirError(f"{path}: schema {data.get('schema')!r}, this tool reads schema {SCHEMA}")
    return data


def complete_lines(path: Path) -> List[str]:
    """Lines of a text file that end with a newline (a partial last line is dropped)."""
    try:
        text = path.read_text(errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return []
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines.pop()
    return lines


def _csv_table(path: Path) -> Tuple[Dict[str, int], Iterator[List[str]]]:
    """Column indices of a CSV's header and its data rows (complete lines only).

    Rows with another number of fields than the header are skipped.
    """
    lines = complete_lines(path)
    if not lines:
        return {}, iter(())
    reader = csv.reader(lines)
    header = next(reader, [])
    cols = {name.strip(): i for i, name in enumerate(header)}
    return cols, (row for row in reader if len(row) == len(header))


def _csv_rows(path: Path) -> Iterator[Dict[str, str]]:
    """Rows of a CSV with a header as dicts (complete lines, full rows only)."""
    cols, rows = _csv_table(path)
    for row in rows:
        yield {name: row[i] for name, i in cols.items()}


def read_queue_csv(path: PathLike) -> List[QueueSample]:
    """Rows of a ``queue-LINK.csv``; ``marks`` defaults to 0 when the column is absent."""
    cols, rows = _csv_table(Path(path))
    try:
        idx = [cols[c] for c in QUEUE_COLUMNS[:-1]]
    except KeyError:
        return []
    mark = cols.get("marks")
    out: List[QueueSample] = []
    for row in rows:
        try:
            vals = [float(row[i]) for i in idx]
            vals.append(float(row[mark] or 0) if mark is not None else 0.0)
        except ValueError:
            continue
        if all(math.isfinite(v) for v in vals):
            out.append(QueueSample(*vals))
    return out


def read_http_csv(path: PathLike) -> List[HttpResponse]:
    """Rows of an ``http.csv`` (unparseable rows skipped)."""
    out: List[HttpResponse] = []
    for row in _csv_rows(Path(path)):
        try:
            nums = [float(row[c]) for c in HTTP_COLUMNS[:5]]
            ok = float(row["ok"]) != 0
        except (KeyError, ValueError):
            continue
        out.append(HttpResponse(*nums, ok=ok, flow_group=row.get("flow_group") or ""))
    return out


def read_tcp_jsonl(path: PathLike, node: str = "") -> Iterator[TcpSample]:
    """Samples of a ``tcp-NODE.jsonl``; lines that do not parse are skipped."""
    for line in complete_lines(Path(path)):
        try:
            obj = json.loads(line)
            t = float(obj["t"])
        except (ValueError, KeyError, TypeError):
            continue
        socks = obj.get("sockets")
        if isinstance(socks, list):
            yield TcpSample(node, t, [s for s in socks if isinstance(s, dict)])


def read_flows_json(path: PathLike) -> List[Dict[str, Any]]:
    """Records of a ``flows.json`` (empty if missing or unreadable)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return []
    return [f for f in data if isinstance(f, dict)] if isinstance(data, list) else []


def flow_key(rec: Dict[str, Any]) -> Optional[FlowKey]:
    """``(src, sport, dst, dport)`` of a socket or flows.json record, if complete."""
    try:
        return (str(rec["src"]), int(rec["sport"]), str(rec["dst"]), int(rec["dport"]))
    except (KeyError, TypeError, ValueError):
        return None


def flow_labeler(flows: List[Dict[str, Any]]) -> Callable[[Dict[str, Any]], str]:
    """A function naming a socket by its flows.json ``id``, else ``src:sport``.

    A socket matches a flow on the full 4-tuple, or else on ``(sport,
    dport)`` when that pair names exactly one flow (addresses may differ
    when the sender sees a NATed or link-local address).
    """
    by_key: Dict[FlowKey, str] = {}
    by_ports: Dict[Tuple[int, int], List[str]] = {}
    for f in flows:
        key = flow_key(f)
        if key is None or f.get("id") is None:
            continue
        by_key[key] = str(f["id"])
        by_ports.setdefault((key[1], key[3]), []).append(str(f["id"]))

    def label(sock: Dict[str, Any]) -> str:
        key = flow_key(sock)
        if key is not None:
            if key in by_key:
                return by_key[key]
            ids = by_ports.get((key[1], key[3]), [])
            if len(ids) == 1:
                return ids[0]
        return f"{sock.get('src', '?')}:{sock.get('sport', '?')}"

    return label


def _opt_float(v: Any) -> Optional[float]:
    """``float(v)``, or None when ``v`` is missing or not a number."""
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
