#!/usr/bin/env python3
"""docs/architecture.md against the build's layer list: the mermaid diagram's arrows must be the
DEPENDS of every layer, and the folder list (one line per folder) must name every layer with its
folder, no more. Usage: check_architecture.py LAYERS_TSV ARCHITECTURE_MD; exit 0, or 1 naming
every difference."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def build_layers(tsv: Path) -> dict[str, tuple[str, set[str]]]:
    """layer -> (folder, DEPENDS) from the file CMake wrote."""
    layers = {}
    for n, line in enumerate(tsv.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split("\t")
        if len(parts) != 3:
            raise SystemExit(f"{tsv}:{n}: expected 'name<TAB>folder<TAB>deps', got {line!r}")
        name, folder, deps = parts
        layers[name] = (folder.rstrip("/") + "/", {d for d in deps.split(",") if d})
    return layers


def doc_arrows(text: str) -> set[tuple[str, str]] | None:
    """The arrows of the first mermaid block: (from, to); None without a block."""
    block = re.search(r"```mermaid\n(.*?)```", text, re.S)
    if not block:
        return None
    return set(re.findall(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", block.group(1), re.M))


def doc_folders(text: str) -> dict[str, str]:
    """layer -> folder, from the lines "- `folder/` **layer**: ..."."""
    return {m.group(2): m.group(1) for m in re.finditer(r"^- `([^`]+/)` \*\*(\w+)\*\*:", text, re.M)}


def differences(layers: dict[str, tuple[str, set[str]]], text: str) -> list[str]:
    problems = []
    built = {(name, dep) for name, (_, deps) in layers.items() for dep in deps}
    drawn = doc_arrows(text)
    if drawn is None:
        problems.append("no ```mermaid diagram")
        drawn = set()
    problems += [f"arrow {a} --> {b}: in the build, not in the diagram" for a, b in sorted(built - drawn)]
    problems += [f"arrow {a} --> {b}: in the diagram, not in the build" for a, b in sorted(drawn - built)]
    listed = doc_folders(text)
    for name, (folder, _) in sorted(layers.items()):
        if name not in listed:
            problems.append(f"layer {name} ({folder}): no line in the folder list")
        elif listed[name] != folder:
            problems.append(f"layer {name}: the folder list says {listed[name]}, the build {folder}")
    problems += [f"folder list names {n}, which the build does not have" for n in sorted(set(listed) - set(layers))]
    first = text.find("```mermaid")
    if first != -1 and text.find("\n## ") != -1 and text.find("\n## ") < first:
        problems.append("the diagram is not at the page's opening (a section comes before it)")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: check_architecture.py LAYERS_TSV ARCHITECTURE_MD", file=sys.stderr)
        return 2
    tsv, doc = Path(argv[1]), Path(argv[2])
    problems = differences(build_layers(tsv), doc.read_text(encoding="utf-8"))
    for p in problems:
        print(f"{doc}: {p}", file=sys.stderr)
    if not problems:
        print(f"{doc}: the diagram and folder list match the build's {tsv.name}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
