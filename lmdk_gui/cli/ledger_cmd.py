"""``lmdk ledger``: the private record of the releases made on this computer (:mod:`lmdk_gui.core.publish.ledger`).

``list`` shows one line per release (id, UTC time, scheme, ε, output, input) and, per input, the ε that a
holder of all its releases faces; ``clear`` deletes the ledger; ``reexport ID -o OUT`` makes a release
made with a kept key again, bit for bit, without spending ε again.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

from ..core.publish import ledger
from ..core.publish.reexport import reexport


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ledger", help="list, clear or re-export the releases made here (private record)",
                       description=f"The private release ledger ({ledger.ENV_VAR} names another file).")
    cmds = p.add_subparsers(dest="ledger_command", metavar="ACTION", required=True)
    cmds.add_parser("list", help="one line per release, and the composed ε per input")
    c = cmds.add_parser("clear", help="delete the ledger (the composed ε of earlier releases is then forgotten)")
    c.add_argument("--yes", action="store_true", help="do not ask")
    r = cmds.add_parser("reexport", help="make a release again from its kept key (no new ε is spent)")
    r.add_argument("id", metavar="ID", help="the release's id (or a unique prefix), see `lmdk ledger list`")
    r.add_argument("-o", "--output", required=True, metavar="OUTPUT", help="release CSV to write")
    r.add_argument("--force", action="store_true", help="overwrite OUTPUT and OUTPUT.json if they exist")
    p.set_defaults(run=run)


def _input_name(e: dict) -> str:
    """The input as the list shows it: its file, or a batch person's table file(s) and id."""
    where = e.get("input_path") or ", ".join(e.get("input_paths") or []) or "?"
    return f"{where} (id {e['person_id']})" if e.get("person_id") is not None else where


def run(args: argparse.Namespace) -> int:
    from . import INTERRUPTED, RELEASE_WRITTEN, UsageError

    if args.ledger_command == "list":
        rows = ledger.entries()
        print(f"# ledger: {ledger.ledger_path()} ({len(rows)} release{'s' if len(rows) != 1 else ''})")
        per_input: dict[str, list[float]] = defaultdict(list)
        names: dict[str, str] = {}
        for e in rows:
            again = f" (re-export of {e['reexport_of']})" if e.get("reexport_of") else ""
            key = " key kept" if e.get("key") else ""
            print(f"{e['id']}  {e.get('created', '?')}  {e.get('scheme', '?'):8s} ε={float(e.get('epsilon', 0)):g}  "
                  f"{e.get('output', '?')}  from {_input_name(e)}{key}{again}")
            ident = e.get("input_digest") or e.get("input_sha256")  # (entries before issue 42: file bytes)
            if not e.get("reexport_of") and ident:
                per_input[ident].append(float(e["epsilon"]))
                names.setdefault(ident, _input_name(e))
        for ident, eps in per_input.items():
            if len(eps) > 1:
                print(f"# {names[ident]}: {len(eps)} releases, a holder of all of them faces ε = {sum(eps):g}")
        return 0
    if args.ledger_command == "clear":
        if not args.yes:
            if not sys.stdin.isatty():  # a script forgets every release only when it says so
                raise UsageError("`lmdk ledger clear` forgets every release made here; add --yes to confirm")
            ans = input(f"Delete the ledger {ledger.ledger_path()}? [y/N] ")
            if ans.strip().lower() not in ("y", "yes"):
                print("kept", file=sys.stderr)
                return 0
        n = ledger.clear()
        print(f"deleted the ledger ({n} release{'s' if n != 1 else ''})")
        return 0
    res = reexport(args.id, args.output, force=args.force, should_cancel=INTERRUPTED.is_set)
    RELEASE_WRITTEN.set()
    print(f"wrote {res.path} ({res.rows} rows, the same release as {args.id}; no new ε spent) and {res.sidecar}")
    return 0
