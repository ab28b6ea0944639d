"""tests/layers/check_architecture.py catches each way docs/architecture.md can drift from the build."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_architecture", REPO / "tests/layers/check_architecture.py")
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

LAYERS = {"platform": ("harness/platform/", set()), "driver": ("harness/driver/", {"platform"})}
GOOD = """# Architecture

```mermaid
flowchart BT
  driver --> platform
```

- `harness/platform/` **platform**: processes.
- `harness/driver/` **driver**: the facade.

## More
"""


def test_a_matching_page_passes():
    assert check.differences(LAYERS, GOOD) == []


def test_a_missing_arrow_is_caught():
    assert check.differences(LAYERS, GOOD.replace("  driver --> platform\n", "")) == [
        "arrow driver --> platform: in the build, not in the diagram"]


def test_an_extra_arrow_is_caught():
    page = GOOD.replace("  driver --> platform\n", "  driver --> platform\n  platform --> driver\n")
    assert check.differences(LAYERS, page) == ["arrow platform --> driver: in the diagram, not in the build"]


def test_a_missing_or_moved_folder_is_caught():
    assert "layer driver (harness/driver/): no line in the folder list" in check.differences(
        LAYERS, GOOD.replace("- `harness/driver/` **driver**: the facade.\n", ""))
    assert "layer driver: the folder list says harness/drv/, the build harness/driver/" in check.differences(
        LAYERS, GOOD.replace("`harness/driver/`", "`harness/drv/`"))


def test_a_folder_the_build_lacks_is_caught():
    page = GOOD.replace("## More", "- `harness/gone/` **gone**: old.\n\n## More")
    assert check.differences(LAYERS, page) == ["folder list names gone, which the build does not have"]


def test_the_diagram_must_open_the_page():
    page = "# Architecture\n\n## First\n\n" + GOOD.split("\n", 1)[1]
    assert "the diagram is not at the page's opening (a section comes before it)" in check.differences(LAYERS, page)


def test_the_real_page_matches_the_real_cmake():
    # Without a build: the same comparison against the DEPENDS read from CMake's sources, which
    # test_docs_true already parses; the CTest architecture_doc compares with the build's own list.
    from test_docs_true import cmake_layers
    text = (REPO / "docs/architecture.md").read_text(encoding="utf-8")
    folders = check.doc_folders(text)
    layers = {name: (folders.get(name, "?"), deps) for name, deps in cmake_layers().items()}
    assert check.differences(layers, text) == []
