"""The `ragdown` command: parses the command line and runs a subcommand of ragdown/commands/, turning
every refusal into one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from pydantic import ValidationError

from ragdown import __version__
from ragdown.commands.checks import add_check_commands
from ragdown.commands.folder import add_folder_commands
from ragdown.commands.server import add_server_commands
from ragdown.errors import RagdownError
from ragdown.serving.log_format import configure_logging
from ragdown.settings import ServerSettings, check_lance_threads, settings_refusal


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragdown", description="Markdown folders for AI agents.")
    parser.add_argument("--version", action="version", version=f"ragdown {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what the index does")
    commands = parser.add_subparsers(dest="command", required=True)
    add_folder_commands(commands)
    add_server_commands(commands)
    add_check_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    try:
        try:
            settings = ServerSettings()
        except ValidationError as error:
            raise settings_refusal(error) from None
        check_lance_threads()
        code = int(args.run(args, settings))
    except RagdownError as error:
        print(f"ragdown: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ragdown: interrupted", file=sys.stderr)
        return 130
    if argv is None and getattr(args, "exit_at_once", False):
        exit_at_once(code)
    return code


def exit_at_once(code: int) -> NoReturn:
    """End the process without the interpreter's teardown, which frees every module and object one
    by one (~0.2 s after a search: numpy's, pyarrow's, ONNX Runtime's, the snapshot's mappings) for
    an operating system that frees them at once. Only for a command that has said everything and
    leaves nothing to finish (docs/design.md#start-up), and only as the program itself (`argv` None):
    a caller of `main` gets its code back."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: the interpreter's own exit reports it, as for any command
        raise SystemExit(code) from None
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
