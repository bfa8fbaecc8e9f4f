"""CLI commands of the later pipeline stages, one module per stage; cli.py registers them."""
