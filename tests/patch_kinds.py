"""The kinds of indentation-tier edits issue 25 saw go wrong, as tables: each row a file,
a `find` indented another way than the file, a `replace`, and either the exact bytes the
file must hold afterwards or the refusal (`find_not_found` with a reason) it must get.

Shared by tests/tools/test_patch_kinds.py (every row, in-process) and
tests/e2e/test_patch_kinds_e2e.py (rows over the real server, every tool set's editor).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    path: str
    before: str
    find: str
    replace: str
    after: str | None  # None: refused, the file unchanged
    find_line: int | None = None  # the find line a refusal names


PY_CALL = ("def build(items):\n"
           "    total = compute(items,\n"
           "                    scale=2)\n"
           "    if total:\n"
           "        return total\n"
           "    return 0\n")

PY_CACHE = ("class Cache:\n"
            "    def get(self, key):\n"
            "        if key in self.items:\n"
            "            return self.items[key]\n"
            "        return None\n"
            "\n"
            "    def put(self, key, value):\n"
            "        self.items[key] = value\n")

PY_MAIN = "def main():\n    setup()\n    run()\n    report()\n"

TS_2 = ("export function load(paths: string[]) {\n"
        "  const found = paths.filter(\n"
        "    (p) => p.endsWith(\".ts\"),\n"
        "  );\n"
        "  const names = [\n"
        "    \"a\",\n"
        "    \"b\",\n"
        "  ];\n"
        "  return found.concat(names);\n"
        "}\n")

JS_4 = ("function total(items) {\n"
        "    return items.reduce(\n"
        "        (sum, item) => sum + item.price,\n"
        "        0,\n"
        "    );\n"
        "}\n")

MAKEFILE = ("CC ?= gcc\n"
            "\n"
            "build: main.c util.c\n"
            "\t$(CC) -o app \\\n"
            "\t    main.c util.c\n"
            "\t@echo done\n")

MAKEFILE_TABS = ("build:\n"
                 "\tgcc -o app \\\n"
                 "\t\tmain.c \\\n"
                 "\t\tutil.c\n"
                 "\t@echo done\n")

MARKDOWN = ("# Setup\n"
            "\n"
            "- Install\n"
            "  - pip install chorus-tools\n"
            "  - run `chorus-tools --help`\n"
            "- Use\n")

JSON_2 = ('{\n'
          '  "name": "app",\n'
          '  "scripts": {\n'
          '    "build": "tsc",\n'
          '    "test": "jest"\n'
          '  }\n'
          '}\n')

JSON_ARRAY = ('{\n'
              '  "name": "app",\n'
              '  "files": [\n'
              '    "dist"\n'
              '  ]\n'
              '}\n')

GO_4 = ("func run() {\n"
        "    for {\n"
        "        value := pick(first,\n"
        "                    second)\n"
        "        use(value)\n"
        "    }\n"
        "}\n")

GO_TABS = GO_4.replace("    ", "\t").replace("\t\t\t\t\t", "\t\t            ")

KINDS: dict[str, dict[str, Row]] = {
    "continuation-line start": {
        "shifted by -2 columns: a shift": Row(
            "a.py", PY_CALL,
            "                  scale=2)\n  if total:\n      return total\n",
            "                  scale=3)\n  if total:\n      return total\n",
            PY_CALL.replace("scale=2", "scale=3")),
        "2-space levels under a 4-space file's alignment: refused": Row(
            "a.py", PY_CALL,
            "                  scale=2)\n  if total:\n    return total\n",
            "                  scale=3)\n  if total:\n    return total\n",
            None, find_line=3),
        "shifted by 4 columns: a shift": Row(
            "a.py", PY_CALL,
            "                scale=2)\nif total:\n    return total\n",
            "                scale=3)\nif total > 1:\n    return total\n",
            PY_CALL.replace("scale=2", "scale=3").replace("if total:", "if total > 1:")),
        "first line exact, the rest shifted: refused at line 2": Row(
            "a.py", PY_CALL,
            "                    scale=2)\nif total:\n    return total\n",
            "                    scale=3)\nif total:\n    return total\n",
            None, find_line=2),
        "tabs for the statement, spaces for the alignment": Row(
            "a.py", PY_CALL,
            "\ttotal = compute(items,\n\t                scale=2)\n",
            "\ttotal = compute(items,\n\t                scale=2,\n\t                fast=True)\n",
            PY_CALL.replace("scale=2)", "scale=2,\n                    fast=True)")),
    },
    "deeper than the block that follows": {
        "shifted by 4: the dedent keeps its place": Row(
            "a.py", PY_CACHE,
            "        return self.items[key]\n    return None\n",
            "        return self.items[key]\n    self.misses += 1\n    return None\n",
            PY_CACHE.replace("        return None\n",
                             "        self.misses += 1\n        return None\n")),
        "first line right, the dedent wrong: refused at line 2": Row(
            "a.py", PY_CACHE,
            "            return self.items[key]\n    return None\n",
            "            return self.items[key]\n    return 0\n",
            None, find_line=2),
        "tabs, one level too deep throughout: a shift": Row(
            "a.py", PY_CACHE.replace("    ", "\t"),
            "\t\t\t\treturn self.items[key]\n\t\t\treturn None\n",
            "\t\t\t\treturn self.items[key]\n\t\t\tself.misses += 1\n\t\t\treturn None\n",
            PY_CACHE.replace("    ", "\t").replace(
                "\t\treturn None\n", "\t\tself.misses += 1\n\t\treturn None\n")),
    },
    "no line deeper than the one before": {
        "8 spaces for 4: a shift, no guessed unit": Row(
            "a.py", PY_MAIN,
            "        setup()\n        run()\n",
            "        setup()\n        if ready():\n            run()\n",
            "def main():\n    setup()\n    if ready():\n        run()\n    report()\n"),
        "flush left: every line shifted alike": Row(
            "a.py", PY_MAIN,
            "setup()\nrun()\n",
            "setup()\nrun()\nflush()\n",
            "def main():\n    setup()\n    run()\n    flush()\n    report()\n"),
        "spaces onto tabs, the agent's unit from replace": Row(
            "a.py", PY_MAIN.replace("    ", "\t"),
            "    setup()\n    run()\n",
            "    setup()\n    if ready():\n        run()\n",
            "def main():\n\tsetup()\n\tif ready():\n\t\trun()\n\treport()\n"),
        "a replace line the shift cannot write: refused": Row(
            "a.py", PY_MAIN,
            "        setup()\n        run()\n",
            "        setup()\n  run()\n",
            None),
    },
    "JS/TS 2 <-> 4 spaces inside open brackets": {
        "4-space find on a 2-space file, (": Row(
            "a.ts", TS_2,
            "    const found = paths.filter(\n        (p) => p.endsWith(\".ts\"),\n    );\n",
            "    const found = paths.filter(\n"
            "        (p) => p.endsWith(\".ts\") && !p.endsWith(\".d.ts\"),\n    );\n",
            TS_2.replace('p.endsWith(".ts"),', 'p.endsWith(".ts") && !p.endsWith(".d.ts"),')),
        "4-space find on a 2-space file, [": Row(
            "a.ts", TS_2,
            "    const names = [\n        \"a\",\n        \"b\",\n    ];\n",
            "    const names = [\n        \"a\",\n        \"b\",\n        \"c\",\n    ];\n",
            TS_2.replace('    "b",\n', '    "b",\n    "c",\n')),
        "2-space find on a 4-space file": Row(
            "a.js", JS_4,
            "  return items.reduce(\n    (sum, item) => sum + item.price,\n    0,\n  );\n",
            "  return items.reduce(\n    (sum, item) => sum + item.price * item.count,\n"
            "    0,\n  );\n",
            JS_4.replace("item.price,", "item.price * item.count,")),
    },
    "Makefile continued recipe lines": {
        "a tab read as 8 spaces": Row(
            "Makefile", MAKEFILE,
            "        $(CC) -o app \\\n            main.c util.c\n",
            "        $(CC) -O2 -o app \\\n            main.c util.c\n",
            MAKEFILE.replace("-o app", "-O2 -o app")),
        "a tab read as 4 spaces, a continued line added": Row(
            "Makefile", MAKEFILE,
            "    $(CC) -o app \\\n        main.c util.c\n",
            "    $(CC) -o app \\\n        main.c util.c \\\n        extra.c\n",
            MAKEFILE.replace("\t    main.c util.c\n",
                             "\t    main.c util.c \\\n\t    extra.c\n")),
        "continued two tabs deep, a tab read as 8 spaces": Row(
            "Makefile", MAKEFILE_TABS,
            "        gcc -o app \\\n                main.c \\\n",
            "        gcc -O2 -o app \\\n                main.c \\\n",
            MAKEFILE_TABS.replace("-o app", "-O2 -o app")),
        "continued two tabs deep, a tab read as 4 spaces, a line added": Row(
            "Makefile", MAKEFILE_TABS,
            "    gcc -o app \\\n        main.c \\\n        util.c\n",
            "    gcc -o app \\\n        main.c \\\n        util.c \\\n        extra.c\n",
            MAKEFILE_TABS.replace("\t\tutil.c\n", "\t\tutil.c \\\n\t\textra.c\n")),
        "the recipe line after the continuation read as continued: refused": Row(
            "Makefile", MAKEFILE_TABS,
            "        util.c\n        @echo done\n",
            "        util.c\n        @echo done\n        @touch built\n",
            None, find_line=2),
        "a new recipe line keeps its tab": Row(
            "Makefile", MAKEFILE,
            "    @echo done\n",
            "    @echo done\n    @touch built\n",
            MAKEFILE.replace("\t@echo done\n", "\t@echo done\n\t@touch built\n")),
    },
    "Markdown nested lists shifted by 2": {
        "2 columns too deep": Row(
            "README.md", MARKDOWN,
            "  - Install\n    - pip install chorus-tools\n",
            "  - Install\n    - pip install chorus-tools\n      - or from a checkout\n",
            MARKDOWN.replace("  - pip install chorus-tools\n",
                             "  - pip install chorus-tools\n    - or from a checkout\n")),
        "nested by 4 for the file's 2": Row(
            "README.md", MARKDOWN,
            "- Install\n    - pip install chorus-tools\n    - run `chorus-tools --help`\n",
            "- Install\n    - pip install chorus-tools\n    - run `chorus-tools serve`\n",
            MARKDOWN.replace("--help", "serve")),
        "the nesting changed: refused": Row(
            "README.md", MARKDOWN,
            "- Install\n- pip install chorus-tools\n",
            "- Install\n- pip install chorus-tools==1\n",
            None, find_line=2),
    },
    "gofmt: tabs for levels, spaces for alignment (issue 34)": {
        "a gofmt find on a 4-space file: 2 levels + 12 spaces are 20 columns": Row(
            "a.go", GO_4,
            "\t\tvalue := pick(first,\n\t\t            second)\n\t\tuse(value)\n",
            "\t\tvalue := pick(first,\n\t\t            second,\n\t\t            third)\n"
            "\t\tuse(value)\n",
            GO_4.replace("second)\n", "second,\n                    third)\n")),
        "a gofmt find that opens at the alignment line": Row(
            "a.go", GO_4,
            "\t\t            second)\n\t\tuse(value)\n\t}\n",
            "\t\t            second)\n\t\tuse(value)\n\t\tlog(value)\n\t}\n",
            GO_4.replace("        use(value)\n", "        use(value)\n        log(value)\n")),
        "spaces in find, tabs and alignment in the file": Row(
            "a.go", GO_TABS,
            "        value := pick(first,\n                    second)\n        use(value)\n",
            "        value := pick(first,\n                    second,\n"
            "                    third)\n        use(value)\n",
            GO_TABS.replace("second)\n", "second,\n\t\t            third)\n")),
    },
    "JSON re-indented": {
        "4 spaces for the file's 2": Row(
            "package.json", JSON_2,
            '    "scripts": {\n        "build": "tsc",\n        "test": "jest"\n    }\n',
            '    "scripts": {\n        "build": "tsc",\n        "lint": "eslint .",\n'
            '        "test": "jest"\n    }\n',
            JSON_2.replace('    "test"', '    "lint": "eslint .",\n    "test"')),
        "4 spaces inside [ for the file's 2": Row(
            "package.json", JSON_ARRAY,
            '    "files": [\n        "dist"\n    ]\n',
            '    "files": [\n        "dist",\n        "types"\n    ]\n',
            JSON_ARRAY.replace('    "dist"\n', '    "dist",\n    "types"\n')),
        "tabs for the file's 2": Row(
            "package.json", JSON_2,
            '\t"scripts": {\n\t\t"build": "tsc",\n',
            '\t"scripts": {\n\t\t"build": "tsc --build",\n',
            JSON_2.replace('"tsc"', '"tsc --build"')),
    },
}

ROWS = {f"{kind}: {name}": row for kind, rows in KINDS.items() for name, row in rows.items()}
# one row of each kind that applies: the end-to-end tests send it through every editor
FIRST_OF_EACH = {kind: next(row for row in rows.values() if row.after is not None)
                 for kind, rows in KINDS.items()}
