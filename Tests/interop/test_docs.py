"""The documentation stands on its own: every page in docs/ is linked from the README, every
relative link (and #anchor) resolves inside the repository, nothing points outside it, and
the troubleshooting page explains every Proxy-Status error type the code can emit."""
import re
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
DOCS = REPOSITORY / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def markdown_files() -> list:
    return [REPOSITORY / "README.md", *sorted(DOCS.glob("*.md"))]


def anchors(path: Path) -> set:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_readme_links_every_page():
    readme = (REPOSITORY / "README.md").read_text()
    missing = [page.name for page in DOCS.glob("*.md") if f"(docs/{page.name})" not in readme]
    assert missing == [], "pages in docs/ the README does not link"


@pytest.mark.parametrize("page", markdown_files(), ids=lambda page: page.name)
def test_links_resolve_inside_the_repository(page):
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto: — not a file of ours
        file_part, _, anchor = target.partition("#")
        destination = (page.parent / file_part).resolve() if file_part else page
        if REPOSITORY not in destination.parents and destination != REPOSITORY:
            broken.append(f"{target}: outside the repository")
        elif not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target}: no heading #{anchor}")
    assert broken == []


def emitted_error_types() -> set:
    """Every RFC 9209 error type string in the proxy's sources."""
    pattern = re.compile(r'"((?:dns|destination|connection|proxy|tls|http)_[a-z_]+)"')
    types = set()
    for source in (REPOSITORY / "Sources").rglob("*.swift"):
        types |= set(pattern.findall(source.read_text()))
    # Configuration keys that share the prefixes are not error types.
    return types - {"proxy_auth"}


def test_troubleshooting_explains_every_error_type():
    page = (DOCS / "troubleshooting.md").read_text()
    types = emitted_error_types()
    assert {"tls_certificate_error", "dns_error", "http_request_denied"} <= types, types
    undocumented = sorted(t for t in types if f"### `{t}`" not in page)
    assert undocumented == [], "error types the code emits that docs/troubleshooting.md does not explain"
