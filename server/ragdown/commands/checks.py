"""`ragdown status` and `doctor`: the settings in effect and where each came from, and the health checks."""

from __future__ import annotations

import argparse

from ragdown.settings import ServerSettings


def add_check_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`status` and `doctor`: what is set, and whether the install and its folders are healthy."""
    status = commands.add_parser("status", help="Every setting in effect and where its value came from.")
    status.add_argument("docs", metavar="FOLDER", nargs="?", help="the docs dir (default: RAGDOWN_DOCS_DIR)")
    status.add_argument("--json", action="store_true", help="as JSON: {settings, folders}")
    status.set_defaults(run=command_status)

    doctor = commands.add_parser(
        "doctor", help="Check the install and the folders: ok / warn / fail each, and what to do."
    )
    doctor.add_argument(
        "docs", metavar="FOLDER", nargs="?", help="one folder (default: every folder of RAGDOWN_DOCS_DIR)"
    )
    doctor.add_argument("--json", action="store_true", help="the checks as a JSON list (exit 1 on any fail)")
    doctor.set_defaults(run=command_doctor)


def command_status(args: argparse.Namespace, settings: ServerSettings) -> int:
    from ragdown.status.report import print_status  # loads the folders' settings: only this command

    return print_status(args.docs, settings, json_output=args.json)


def command_doctor(args: argparse.Namespace, settings: ServerSettings) -> int:
    from ragdown.doctor.command import doctor  # the checks open the index: loaded for this command only

    return doctor(args.docs, settings, json_out=args.json)
