"""Check the built documentation site (``make docs-check``): every local link, image and script
of every page resolves inside the site; no page loads anything from another host (fonts,
scripts, styles, images: the site works offline); and, where Chromium is installed, each page
renders headless with its main content and no failed request.

    python docs/check_site.py docs/_build/html
"""

from __future__ import annotations

import http.server
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


def check_browser(site: Path, pages: list[str]) -> list[str]:
    """Render ``pages`` in headless Chromium from a local server; a page whose main content is
    missing is a problem. Returns [] without Chromium (says so)."""
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
    finally:
        server.shutdown()
    return problems + [f"a page requested {f}, which failed" for f in failed]


def main(argv=None) -> int:
    site = Path((argv or sys.argv[1:] or ["docs/_build/html"])[0])
    if not (site / "index.html").exists():
        print(f"check_site: no site at {site}; run make docs first")
        return 1
    problems = check_files(site)
    cards = sorted(p.relative_to(site).as_posix() for p in (site / "envs").glob("*.html"))
    problems += check_browser(site, ["index.html", *cards[:2], "api/offroad_env.html"])
    for p in problems:
        print(p)
    n = len(list(site.rglob("*.html")))
    print(f"check_site: {n} pages, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
