#!/usr/bin/env python3
"""Field-by-field check of a package capture (binding_map/1, cuparity_capture.py) against the
universal capture of the same process (binding_map/2, `cuparity capture -- python3
cuparity_capture.py ...`, whose child process with --child-fd imports the package): every function
the package holds a pointer for must appear among what that process bound, with the same symbol in
the same library.

    python3 tools/capture/cross_check.py PACKAGE_MAP PROCESS_MAP

Prints one line per disagreement and a count; exit 0 when they agree, 1 when they do not, 2 for a
file that is no such map. Standard library only, like cuparity_capture.py."""
import json
import os
import sys


def load(path, schema):
    try:
        with open(path, encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"cross_check.py: {path}: {e}")
    if not isinstance(m, dict) or m.get("schema") != schema:
        print(f"cross_check.py: {path}: schema: expected {schema!r}", file=sys.stderr)
        sys.exit(2)
    return m


def real(path):
    return os.path.realpath(path) if path else path


def capture_process(process_map):
    """The pid of the process that imported the package: cuparity_capture.py runs it in a child
    of its own (argv with --child-fd); a map of an older capture has only the one process."""
    ran_script = [p for p in process_map["processes"]
                  if any(a.endswith("cuparity_capture.py") for a in p["argv"])]
    for p in ran_script:
        if "--child-fd" in p["argv"]:
            return p["pid"]
    if ran_script:
        return ran_script[0]["pid"]
    return process_map["processes"][0]["pid"] if process_map["processes"] else None


def compare(package_map, process_map):
    pid = capture_process(process_map)
    bound = {}  # function -> {(symbol, library)}
    for e in process_map["entries"]:
        if e["process"] == pid and e["symbol"]:
            bound.setdefault(e["function"], set()).add((e["symbol"], real(e["library"])))
    problems, agreed = [], 0
    for e in package_map["entries"]:
        if not e["symbol"]:
            continue
        seen = bound.get(e["function"], set())
        if (e["symbol"], real(e["library"])) in seen:
            agreed += 1
        elif not seen:
            problems.append(f"{e['raw_name']}: {e['symbol']} is not among what pid {pid} bound")
        else:
            names = ", ".join(sorted(s for s, _ in seen))
            problems.append(f"{e['raw_name']}: the package holds {e['symbol']}, pid {pid} bound {names}")
    extra = sorted(set(bound) - {e["function"] for e in package_map["entries"]})
    return agreed, problems, extra


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    package_map = load(argv[1], "cuparity.binding_map/1")
    process_map = load(argv[2], "cuparity.binding_map/2")
    agreed, problems, extra = compare(package_map, process_map)
    for p in problems:
        print("DIFFERS " + p)
    print(f"{agreed} of {agreed + len(problems)} functions with a pointer agree"
          f"{'; the process also bound ' + ', '.join(extra) if extra else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
