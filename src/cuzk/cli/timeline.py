"""`cuzk timeline render run.jsonl -o out.png|out.html`: a waterfall; `cuzk timeline idle run.jsonl`: where a
held device sat idle and what each gap waited for (cuzk.instrument.idle)."""

from __future__ import annotations

import argparse

from rich.table import Table

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
    i = cmds.add_parser(
        "idle",
        help="where the device sat idle inside the lock's holds, by phase, and what each gap ended with "
        "(for a single proof: the host phases the device waits through)",
    )
    i.add_argument(
        "timeline",
        type=input_file,
        help="a JSON-lines timeline: the engine's (`bench batch --timeline`) or one proof's (`prove --timeline`)",
    )
    i.add_argument(
        "--min-gap-ms", type=_positive_ms, default=5.0, help="shortest idle gap reported (default 5)"
    )
    i.add_argument(
        "--all",
        action="store_true",
        help="the whole run as the window (default: first to last job completion)",
    )
    i.add_argument("--json", type=output_file, default=None, help="also write the report as JSON here")
    i.set_defaults(func=cmd_idle)


def _positive_ms(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of milliseconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0 ms, got {text}")
    return value


def cmd_render(args: argparse.Namespace) -> int:
    from cuzk.instrument.busy import headline
    from cuzk.instrument.waterfall import read_jsonl, render

    check_output_paths(args.out)
    records = read_jsonl(args.timeline)
    wf = render(records, args.out, title=args.title or args.timeline.name)
    con = console()
    con.print(
        f"{len(wf.bars)} spans on {len(wf.lanes)} lanes over {wf.window:.3f} s; {headline(wf.figures)}",
        soft_wrap=True,
    )
    con.print("critical path: " + " -> ".join(b.name for b in wf.critical))
    con.print(f"wrote {args.out}")
    return 0


def cmd_idle(args: argparse.Namespace) -> int:
    import json

    from cuzk.instrument.idle import analyse, analyse_single, describe, describe_single, has_holds
    from cuzk.instrument.waterfall import read_jsonl

    if args.json is not None:
        check_output_paths(args.json)
    records = read_jsonl(args.timeline)
    con = console()
    if not has_holds(records):  # a single proof (`cuzk prove --timeline`): phases one after another
        single = analyse_single(records, source=str(args.timeline))
        for line in describe_single(single):
            con.print(line, highlight=False, soft_wrap=True)
        if args.json is not None:
            args.json.write_text(json.dumps([single.as_dict()], indent=2) + "\n")
            con.print(f"wrote {args.json}")
        return 0
    reports = analyse(
        records,
        min_gap=args.min_gap_ms / 1e3,
        steady=not args.all,
        source=str(args.timeline),
    )
    for r in reports:
        table = Table(title=f"device {r.device}: inside the lock's holds (medians)")
        for col in ("phase", "n", "wall ms", "device busy ms", "idle ms"):
            table.add_column(col, justify="left" if col == "phase" else "right")
        for p in r.phases:
            table.add_row(p.phase, str(p.count), f"{p.wall_ms:.1f}", f"{p.busy_ms:.1f}", f"{p.idle_ms:.1f}")
        con.print(table)
        for line in describe(r):
            con.print(line, highlight=False)
    if args.json is not None:
        args.json.write_text(json.dumps([r.as_dict() for r in reports], indent=2) + "\n")
        con.print(f"wrote {args.json}")
    return 0
