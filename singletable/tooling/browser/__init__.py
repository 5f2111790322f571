"""``singletable browse``: a local web page that browses a table through the model's plans.

Needs the ``browse`` extra (Starlette, uvicorn, Jinja2). `create_app` builds the ASGI app
over a `singletable.Connection`; `serve` runs it with uvicorn on a loopback address.
"""

from singletable.tooling.browser.app import BrowserConfig, create_app, render
from singletable.tooling.browser.server import serve

__all__ = ["BrowserConfig", "create_app", "render", "serve"]
