"""The command line: `harness` and its subcommands (click), and the modules that are one command each
(cache, eval, export, new, the listings, the dashboard). The top layer: nothing imports from here but
`__main__`."""
