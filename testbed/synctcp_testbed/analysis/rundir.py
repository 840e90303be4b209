"""Read a run directory of ``synctcp-testbed run`` (schema 1): one reader per file.

The layout is described in ``docs/testbed-rundir.md``.  :func:`load_run`
reads ``meta.json`` and ``summary.json`` at once and gives lazy access to
each case's samples.  Every file of a run directory has exactly one reader
here, used by the runner's collection, the report, the plots and the
commands alike:

* ``queue-LINK.csv`` (qsampler): :func:`read_queue_csv`;
* ``http.csv`` and ``http-CLIENT.csv`` (the HTTP load generator):
  :func:`read_http_csv`;
* ``tcp-NODE.jsonl`` (the inet_diag sampler): :func:`read_tcp_jsonl`;
* ``flows.json``: :func:`read_flows_json`.

One policy: every line is read or the reader fails.  A line that does not
parse, a row with another number of fields than its header, a value that is
not a number, a last line cut off without its newline: a
:class:`RunDirError` of one line naming the file and the line, never a
sample silently left out.  A case's optional files that are absent read as
empty (:class:`Case`).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from ..traffic.http.records import CSV_FIELDS as HTTP_COLUMNS
from ..traffic.http.records import HttpRow

SCHEMA = 1
#: the columns of queue-LINK.csv (qsampler.c writes them); ``marks`` may be absent (older runs)
QUEUE_COLUMNS = ("t", "qlen_pkts", "backlog_bytes", "drops", "sent_pkts", "sent_bytes", "marks")

#: the columns qsampler adds for a dualpi2 qdisc: its L and C queues
DUALQ_COLUMNS = ("t", "l_delay_us", "c_delay_us", "l_enq_pkts", "c_enq_pkts", "step_marks",
                 "prob")

PathLike = Union[str, Path]


class RunDirError(Exception):
    """A run directory or one of its files that cannot be read; the message names it."""


class QueueSample(NamedTuple):
    """One row of ``queue-LINK.csv``."""

    t: float
    qlen_pkts: float
    backlog_bytes: float
    drops: float
    sent_pkts: float
    sent_bytes: float
    marks: float


class DualQSample(NamedTuple):
    """The L and C queues of a dualpi2 qdisc in one row of ``queue-LINK.csv``:
    each queue's head packet's sojourn (µs), the packets each took in and the
    L queue's step marks (cumulative), the PI2 probability (of 2^32)."""

    t: float
    l_delay_us: float
    c_delay_us: float
    l_enq_pkts: float
    c_enq_pkts: float
    step_marks: float
    prob: float


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
    p99_delay_ms: Optional[float] = None
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
        self._http: Optional[List[HttpRow]] = None

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
        """Queue samples of ``link`` (empty if the case has no such file)."""
        if link not in self._queue:
            path = self.file(f"queue-{link}.csv")
            self._queue[link] = read_queue_csv(path) if path and path.exists() else []
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
            got = read_flows_json(path) if path and path.exists() else []
            self._flows = got or list(self.summary.flows)
        return self._flows

    def http(self) -> List[HttpRow]:
        """Rows of ``http.csv`` (empty if the case has none)."""
        if self._http is None:
            path = self.file("http.csv")
            self._http = read_http_csv(path) if path and path.exists() else []
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


#: a run directory's path, or the run already loaded
RunLike = Union[PathLike, Run]


def as_run(rundir: RunLike) -> Run:
    """A loaded :class:`Run` (``rundir`` may already be one)."""
    return rundir if isinstance(rundir, Run) else load_run(rundir)


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


def _lines(path: Path) -> List[str]:
    """The lines of a text file, each with its newline; RunDirError when it cannot be
    read or its last line has no newline (cut off: its writer stopped mid-line)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise RunDirError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: cannot read it: {exc}") from None
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        raise RunDirError(f"{path}:{len(lines)}: the last line is cut off (no newline at its "
                          f"end): its writer stopped in the middle of it")
    return lines


def _csv_rows(path: Path, what: str, need: Sequence[str]
              ) -> Tuple[Dict[str, int], Iterator[Tuple[int, List[str]]]]:
    """Column indices of a CSV's header (every column of ``need`` there: else it is not
    ``what``) and its data rows with their line numbers; a row with another number of
    fields than the header is a RunDirError."""
    lines = _lines(path)
    if not lines:
        raise RunDirError(f"{path}: empty, not even a header")
    header = next(csv.reader(lines[:1]))
    cols = {name.strip(): i for i, name in enumerate(header)}
    missing = [c for c in need if c not in cols]
    if missing:
        raise RunDirError(f"{path}:1: not {what}: no column {', '.join(missing)}")

    def rows() -> Iterator[Tuple[int, List[str]]]:
        for n, row in enumerate(csv.reader(lines[1:]), start=2):
            if len(row) != len(header):
                raise RunDirError(f"{path}:{n}: {len(row)} fields where the header has "
                                  f"{len(header)}")
            yield n, row

    return cols, rows()


def _number(path: Path, n: int, column: str, text: str) -> float:
    """``text`` of ``column`` on line ``n`` as a finite float, or RunDirError."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise RunDirError(f"{path}:{n}: {column} is {text!r}, not a number")
    return value


def _count(path: Path, n: int, column: str, text: str) -> int:
    """``text`` of ``column`` on line ``n`` as a whole number, or RunDirError."""
    try:
        return int(text)
    except ValueError:
        raise RunDirError(f"{path}:{n}: {column} is {text!r}, not a whole number") from None


def read_queue_csv(path: PathLike) -> List[QueueSample]:
    """Rows of a ``queue-LINK.csv``; ``marks`` is 0 when the column is absent (older runs)."""
    path = Path(path)
    cols, rows = _csv_rows(path, "a queue CSV", QUEUE_COLUMNS[:-1])
    mark = cols.get("marks")
    out: List[QueueSample] = []
    for n, row in rows:
        vals = [_number(path, n, c, row[cols[c]]) for c in QUEUE_COLUMNS[:-1]]
        vals.append(_number(path, n, "marks", row[mark] or "0") if mark is not None else 0.0)
        out.append(QueueSample(*vals))
    return out


def read_dualq_csv(path: PathLike) -> Optional[List[DualQSample]]:
    """The dualpi2 columns of a ``queue-LINK.csv`` (:data:`DUALQ_COLUMNS`), or None
    when it has none (another qdisc)."""
    path = Path(path)
    lines = _lines(path)
    if not lines or "l_delay_us" not in next(csv.reader(lines[:1])):
        return None
    cols, rows = _csv_rows(path, "a dualpi2 queue CSV", DUALQ_COLUMNS)
    return [DualQSample(*(_number(path, n, c, row[cols[c]]) for c in DUALQ_COLUMNS))
            for n, row in rows]


def read_http_csv(path: PathLike, group: Optional[str] = None) -> List[HttpRow]:
    """Rows of an ``http.csv`` (or a client's ``http-CLIENT.csv``), only those of
    ``group`` if given."""
    path = Path(path)
    cols, rows = _csv_rows(path, "an http.csv", HTTP_COLUMNS)
    out: List[HttpRow] = []
    for n, row in rows:
        rec = {c: row[cols[c]] for c in HTTP_COLUMNS}
        if rec["ok"].strip() not in ("0", "1"):
            raise RunDirError(f"{path}:{n}: ok is {rec['ok']!r}, not 0 or 1")
        req, resp, rcvd = (_count(path, n, c, rec[c])
                           for c in ("req_bytes", "resp_bytes", "rcvd_bytes"))
        out.append(HttpRow(_number(path, n, "t_start", rec["t_start"]),
                           _number(path, n, "t_end", rec["t_end"]), req, resp, rcvd,
                           ok=rec["ok"].strip() == "1", flow_group=rec["flow_group"]))
    return [r for r in out if group is None or r.flow_group == group]


def read_tcp_jsonl(path: PathLike, node: str = "") -> Iterator[TcpSample]:
    """Samples of a ``tcp-NODE.jsonl``: one JSON object per line, its time ``t`` and
    its ``sockets`` (a list of objects)."""
    path = Path(path)
    for n, line in enumerate(_lines(path), start=1):
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise RunDirError(f"{path}:{n}: not JSON ({exc})") from None
        t = obj.get("t") if isinstance(obj, dict) else None
        socks = obj.get("sockets") if isinstance(obj, dict) else None
        if (not isinstance(t, (int, float)) or isinstance(t, bool) or not isinstance(socks, list)
                or not all(isinstance(s, dict) for s in socks)):
            raise RunDirError(f"{path}:{n}: not a sample (an object with a time t and a list "
                              f"of sockets)")
        yield TcpSample(node, float(t), socks)


def read_flows_json(path: PathLike) -> List[Dict[str, Any]]:
    """Records of a ``flows.json`` (a list of objects)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RunDirError(f"{path}: cannot read it: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(f, dict) for f in data):
        raise RunDirError(f"{path}: not a list of flow records")
    return data


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
