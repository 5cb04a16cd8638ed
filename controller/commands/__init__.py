"""One module per `jenga-robot` command group; each adds its subparser with `register`."""
