"""`cuzk daemon --config cuzk.toml [--listen ADDR]`: the proving engine as a long-running gRPC service."""

from __future__ import annotations

import argparse

from cuzk.cli.output import input_file


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("daemon", help="run the proving engine as a gRPC daemon (cuzk.v1.ProvingEngine)")
    p.add_argument(
        "--config", "-c", type=input_file, help="TOML config (default: all defaults; docs/DAEMON.md)"
    )
    p.add_argument(
        "--listen",
        "-l",
        help="override daemon.listen: unix:///path/cuzk.sock or host:port (TCP needs a token)",
    )
    p.add_argument("--check", action="store_true", help="validate the config, print it, and exit")
    p.set_defaults(func=cmd_daemon)


def cmd_daemon(args: argparse.Namespace) -> int:
    from cuzk.server.config import load_config

    cfg = load_config(args.config, listen=args.listen)
    if args.check:
        from dataclasses import asdict

        for key, value in asdict(cfg).items():
            print(f"{key} = {'<set>' if key == 'token' and value else value!r}")  # never print the token
        return 0
    from cuzk.server.daemon import run

    if cfg.cluster is not None:  # the front of a fleet on Ray (docs/CLUSTER.md); only here is Ray imported
        from cuzk.cluster.daemon import FleetDaemon

        return run(cfg, FleetDaemon)
    return run(cfg)
