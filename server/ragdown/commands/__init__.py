"""The `ragdown` command's subcommands, grouped by what they act on (cli.py parses and dispatches)."""
