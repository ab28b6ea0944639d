"""The docs stay true: docs/architecture.md's layer arrows are the DEPENDS lists of CMake, and every
subcommand the CLI registers has its row in docs/commands.md. Reads sources only; no build needed."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO / "docs" / "architecture.md"


def cmake_layers() -> dict:
    """layer -> set of layers it DEPENDS on, from every cuparity_layer/cuparity_harness_layer call."""
    text = "\n".join(p.read_text(encoding="utf-8")
                     for p in [REPO / "CMakeLists.txt", REPO / "cases" / "kernels" / "CMakeLists.txt"])
    text = re.sub(r"#[^\n]*", "", text)
    layers = {}
    for call in re.finditer(r"\bcuparity_(?:harness_)?layer\(\s*(\w+)([^)]*)\)", text):
        name, args = call.group(1), call.group(2).split()
        deps, taking = set(), False
        for word in args:
            if word in ("DEPENDS",):
                taking = True
            elif word in ("LIBS", "SOURCES", "FOLDER", "KIND"):
                taking = False
            elif taking:
                deps.add(word)
        layers[name] = deps
    return layers


def executable_links() -> set:
    """What the project's own `cuparity` executable links."""
    text = re.sub(r"#[^\n]*", "", (REPO / "CMakeLists.txt").read_text(encoding="utf-8"))
    link = re.search(r"target_link_libraries\(cuparity PRIVATE([^)]*)\)", text)
    return set(link.group(1).split())


def doc_layers(text: str, known: set) -> dict:
    """layer -> the layers named in the last column of its row of the layer table."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or cells[0] not in known:
            continue
        links = re.sub(r"\([^)]*\)", "", cells[-1])
        rows[cells[0]] = {w for w in re.findall(r"[a-z_]+", links) if w in known}
    return rows


def arrow_differences(doc_text: str) -> list:
    layers = cmake_layers()
    rows = doc_layers(doc_text, set(layers))
    problems = []
    for name, deps in sorted(layers.items()):
        if name not in rows:
            problems.append(f"{name}: no row in docs/architecture.md's layer table")
        elif rows[name] != deps:
            problems.append(f"{name}: the docs say {sorted(rows[name])}, CMake says {sorted(deps)}")
    return problems


def test_the_layer_table_is_the_cmake_arrows():
    layers = cmake_layers()
    assert {"platform", "driver", "session", "capture", "framework", "run", "cases", "kernels"} <= set(layers)
    assert layers["session"] == {"driver", "backend_internal", "backend_map", "config"}
    assert arrow_differences(ARCHITECTURE.read_text(encoding="utf-8")) == []


def test_the_executable_is_the_runner_library_and_the_cases():
    # main() is in the cli layer (cuparity::main), so a user's executable is a runner just as
    # much: the project's own adds its built-in cases and kernels and nothing else.
    assert executable_links() == {"cuparity_cases", "cuparity_kernels", "cuparity::main"}
    row = next(l for l in ARCHITECTURE.read_text(encoding="utf-8").splitlines()
               if l.startswith("| cli |"))
    assert "cuparity::main" in row


def test_a_removed_arrow_is_caught():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    row = next(l for l in text.splitlines() if l.startswith("| session |"))
    broken = text.replace(row, row.replace("backend_internal, ", ""))
    assert broken != text
    assert arrow_differences(broken) == [
        "session: the docs say ['backend_map', 'config', 'driver'], CMake says "
        "['backend_internal', 'backend_map', 'config', 'driver']"]


def subcommands() -> set:
    names = set()
    for source in (REPO / "harness" / "cli").glob("*.cpp"):
        names |= set(re.findall(r'add_subcommand\(\s*"([a-z]+)"', source.read_text(encoding="utf-8")))
    return names


def table_commands(text: str) -> list:
    """Each `cuparity NAME` in the first column of a table row, in order."""
    names = []
    for line in text.splitlines():
        if line.startswith("| `cuparity "):
            first = line.strip().strip("|").split("|")[0]
            names += re.findall(r"`cuparity ([a-z]+)`", first)
    return names


def test_every_subcommand_has_its_row_in_the_commands_page_and_the_architecture():
    # docs/commands.md's table is the reference of subcommands: a row for each one the CLI
    # registers, and none for one it does not; the README sends readers there.
    names = subcommands()
    assert {"run", "capture", "audit", "helper"} <= names
    rows = table_commands((REPO / "docs" / "commands.md").read_text(encoding="utf-8"))
    assert sorted(rows) == sorted(names), "docs/commands.md's table of subcommands"
    assert "(docs/commands.md)" in (REPO / "README.md").read_text(encoding="utf-8")
    cli_row = next(l for l in ARCHITECTURE.read_text(encoding="utf-8").splitlines()
                   if l.startswith("| cli |"))
    missing_docs = sorted(n for n in names if f"`{n}`" not in cli_row)
    assert missing_docs == []


def test_a_missing_or_unknown_subcommand_row_is_caught():
    text = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    row = next(l for l in text.splitlines() if l.startswith("| `cuparity merge` |"))
    assert "merge" not in table_commands(text.replace(row + "\n", ""))
    assert "mrege" in table_commands(text.replace("| `cuparity merge` |", "| `cuparity mrege` |"))
