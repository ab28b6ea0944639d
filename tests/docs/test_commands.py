"""Every command README.md and docs/*.md show runs as written.

Each line of a ```sh or ```bash block is a command (comment lines skipped, backslash
continuations joined). A page's commands run in order, as a reader would type them into one
terminal: in a scratch copy of the repository (tracked and unignored files, build/ a link to the
real build), each in its own bash, with the variables it exported and the folder it moved to
carried to the next. Each must exit 0, or the code its trailing comment states: `# exit 1: why`
(a trailing comment that starts `exit N` without the colon is refused as ambiguous).
GPU commands run on the simulated driver: NUMBA_CUDA_DRIVER names it, as `--driver sim` would,
and the fault shim forwards to it (CUPARITY_SHIM_TARGET). Python packages CI lacks (cuda.bindings,
numba) are the capture doubles (tools/capture/tests/doubles). scripts/run is given the built
executable (CUPARITY_BIN), so it neither installs nor builds.

A block that cannot run here (it installs into the system, builds another project, or is this
test's own caller) says so on the line before its fence, with the test that covers it instead:
`<!-- commands-test: not run: <why> -->`. Its commands are still checked for placeholders: no
fenced command holds a word in CAPITALS that is not a variable (`OLD_RUN_DIR`): a reader could not
run it as written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CUPARITY_BUILD_DIR", REPO / "build")).resolve()
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DOUBLES = "tools/capture/tests/doubles"
COMMAND_TIMEOUT_S = 240

FENCE = re.compile(r"^\s*```\s*([\w+-]*)")
NOT_RUN = re.compile(r"^<!--\s*commands-test:\s*not run:\s*(\S.*?)\s*-->\s*$")
EXIT = re.compile(r"^exit (\d+)(?::|$)")
LOOKS_LIKE_EXIT = re.compile(r"^exit \d+\b")
# A word in capitals that is not a variable being set (`NAME=`) or read (`$NAME`, `${NAME}`).
PLACEHOLDER = re.compile(r"(?<![$\w{])([A-Z][A-Z0-9]*_?[A-Z0-9_]*[A-Z0-9])\b(?![=\w])")
# Words in capitals that are literal arguments, not placeholders.
LITERALS = {"DEB"}


@dataclass
class Command:
    page: Path
    line: int  # of the command's first line, 1-based
    text: str  # as written, continuations joined, its trailing comment kept
    code: str  # without the trailing comment
    expect: int
    not_run: str  # why its block is not run, else ""

    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def split_comment(line: str) -> tuple[str, str]:
    """(code, comment): the comment starts at a '#' that begins a word outside quotes."""
    quote = ""
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
        i += 1
    return line.rstrip(), ""


def commands(page: Path, text: str | None = None) -> list[Command]:
    lines = (page.read_text(encoding="utf-8") if text is None else text).splitlines()
    found = []
    fence = None  # the language of the block we are in, "" for one we do not run
    not_run = ""
    pending, start = "", 0
    for number, raw in enumerate(lines, 1):
        match = FENCE.match(raw)
        if match and fence is None:
            fence = match.group(1)
            before = next((l for l in reversed(lines[:number - 1]) if l.strip()), "")
            reason = NOT_RUN.match(before.strip())
            not_run = reason.group(1) if reason else ""
            continue
        if match:
            assert not pending, f"{page.name}:{start}: a continuation runs into the block's end"
            fence = None
            continue
        if fence not in ("sh", "bash"):
            continue
        if not pending and (not raw.strip() or raw.strip().startswith("#")):
            continue
        if not pending:
            start = number
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1].strip() + " "
            continue
        whole = pending + raw.strip()
        pending = ""
        code, comment = split_comment(whole)
        annotated = EXIT.match(comment)
        assert annotated or not LOOKS_LIKE_EXIT.match(comment), (
            f"{page.name}:{start}: '# {comment}': write '# exit N: why' to expect exit N")
        found.append(Command(page, start, whole.strip(), code.strip(),
                             int(annotated.group(1)) if annotated else 0, not_run))
    return found


def placeholders(command: Command) -> list[str]:
    words = PLACEHOLDER.findall(re.sub(r"'[^']*'", "''", command.code))
    return [w for w in words if w not in LITERALS and not re.fullmatch(r"[A-Z]", w)]


# ------------------------------------------------------------------ the parser, on its own


def test_the_parser_joins_continuations_and_reads_the_exit_annotation():
    page = REPO / "README.md"
    text = "\n".join([
        "<!-- commands-test: not run: shown only -->",
        "```sh",
        "# a comment line",
        "a --x 'y # not a comment' \\",
        "  --z   # trailing",
        "b           # exit 3: it fails so",
        "b2          # exit 4",
        "```",
        "```toml",
        "c = 1",
        "```",
        "```bash",
        "NAME=1 d $NAME OLD_RUN_DIR/x",
        "```",
    ])
    found = commands(page, text)
    assert [(c.line, c.code, c.expect, c.not_run) for c in found] == [
        (4, "a --x 'y # not a comment' --z", 0, "shown only"),
        (6, "b", 3, "shown only"),
        (7, "b2", 4, "shown only"),
        (13, "NAME=1 d $NAME OLD_RUN_DIR/x", 0, ""),
    ]
    assert placeholders(found[3]) == ["OLD_RUN_DIR"]
    with pytest.raises(AssertionError, match="write '# exit N: why'"):
        commands(page, "```sh\nb   # exit 1 when it fails\n```\n")
    assert placeholders(found[0]) == []


# ------------------------------------------------------------------ every page


def all_commands() -> list[Command]:
    return [c for page in PAGES for c in commands(page)]


def test_no_fenced_command_holds_a_placeholder():
    found = {c.where() + ": " + c.text: placeholders(c) for c in all_commands()}
    assert {k: v for k, v in found.items() if v} == {}


def test_every_block_not_run_says_why_and_the_readme_example_runs():
    everything = all_commands()
    assert len(everything) >= 30
    readme = [c for c in everything if c.page.name == "README.md"]
    assert any(c.code == "scripts/run matrices/smoke.toml" and not c.not_run for c in readme)
    skipped = [c for c in everything if c.not_run]
    assert len(skipped) <= len(everything) // 4, [c.where() for c in skipped]


def scratch_copy(dest: Path) -> None:
    """The working tree as a reader has it: tracked and unignored files, build/ linked."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=False)
    if listed.returncode == 0:
        for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
            source = REPO / name
            if not (source.is_file() or source.is_symlink()):
                continue  # deleted in the working tree, or a submodule
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    else:  # not a git checkout: everything but the outputs
        shutil.copytree(REPO, dest, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".git", "build", "build-*", "cuparity-results", "__pycache__"))
    (dest / "build").unlink(missing_ok=True)
    (dest / "build").symlink_to(BUILD, target_is_directory=True)


def environment(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("NUMBA_CUDA_", "CUDA_PYTHON_", "CUPARITY_", "GTEST_"))}
    sim = str(root / "build" / "bin" / "libcuparity_simdriver.so")
    env.update(NUMBA_CUDA_DRIVER=sim, CUPARITY_SHIM_TARGET=sim, CUPARITY_FAKE_DRIVER=sim,
               CUPARITY_BIN=str(root / "build" / "bin" / "cuparity"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(root / DOUBLES),
                                                        env.get("PYTHONPATH", "")])))
    return env


def run_page(page: Path, root: Path) -> list[tuple[Command, subprocess.CompletedProcess, float]]:
    """Runs the page's commands in order in root; returns each with its result."""
    state = root / ".commands-test"
    state.mkdir()
    (state / "cwd").write_text(str(root))
    env = environment(root)
    subprocess.run(["bash", "-c", f"export -p > {state}/env"], env=env, check=True)
    done = []
    for command in commands(page):
        if command.not_run:
            continue
        script = (f'source "{state}/env"\ncd "$(cat "{state}/cwd")"\n{command.text}\n'
                  f'__status=$?\nexport -p > "{state}/env"\npwd > "{state}/cwd"\nexit $__status\n')
        began = time.monotonic()
        try:
            result = subprocess.run(["bash", "-c", script], cwd=root, env=env, text=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"{command.where()}: {command.text}\n  ran past {COMMAND_TIMEOUT_S} s\n"
                        f"{(e.output or b'')[-3000:]!r}")
        done.append((command, result, time.monotonic() - began))
        if result.returncode != command.expect:
            tail = "\n".join(result.stdout.splitlines()[-40:])
            pytest.fail(f"{command.where()}: {command.text}\n  exit {result.returncode}, "
                        f"the page says {command.expect}\n{tail}", pytrace=False)
    return done


@pytest.fixture(scope="module")
def built():
    for name in ("cuparity", "libcuparity_simdriver.so", "libcuparity_nvidia.so"):
        assert (BUILD / "bin" / name).exists(), f"build first (scripts/build): {BUILD / 'bin' / name}"


@pytest.mark.parametrize("page", [p for p in PAGES if any(not c.not_run for c in commands(p))],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_the_commands_of_a_page_run_as_written(page, tmp_path, built):
    root = tmp_path / "repo"
    scratch_copy(root)
    run_page(page, root)


# ------------------------------------------------------------------ the README's example output


def normalised(line: str) -> str:
    line = re.sub(r"(?<=[\s=])/\S*?/build/", "build/", line)  # the machine's checkout
    line = re.sub(r"\d{8}-\d{6}", "<date>", line)             # a run folder's name
    return re.sub(r"\d+\.\d+", "<n>", line).rstrip()            # times


def test_the_readme_example_shows_what_it_prints(tmp_path, built):
    """The output block after README's `scripts/run matrices/smoke.toml` is that command's own
    output, trimmed ('...' marks a cut), its times, dates and checkout path aside. The lines of
    cuparity env's explanation are the ones a machine without a GPU prints; this test names the
    simulated driver itself, so it sees none."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(?:.*\n)*?scripts/run matrices/smoke.toml\n(?:.*\n)*?```\n"
                      r"(?:.*\n)*?```text\n((?:.*\n)*?)```", text)
    assert block, "README.md: no ```text block after `scripts/run matrices/smoke.toml`"
    root = tmp_path / "repo"
    scratch_copy(root)
    result = subprocess.run(["bash", "scripts/run", "matrices/smoke.toml"], cwd=root,
                            env=environment(root), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT_S)
    assert result.returncode == 0, result.stdout
    printed = [normalised(l) for l in result.stdout.splitlines()]
    shown, missing, under_driver_message = block.group(1).splitlines(), [], False
    for line in shown:
        if line.startswith("scripts/run: no usable CUDA driver"):
            under_driver_message = True
            continue
        if under_driver_message and line.startswith("  "):
            continue
        under_driver_message = False
        if line.strip() in ("...", "") or normalised(line) in printed:
            continue
        missing.append(line)
    assert missing == [], "\n".join(["README.md shows lines scripts/run does not print:",
                                     *missing, "it printed:", result.stdout])
