"""coworkenv: executable, verified training environments for AI coworkers.

Importing the package is cheap: heavy backends (torch, transformers, TRL, Ray, the OpenAI
SDK) are imported only by the modules that use them.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("coworkenv")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
