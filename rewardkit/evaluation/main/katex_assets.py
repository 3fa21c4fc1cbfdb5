"""KaTeX for the HTML report: the vendored copy, packed into the page so that it works offline.

`data/katex/` holds KaTeX's own minified build, unmodified, from the npm package `katex`
(KATEX_VERSION, MIT: `data/katex/LICENSE`): `dist/katex.min.js`, `dist/katex.min.css` and
`dist/fonts/*.woff2`. To update it: `npm pack katex@VERSION`, copy those files over, set
KATEX_VERSION (a test checks that it matches the script).

A report carries it as one gzip + base64 element, like its cases: the script (273 KB, 76 KB
compressed) and the stylesheet with its fonts as `data:` URLs (woff2 only: every browser with
`DecompressionStream`, which the report needs anyway, reads woff2), about 0.5 MB in all. The
page decompresses it and adds the script and the style itself, so nothing is fetched.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from functools import cache
from importlib import resources

KATEX_VERSION = "0.19.1"
KATEX_ELEMENT_ID = "report-katex"

_FONT_SOURCES = re.compile(r"src:url\(fonts/([\w-]+)\.woff2\) format\(\"woff2\"\)[^;}]*")


def _package_file(name: str) -> bytes:
    return resources.files("rewardkit.evaluation").joinpath(f"data/katex/{name}").read_bytes()


def _inline_fonts(css: str) -> str:
    """Each `@font-face`'s sources reduced to its woff2 file, inlined as a `data:` URL."""

    def inline(match: re.Match[str]) -> str:
        font = base64.b64encode(_package_file(f"fonts/{match[1]}.woff2")).decode("ascii")
        return f'src:url(data:font/woff2;base64,{font}) format("woff2")'

    inlined, count = _FONT_SOURCES.subn(inline, css)
    if count == 0 or "url(fonts/" in inlined:
        raise RuntimeError("katex.min.css: its @font-face rules are not in the expected form")
    return inlined


@cache
def katex_bundle() -> str:
    """The page's KaTeX element text: JSON `{"version", "script", "style"}`, gzip, base64
    (built once per process)."""
    bundle = {
        "version": KATEX_VERSION,
        "script": _package_file("katex.min.js").decode("utf-8"),
        "style": _inline_fonts(_package_file("katex.min.css").decode("utf-8")),
    }
    raw = json.dumps(bundle, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, 9, mtime=0)).decode("ascii")
