"""`cuzk timeline render run.jsonl -o out.png|out.html`: a waterfall from a JSON-lines timeline."""

from __future__ import annotations

import argparse

from cuzk.cli.output import check_output_paths, console, input_file, output_file


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("timeline", help="timelines: render a JSON-lines timeline as a waterfall")
    cmds = p.add_subparsers(dest="timeline_command", metavar="COMMAND", required=True)
    r = cmds.add_parser("render", help="draw a waterfall (PNG or self-contained HTML) from a .jsonl timeline")
    r.add_argument(
        "timeline", type=input_file, help="a JSON-lines timeline (`--timeline FILE` of prove / bench)"
    )
    r.add_argument("-o", "--out", required=True, type=output_file, help="output file: .png or .html")
    r.add_argument("--title", default="", help="title (default: the timeline's file name)")
    r.set_defaults(func=cmd_render)


def cmd_render(args: argparse.Namespace) -> int:
    from cuzk.instrument.waterfall import read_jsonl, render

    check_output_paths(args.out)
    records = read_jsonl(args.timeline)
    wf = render(records, args.out, title=args.title or args.timeline.name)
    con = console()
    busy = ", ".join(f"{lane} {frac * 100:.1f}% busy" for lane, frac in wf.busy.items()) or "no device spans"
    con.print(f"{len(wf.bars)} spans on {len(wf.lanes)} lanes over {wf.window:.3f} s; {busy}")
    con.print("critical path: " + " -> ".join(b.name for b in wf.critical))
    con.print(f"wrote {args.out}")
    return 0
