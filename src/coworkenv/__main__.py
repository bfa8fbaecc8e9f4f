"""``python -m coworkenv``: the installed ``coworkenv`` command, for an environment whose scripts are not on PATH."""

from coworkenv.cli import app

if __name__ == "__main__":
    app(prog_name="coworkenv")
