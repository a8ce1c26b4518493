"""Check the built documentation site (``make docs-check``):

- every local link, image and script of every page resolves inside the site, and no page loads
  anything from another host (the site works offline);
- no table is empty, no line of a code block is over :data:`MAX_CODE_LINE` characters (it
  would scroll sideways), no page weighs more than :data:`PAGE_BUDGET` bytes (its HTML and the
  images it loads eagerly; a ``loading="lazy"`` image counts once it is scrolled to), and no
  option lost its hyphens (``--policy`` set as an en dash);
- where Chromium is installed: every page renders headless with its main content and no failed
  request, and the site's own search puts the right guide among the first 3 results for the
  queries of :data:`SEARCHES`.

Broken cross-references fail the build itself (``sphinx-build -n -W``).

    python docs/check_site.py docs/_build/html
"""

from __future__ import annotations

import html as html_lib
import http.server
import json
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path
from urllib.parse import unquote, urldefrag

ASSET = re.compile(r'<(script|img|link|source|iframe)\b[^>]*?\b(src|href)="([^"]+)"', re.I)
LINK = re.compile(r'<a\b[^>]*?\bhref="([^"]+)"', re.I)
IDS = re.compile(r'\bid="([^"]+)"')
PRE = re.compile(r"<pre\b[^>]*>(.*?)</pre>", re.S)
TABLE = re.compile(r"<table\b.*?</table>", re.S)
IMG = re.compile(r"<img\b[^>]*>", re.I)
#: the longest code line that shows without scrolling in the theme's content column
MAX_CODE_LINE = 100
#: bytes a page may weigh: its HTML and the images it loads eagerly
PAGE_BUDGET = 3_000_000
#: query -> the page that must be among the search's first 3 results
SEARCHES = {"urdf": "guides/vehicles", "dem": "guides/terrain", "reward": "guides/custom-task",
            "snapshot": "guides/simulator-as-model", "benchmark": "guides/offroadbench",
            "mppi": "guides/simulator-as-model", "train": "guides/training",
            "custom reward": "guides/custom-task"}


def _text(fragment: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", fragment))


def check_pages(site: Path) -> list[str]:
    """Problems a reader sees: empty tables, code lines that scroll, heavy pages, options whose
    ``--`` became an en dash."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site)
        html = page.read_text(errors="replace")
        for table in TABLE.findall(html):
            if "<td" not in table:
                problems.append(f"{rel}: an empty table (a header only)")
        for block in PRE.findall(html):
            for line in _text(block).split("\n"):
                if len(line) > MAX_CODE_LINE:
                    problems.append(f"{rel}: a code line of {len(line)} characters (over "
                                    f"{MAX_CODE_LINE}): {line[:60]}...")
        weight = len(html.encode())
        for img in IMG.findall(html):
            src = re.search(r'\bsrc="([^"]+)"', img)
            if src is None or 'loading="lazy"' in img or src.group(1).startswith("data:"):
                continue
            f = (page.parent / unquote(src.group(1))).resolve()
            weight += f.stat().st_size if f.is_file() else 0
        if weight > PAGE_BUDGET:
            problems.append(f"{rel}: weighs {weight / 1e6:.1f} MB (HTML and eager images; the "
                            f"budget is {PAGE_BUDGET / 1e6:.0f} MB)")
        for m in re.finditer("\u2013([a-z][\\w-]*)", _text(html)):
            problems.append(f"{rel}: an en dash before {m.group(1)!r}: an option typed as "
                            f"--{m.group(1)} lost its hyphens")
    return problems


def check_files(site: Path) -> list[str]:
    """Problems of the static pages: broken local links and anchors, remote assets."""
    problems = []
    pages = sorted(site.rglob("*.html"))
    ids = {p: set(IDS.findall(p.read_text(errors="replace"))) for p in pages}
    for page in pages:
        html = page.read_text(errors="replace")
        for tag, _, url in ASSET.findall(html):
            if tag.lower() == "link" and not re.search(
                    rf'<link\b[^>]*href="{re.escape(url)}"[^>]*rel="(stylesheet|icon|preload)',
                    html) and not re.search(
                    rf'<link\b[^>]*rel="(stylesheet|icon|preload)"[^>]*href="{re.escape(url)}"',
                    html):
                continue  # a navigation link (next, prev, index), checked as a link below
            if re.match(r"^(https?:)?//", url):
                problems.append(f"{page.relative_to(site)}: loads {url} from another host")
            elif not url.startswith("data:") and not _exists(page, url, site):
                problems.append(f"{page.relative_to(site)}: missing asset {url}")
        for url in LINK.findall(html):
            if re.match(r"^(https?:|mailto:)", url):
                continue
            target, frag = urldefrag(url)
            dest = page if not target else (page.parent / unquote(target)).resolve()
            if target and not _exists(page, target, site):
                problems.append(f"{page.relative_to(site)}: broken link {url}")
            elif frag and dest.suffix == ".html" and dest in ids and frag not in ids[dest]:
                problems.append(f"{page.relative_to(site)}: broken anchor {url}")
    return problems


def _exists(page: Path, url: str, site: Path) -> bool:
    path = (page.parent / unquote(urldefrag(url)[0].split("?")[0])).resolve()
    if path.is_dir():
        path = path / "index.html"
    return path.exists() and site.resolve() in path.parents


def check_browser(site: Path, pages: list[str], searches: dict | None = None) -> list[str]:
    """Render ``pages`` in headless Chromium from a local server; a page whose main content is
    missing is a problem. ``searches``: query -> the page that the site's search must rank
    among its first 3 results. Returns [] without Chromium (says so)."""
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which(
        "google-chrome")
    if chrome is None:
        print("check_site: no Chromium found, the pages were not rendered (apt-get install "
              "chromium to render them)")
        return []
    failed = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def log_request(self, code="-", size="-"):
            if str(code).isdigit() and int(code) >= 400 and self.path != "/favicon.ico":
                failed.append(f"{self.path} ({code})")

    handler = partial(Handler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    problems = []
    try:
        for rel in pages:
            url = f"http://127.0.0.1:{server.server_port}/{rel}"
            out = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu",
                                  "--virtual-time-budget=3000", "--dump-dom", url],
                                 capture_output=True, text=True, timeout=120)
            dom = out.stdout
            if out.returncode != 0 or 'class="main"' not in dom or "<article" not in dom:
                problems.append(f"{rel}: did not render in Chromium ({out.returncode}: "
                                f"{out.stderr.strip()[-200:]})")
            else:
                print(f"check_site: rendered {rel} ({len(dom)} characters of DOM)")
        for query, want in (searches or {}).items():
            url = (f"http://127.0.0.1:{server.server_port}/search.html?q="
                   f"{query.replace(' ', '+')}")
            out = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu",
                                  "--virtual-time-budget=15000", "--dump-dom", url],
                                 capture_output=True, text=True, timeout=180)
            found = search_results(out.stdout)
            top = [f.split("#")[0].removesuffix(".html") for f in found[:3]]
            if want not in top:
                problems.append(f"search {query!r}: {want} is not among the first 3 results "
                                f"({json.dumps(found[:5])})")
            else:
                print(f"check_site: search {query!r}: {want} is result "
                      f"{top.index(want) + 1} of {len(found)}")
    finally:
        server.shutdown()
    return problems + [f"a page requested {f}, which failed" for f in failed]


def search_results(dom: str) -> list[str]:
    """The result links of a rendered search page, in order (the ``ul.search`` list)."""
    m = re.search(r'<ul\b[^>]*class="search"[^>]*>(.*?)</ul>', dom, re.S)
    return re.findall(r'<a\b[^>]*href="([^"]+)"', m.group(1)) if m else []


def main(argv=None) -> int:
    site = Path((argv or sys.argv[1:] or ["docs/_build/html"])[0])
    if not (site / "index.html").exists():
        print(f"check_site: no site at {site}; run make docs first")
        return 1
    problems = check_files(site) + check_pages(site)
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if p.name not in ("search.html", "genindex.html"))
    problems += check_browser(site, pages, SEARCHES)
    for p in problems:
        print(p)
    n = len(list(site.rglob("*.html")))
    print(f"check_site: {n} pages, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
