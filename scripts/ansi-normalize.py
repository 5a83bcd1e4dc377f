#!/usr/bin/env python3
"""Rewrite every SGR sequence of a tmux capture as a full reset followed by the
complete current style, because freeze ignores partial resets (39/49/22/...) and
lets colours spill into later cells."""
import re
import sys

SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def apply(state, params):
    p = [int(x) if x else 0 for x in re.split(r"[;:]", params)] if params else [0]
    i = 0
    while i < len(p):
        c = p[i]
        if c == 0:
            state.clear()
        elif c in (1, 2, 3, 4, 5, 7, 9):
            state[f"a{c}"] = str(c)
        elif c == 22:
            state.pop("a1", None)
            state.pop("a2", None)
        elif c in (23, 24, 25, 27, 29):
            state.pop(f"a{c - 20}", None)
        elif 30 <= c <= 37 or 90 <= c <= 97:
            state["fg"] = str(c)
        elif 40 <= c <= 47 or 100 <= c <= 107:
            state["bg"] = str(c)
        elif c == 39:
            state.pop("fg", None)
        elif c == 49:
            state.pop("bg", None)
        elif c in (38, 48) and i + 1 < len(p):
            key = "fg" if c == 38 else "bg"
            if p[i + 1] == 5 and i + 2 < len(p):
                state[key] = f"{c};5;{p[i + 2]}"
                i += 2
            elif p[i + 1] == 2 and i + 4 < len(p):
                state[key] = f"{c};2;{p[i + 2]};{p[i + 3]};{p[i + 4]}"
                i += 4
        i += 1


def normalize(text):
    state = {}
    out = []
    last = 0
    for m in SGR.finditer(text):
        out.append(text[last:m.start()])
        apply(state, m.group(1))
        out.append("\x1b[0m")
        if state:
            out.append("\x1b[" + ";".join(state.values()) + "m")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


if __name__ == "__main__":
    sys.stdout.write(normalize(sys.stdin.read()))
