"""The documentation against the package: every finding code on the codes page, links that resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wheeldoctor.model.findings import Code

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
README = REPO / "README.md"


def documented_codes() -> set[str]:
    """The codes docs/codes.md explains: the first cell of a table row."""
    text = (DOCS / "codes.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| (WD\d{3}) \|", text, re.MULTILINE))


def test_every_code_the_package_defines_is_on_the_codes_page() -> None:
    defined = {code.value for code in Code}
    assert defined, "the Code enum is empty"
    assert not defined - documented_codes(), f"docs/codes.md lacks {sorted(defined - documented_codes())}"


def test_the_codes_page_names_no_code_the_package_lacks() -> None:
    assert not documented_codes() - {code.value for code in Code}


def test_what_to_do_is_the_same_in_the_codes_page_and_in_the_package() -> None:
    """SARIF's rules carry ``CODE_HELP``'s ``todo``: it says what docs/codes.md's last column says (links as words)."""
    from wheeldoctor.model.code_help import CODE_HELP

    text = (DOCS / "codes.md").read_text(encoding="utf-8")
    told = {}
    for code, todo in re.findall(r"^\| (WD\d{3}) \|.*\| (.*) \|$", text, re.MULTILINE):
        told.setdefault(code, re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", todo))
    assert {code.value: meaning.todo for code, meaning in CODE_HELP.items()} == told


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    """Every relative link of the README and docs/ names a file that exists (and a heading that does)."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code blocks are not links
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue  # a URL
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target} does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{page.name}: {target}: no such heading"


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE):
        found.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return found


def test_the_readme_stays_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300
