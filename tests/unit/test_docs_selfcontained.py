"""A clone is self-contained: the docs, presets and ledger cite nothing outside the
repository (issue 31, item 4); what they cite of the seed papers is in docs/spec/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List

REPO = Path(__file__).resolve().parents[2]
#: where a reader looks: every Markdown file, the presets, the ledger's claims
SOURCES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")),
           *sorted(REPO.glob("*/README.md")),
           *sorted((REPO / "testbed/synctcp_testbed/scenario/presets").glob("*.toml")),
           *sorted((REPO / "testbed/synctcp_testbed/analysis/ledger").glob("*.py"))]
OUTSIDE = re.compile(r"\.\./shared|/work/|/root/\.|\bspec/[\w-]+\.md|seeds/\d{3}_")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
DOC_PATH = re.compile(r"\b(docs/[\w./-]+\.md)\b")


def _lines(path: Path) -> List[str]:
    return path.read_text(errors="replace").splitlines()


def test_nothing_points_outside_the_repository() -> None:
    bad = []
    for f in SOURCES:
        for n, line in enumerate(_lines(f), 1):
            for m in OUTSIDE.finditer(line):
                # docs/spec/X.md is inside; "spec/X.md" alone was the shared notes
                if m.group(0).startswith("spec/") and line[max(0, m.start() - 5):m.start()] == "docs/":
                    continue
                if "/root/.pyenv" in line:      # an example of a host path, not a reference
                    continue
                bad.append(f"{f.relative_to(REPO)}:{n}: {m.group(0)}")
    assert not bad, "references outside the repository:\n" + "\n".join(bad)


def test_links_and_cited_docs_exist_in_the_repository() -> None:
    missing = []
    for f in SOURCES:
        for n, line in enumerate(_lines(f), 1):
            targets = [(f.parent / t) for t in LINK.findall(line)
                       if f.suffix == ".md" and not re.match(r"^[a-z]+:", t)]
            targets += [REPO / p for p in DOC_PATH.findall(line)]
            for t in targets:
                real = t.resolve()
                if not real.exists() or REPO not in (real, *real.parents):
                    missing.append(f"{f.relative_to(REPO)}:{n}: {t}")
    assert not missing, "cited files that are not in the repository:\n" + "\n".join(missing)


def test_the_seed_excerpts_say_where_they_come_from() -> None:
    spec = REPO / "docs" / "spec"
    for f in sorted(spec.glob("*.md")):
        text = f.read_text()
        if f.name != "README.md":
            assert "Excerpt of the project's digest" in text and "seed 00" in text, f.name
    index = (spec / "README.md").read_text()
    for f in sorted(spec.glob("*.md")):
        if f.name != "README.md":
            assert f"]({f.name})" in index, f"docs/spec/README.md does not list {f.name}"
