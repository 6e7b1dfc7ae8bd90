#!/usr/bin/env python3
"""Checks that the quoted includes under src/ follow the table "Parts and what
each may call" of docs/architecture.md, so that the table stays true.

The table: a Markdown table whose header cells are `folder | owns | may
call`. Each row whose first cell is a backticked folder (`src/analyzers`,
`src/sources/capture`) or file pattern (`src/analyzers/*/*_tables.*`, a
glob on the path from the repository root) is a part. Its may-call cell is read as follows:
  - text after the first ';' and parenthesised remarks are comments;
  - the rest is a comma-separated list of entries, backticks dropped;
  - "everything above": every part of the rows above this one;
  - an entry naming a part: its folder (`src/common`), its folder without
    `src/` (`sources/capture`) or its last folder name (`capture`); a name
    matching two parts is an error;
  - an entry whose first word is an external library (std, LLVM, hwloc,
    SQLite, Eigen, Boost, Valgrind, ...; see EXTERNAL) is ignored;
  - anything else is an error, so that a typo cannot allow nothing.

The sources: every .h, .hpp, .c and .cpp file under src/. A quoted include
is resolved as the compiler does, against the including file's folder, then
against src/; an include that resolves to no file under src/ (a system or
Valgrind header) is not checked. Each file belongs to the first pattern
part it matches, else to the part with the longest folder prefix. An include is allowed when the included file is in
the same part or in a part the including part may call. A file under no
part is reported once, and its includes (and includes of it) are not
checked.

Exit status: 0 when every include is allowed (one summary line), 1 with one
line per violation, 2 when the table cannot be read.
"""
import argparse
import fnmatch
import os
import re
import sys

EXTERNAL = {
    "std", "libc", "libstdc++", "pthread", "posix", "llvm", "hwloc", "sqlite",
    "sqlite3", "eigen", "eigen3", "boost", "boost.math", "valgrind", "fmt",
    "cli11", "nlohmann", "json", "zstd", "gtest",
}
EXTENSIONS = (".h", ".hpp", ".c", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


class TableError(Exception):
    pass


def split_cells(line):
    """The cells of one Markdown table row (no escaped pipes in our tables)."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse_table(path):
    """[(folder, may_call_cell, line_number)] in table order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    rows = []
    in_table = False
    may_call_column = None
    for number, line in enumerate(lines, 1):
        if not line.lstrip().startswith("|"):
            in_table = False
            continue
        cells = split_cells(line)
        lowered = [c.lower() for c in cells]
        if "folder" in lowered and "may call" in lowered:
            in_table = True
            may_call_column = lowered.index("may call")
            folder_column = lowered.index("folder")
            continue
        if not in_table:
            continue
        m = re.fullmatch(r"`([^`]+)`", cells[folder_column]) if len(cells) > folder_column else None
        if not m or len(cells) <= may_call_column:
            continue  # the |---| separator, or a row that is no folder
        rows.append((m.group(1).rstrip("/"), cells[may_call_column], number))
    if not rows:
        raise TableError(f"{path}: no table with columns 'folder' and 'may call'")
    return rows


def remove_remarks(text):
    """Drops parenthesised remarks (nested ones too)."""
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"\([^()]*\)", "", text)
    return text


def resolve_may_call(rows, table_path):
    """{folder: set of folders it may call}."""
    folders = [folder for folder, _, _ in rows]
    by_name = {}
    for folder in folders:
        names = {folder, folder[len("src/"):] if folder.startswith("src/") else folder,
                 folder.rsplit("/", 1)[-1]}
        for name in names:
            by_name.setdefault(name.lower(), set()).add(folder)
    allowed = {}
    for index, (folder, cell, number) in enumerate(rows):
        text = remove_remarks(cell.split(";", 1)[0]).replace("`", "")
        calls = set()
        for entry in (e.strip() for e in text.split(",")):
            if not entry:
                continue
            key = entry.lower().rstrip("/")
            if key == "everything above":
                calls.update(folders[:index])
            elif key in by_name:
                if len(by_name[key]) > 1:
                    raise TableError(f"{table_path}:{number}: '{entry}' in the may-call cell of "
                                     f"{folder} names several parts: {sorted(by_name[key])}")
                calls.update(by_name[key])
            elif key.split()[0] in EXTERNAL:
                continue
            else:
                raise TableError(f"{table_path}:{number}: '{entry}' in the may-call cell of "
                                 f"{folder} names no part and no known external library")
        allowed[folder] = calls
    return allowed


def part_of(relative_path, folders):
    """The first pattern matching relative_path, else the folder with its
    longest prefix, else None."""
    for folder in folders:
        if "*" in folder and fnmatch.fnmatchcase(relative_path, folder):
            return folder
    best = None
    for folder in folders:
        if "*" in folder:
            continue
        if relative_path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def main():
    default_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=default_root,
                        help="the tree to check (default: the repository of this script)")
    parser.add_argument("--table", help="the Markdown file with the table "
                        "(default: ROOT/docs/architecture.md)")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    table_path = args.table or os.path.join(root, "docs", "architecture.md")
    table_name = os.path.relpath(os.path.abspath(table_path), root)
    if table_name.startswith(".."):
        table_name = table_path

    try:
        allowed = resolve_may_call(parse_table(table_path), table_name)
    except (OSError, TableError) as error:
        print(f"check-includes: {error}", file=sys.stderr)
        return 2
    folders = list(allowed)
    src = os.path.join(root, "src")

    files = []
    for directory, subdirectories, names in os.walk(src):
        subdirectories.sort()
        files.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith(EXTENSIONS))

    problems = []
    checked_includes = 0
    for path in files:
        relative = os.path.relpath(path, root).replace(os.sep, "/")
        part = part_of(relative, folders)
        if part is None:
            problems.append(f"{relative}:1: not in the architecture table ({table_name})")
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                target = None
                for base in (os.path.dirname(path), src):
                    candidate = os.path.normpath(os.path.join(base, name))
                    if os.path.isfile(candidate):
                        target = candidate
                        break
                if target is None or not target.startswith(src + os.sep):
                    continue
                target_part = part_of(os.path.relpath(target, root).replace(os.sep, "/"), folders)
                if target_part is None:
                    continue  # reported as a file not in the table
                checked_includes += 1
                if target_part != part and target_part not in allowed[part]:
                    problems.append(f"{relative}:{number}: {part} includes {target_part} ({name}), "
                                    f"which {table_name} does not allow")
    if problems:
        print("\n".join(problems))
        return 1
    print(f"check-includes: {checked_includes} includes in {len(files)} files follow {table_name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
