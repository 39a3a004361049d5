"""The HTML in a real browser: Playwright drives Debian's Chromium (/usr/bin/chromium, never a downloaded one)
over pages served by a stdlib ``http.server`` thread on 127.0.0.1.

Checked on a small ``sphinx.testing`` root (tests/roots/test-browser, against a git fixture built here): no
console errors and no request leaving 127.0.0.1, mermaid blocks become SVG and formulas are typeset by MathJax,
both from ``_static``; the copy button copies an excerpt without its line numbers, and a quoted line holding
``<script>alert(1)</script>`` is text that runs nothing; Chinese ("事件循环") and English ("gather") searches find
their pages. The same searches run on the real book when the pinned Slime commit is in the cache.

Skips, saying why, without Playwright or /usr/bin/chromium; ``.ci/run`` installs both (Debian ``chromium``
through ``.ci/system-deps.sh browser``, Playwright through the ``dev`` extra).
"""

from __future__ import annotations

import functools
import os
import subprocess
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from sphinx.testing.util import SphinxTestApp

from conftest import ROOT, SourceRepo, commit_all, git, root_at_pin

try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    sync_playwright = None

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
TIMEOUT_MS = 30_000

pytestmark = [
    pytest.mark.skipif(sync_playwright is None,
                       reason="playwright is not installed (it is in the dev extra: pip install -e '.[dev]')"),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"{CHROMIUM} is missing (Debian: `bash .ci/system-deps.sh browser`); "
                              "the tests never let Playwright download a browser"),
]


def _mermaid_static() -> Path | None:
    """The staged mermaid bundle (.ci/node-deps.sh), looked up before any test changes SLIMEBOOK_CACHE."""
    out = subprocess.run(["bash", str(ROOT / ".ci" / "node-deps.sh"), "--dir"], capture_output=True, text=True,
                         check=False).stdout.strip()
    static = Path(out) / "static" if out else None
    return static if static and (static / "mermaid" / "mermaid.esm.min.mjs").is_file() else None


MERMAID_STATIC = _mermaid_static()

# The fixture upstream: one file whose lines hold markup that must stay text.
XSS_PY = textwrap.dedent('''\
    def page():
        html = "<script>alert(1)</script>"
        other = '</code></pre><img src=x onerror="alert(2)">'
        return html + other
    ''')


# Concurrency API uses with long dotted names, for the generated usage tables.
TASKS_PY = textwrap.dedent('''\
    import asyncio
    import concurrent.futures
    import threading


    async def test_generate_and_rm_default_generate_branch_is_stable_without_any_dots():
        await asyncio.sleep(0)


    async def main():
        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            first = await loop.run_in_executor(pool, threading.get_ident)
        future = asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop)
        task = asyncio.ensure_future(asyncio.sleep(0))
        done, pending = await asyncio.wait([task], return_when=asyncio.FIRST_COMPLETED)
        return first, future, done, pending, asyncio.current_task(), asyncio.all_tasks()
    ''')


# -- serving and visiting ------------------------------------------------------------------------------
class _Handler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript",
                      ".js": "text/javascript"}

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
        pass


def serve(directory: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Visit:
    """What one page did: console errors, uncaught exceptions, dialogs, requests (local and not)."""

    page: Page
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @property
    def foreign(self) -> list[str]:
        return [u for u in self.requests if urlsplit(u).hostname not in ("127.0.0.1", None)
                and not u.startswith(("data:", "blob:", "about:"))]

    def assert_clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.dialogs == [], self.dialogs
        assert self.foreign == [], self.foreign


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def visit(browser: Browser) -> Iterator:
    contexts = []

    def _visit(url: str) -> Visit:
        context = browser.new_context(locale="zh-CN")
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        seen = Visit(page)
        page.on("console", lambda m: seen.errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: seen.errors.append(f"pageerror: {e}"))
        page.on("dialog", lambda d: (seen.dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: seen.requests.append(r.url))
        # Nothing leaves the machine, even by mistake: foreign requests are recorded above and aborted here.
        context.route("**/*", lambda route: route.continue_() if urlsplit(route.request.url).hostname == "127.0.0.1"
                      else route.abort())
        page.goto(url, wait_until="load")
        return seen

    yield _visit
    for context in contexts:
        context.close()


def search(visit, base: str, query: str) -> tuple[Visit, list[str]]:
    """Run Sphinx's search page for ``query``; return the visit and the result links (page paths)."""
    seen = visit(f"{base}/search.html?q={quote(query)}")
    seen.page.wait_for_selector("#search-results ul.search li, #search-results p", state="attached")
    seen.page.wait_for_function("() => !document.querySelector('#search-progress')?.textContent.trim() || "
                                "document.querySelectorAll('#search-results ul.search li').length > 0")
    links = seen.page.eval_on_selector_all("#search-results ul.search li a",
                                           "els => els.map(e => new URL(e.href).pathname)")
    return seen, links


# -- the fixture site ----------------------------------------------------------------------------------
def _make_upstream(base: Path) -> SourceRepo:
    repo = base / "upstream"
    (repo / "pkg").mkdir(parents=True)
    git("init", "--quiet", "--initial-branch=main", str(repo), cwd=base)
    (repo / "pkg" / "xss.py").write_text(XSS_PY)
    (repo / "pkg" / "tasks.py").write_text(TASKS_PY)  # usage pages with long names and paths
    pin = commit_all(repo, "one")
    return SourceRepo(repo, pin, pin)


def build_site(base: Path, node_dir: Path | None) -> SphinxTestApp:
    """Build tests/roots/test-browser under ``base`` against a fixture upstream; mermaid from ``node_dir``
    (a .ci/node-deps.sh base directory) or, with None, from nowhere local."""
    upstream = _make_upstream(base)
    src, cache = root_at_pin("browser", base, upstream)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SLIMEBOOK_CACHE", str(cache))
        mp.setenv("SLIMEBOOK_TEST_BOOK_CONF", str(ROOT / "conf.py"))
        mp.setenv("SLIMEBOOK_NODE", str(node_dir or base / "no-node"))
        app = SphinxTestApp("html", srcdir=src, status=StringIO(), warning=StringIO())
        try:
            app.build()
        finally:
            app.cleanup()
    return app


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # the node directory as found before any test changed SLIMEBOOK_CACHE
    app = build_site(tmp_path_factory.mktemp("browser"), MERMAID_STATIC.parent.parent if MERMAID_STATIC else None)
    assert "ERROR" not in app._warning.getvalue(), app._warning.getvalue()
    yield from serve(Path(app.outdir))


def test_pages_load_without_errors_or_foreign_requests(site: str, visit) -> None:
    for page in ("index.html", "loop.html", "gather.html", "math.html", "search.html"):
        seen = visit(f"{site}/{page}")
        seen.page.wait_for_load_state("networkidle")
        seen.assert_clean()
        assert any(u.endswith(f"/{page}") for u in seen.requests)


def test_mermaid_becomes_svg_from_static(site: str, visit) -> None:
    if MERMAID_STATIC is None:
        pytest.skip("mermaid is not staged in the cache (run `bash .ci/node-deps.sh`, needs npm); without it the "
                    "pages load mermaid from the jsDelivr CDN, which this offline test refuses")
    seen = visit(f"{site}/index.html")
    # the diagram's labels end up inside the SVG (mermaid renders it off-screen first, then swaps it in)
    seen.page.wait_for_function("() => [...document.querySelectorAll('.mermaid svg')]"
                                ".some(s => s.textContent.includes('事件循环'))")
    assert seen.page.locator(".mermaid svg").count() == 1
    assert "flowchart" not in seen.page.locator(".mermaid").first.inner_text()  # no source text left over
    if os.environ.get("SLIMEBOOK_SCREENSHOTS"):
        seen.page.locator(".mermaid").first.screenshot(path=Path(os.environ["SLIMEBOOK_SCREENSHOTS"]) / "mermaid.png")
    loaded = [u for u in seen.requests if "mermaid" in u and u.endswith(".mjs")]
    assert any(u.endswith("/_static/mermaid/mermaid.esm.min.mjs") for u in loaded), loaded
    seen.page.wait_for_load_state("networkidle")
    seen.assert_clean()


def test_math_is_typeset_from_static(site: str, visit) -> None:
    if MERMAID_STATIC is None or not (MERMAID_STATIC / "mathjax" / "tex-chtml.js").is_file():
        pytest.skip("MathJax is not staged in the cache (run `bash .ci/node-deps.sh`, needs npm); without it the "
                    "pages load MathJax from the jsDelivr CDN, which this offline test refuses")
    seen = visit(f"{site}/math.html")
    seen.page.wait_for_function("() => document.querySelectorAll('mjx-container').length === 2")
    assert seen.page.locator("mjx-container[display='true']").count() == 1  # the block formula
    seen.page.wait_for_load_state("networkidle")
    loaded = [u for u in seen.requests if "mathjax" in u]
    assert any(urlsplit(u).path.endswith("/_static/mathjax/tex-chtml.js") for u in loaded), loaded
    assert any(".woff" in u for u in loaded), loaded  # its fonts came from beside it
    seen.assert_clean()


def test_copy_button_copies_code_without_line_numbers(site: str, visit) -> None:
    seen = visit(f"{site}/index.html")
    block = seen.page.locator(".slime-source .highlight").first
    assert "2" in block.locator(".linenos").first.inner_text()  # line numbers are shown…
    block.hover()
    block.locator("button.copybtn").click()
    copied = seen.page.evaluate("() => navigator.clipboard.readText()")
    assert copied.rstrip("\n") == "\n".join(XSS_PY.splitlines()[1:4])  # …but not copied
    seen.assert_clean()


def test_markup_in_a_quoted_line_is_text_and_runs_nothing(site: str, visit) -> None:
    seen = visit(f"{site}/index.html")
    seen.page.wait_for_load_state("networkidle")
    code = seen.page.locator(".slime-source pre").first.inner_text()
    assert '"<script>alert(1)</script>"' in code
    assert "<img src=x onerror=\"alert(2)\">" in code
    # nothing became an element: no injected script or image, no dialog, no request for "x"
    assert seen.page.evaluate("() => [...document.scripts].filter(s => s.textContent.includes('alert(')).length") == 0
    assert seen.page.locator(".slime-source img").count() == 0
    assert not [u for u in seen.requests if u.endswith("/x")]
    seen.assert_clean()


@pytest.mark.parametrize(("query", "page"), [("事件循环", "/loop.html"), ("gather", "/gather.html")])
def test_search_finds_chinese_and_english_terms(site: str, visit, query: str, page: str) -> None:
    seen, links = search(visit, site, query)
    assert links and links[0] == page, links
    seen.assert_clean()


# -- reader features (issue 16) ---------------------------------------------------------------------------
def _need_mermaid() -> None:
    if MERMAID_STATIC is None:
        pytest.skip("mermaid is not staged in the cache (run `bash .ci/node-deps.sh`, needs npm)")


_LABEL_HEIGHTS = """(root) => [...root.querySelectorAll('text, .nodeLabel, .edgeLabel, .messageText, .actor')]
    .filter(e => e.textContent.trim() && !e.querySelector('text'))
    .map(e => [e.textContent.trim(), e.getBoundingClientRect().height])"""


def test_a_wide_diagram_opens_full_width_and_escape_leaves(site: str, visit) -> None:
    _need_mermaid()
    seen = visit(f"{site}/reader.html")
    page = seen.page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.wait_for_function("() => document.querySelector('.mermaid svg') && "
                           "document.querySelector('.mermaid').textContent.includes('推理引擎')")
    diagram = page.locator(".mermaid").first
    small = dict(diagram.evaluate(_LABEL_HEIGHTS))
    assert min(small.values()) < 12, small  # scaled to the column, the labels are too small to read
    diagram.click()
    dialog = page.locator("dialog.slimebook-diagram-dialog")
    assert dialog.evaluate("d => d.open")
    heights = dict(dialog.evaluate(_LABEL_HEIGHTS))
    assert {"推理引擎", "generate(input_ids)", "POST /v1/messages"} <= set(heights), heights
    assert min(heights.values()) >= 12, heights
    if os.environ.get("SLIMEBOOK_SCREENSHOTS"):
        page.screenshot(path=Path(os.environ["SLIMEBOOK_SCREENSHOTS"]) / "diagram-open.png")
    page.keyboard.press("Escape")
    assert not dialog.evaluate("d => d.open")
    assert diagram.locator("svg").count() == 1  # the diagram is back in its place…
    assert page.evaluate("() => document.activeElement.classList.contains('mermaid')")  # …and has the focus
    page.keyboard.press("Enter")  # the keyboard way in
    assert dialog.evaluate("d => d.open")
    page.keyboard.press("Escape")
    seen.assert_clean()


_TABLE_WIDTHS = """() => {
    const column = document.querySelector('article[role=main]') || document.querySelector('article');
    const limit = column.getBoundingClientRect().right + 0.5;
    return [...document.querySelectorAll('table')].map(t => [t.className, t.getBoundingClientRect().right, limit,
        t.scrollWidth, t.parentElement.clientWidth]);
}"""


@pytest.mark.parametrize("page", ["index", "files", "coverage", "category/asyncio", "category/executors"])
def test_generated_tables_fit_the_column_at_1280px(site: str, visit, page: str) -> None:
    seen = visit(f"{site}/_slimebook/usage/{page}.html")
    seen.page.set_viewport_size({"width": 1280, "height": 900})
    seen.page.wait_for_load_state("networkidle")
    tables = seen.page.evaluate(_TABLE_WIDTHS)
    assert tables, "no table on the page"
    for name, right, limit, scroll_width, parent_width in tables:
        assert right <= limit, (name, right, limit)
        assert scroll_width <= parent_width + 1, (name, scroll_width, parent_width)  # nothing to scroll sideways
    seen.assert_clean()


def test_copy_link_on_an_excerpt_caption(site: str, visit) -> None:
    seen = visit(f"{site}/index.html")
    wrapper = seen.page.locator("div.slime-source[id]").first
    excerpt_id = wrapper.get_attribute("id")
    wrapper.locator(".code-block-caption button.slimebook-copylink").click()
    copied = seen.page.evaluate("() => navigator.clipboard.readText()")
    assert copied == f"{site}/index.html#{excerpt_id}"
    seen.assert_clean()


def test_copy_link_on_a_snapshot_line(site: str, visit) -> None:
    seen = visit(f"{site}/_snapshot/pkg/xss.py.html#L2")
    page = seen.page
    page.locator("#L2 button.slimebook-copylink").click()
    assert page.evaluate("() => navigator.clipboard.readText()") == f"{site}/_snapshot/pkg/xss.py.html#L2"
    page.locator("#L3 a").first.click()  # clicking a line number targets that line; the button follows
    page.locator("#L3 button.slimebook-copylink").click()
    assert page.evaluate("() => navigator.clipboard.readText()") == f"{site}/_snapshot/pkg/xss.py.html#L3"
    assert page.locator("button.slimebook-copylink").count() == 1
    seen.assert_clean()


def test_dropdown_shows_keyboard_focus(site: str, visit) -> None:
    seen = visit(f"{site}/reader.html")
    page = seen.page
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.matches('details.sd-dropdown > summary')"):
            break
    else:
        pytest.fail("Tab never reached the dropdown")
    style = page.evaluate("() => { const s = getComputedStyle(document.activeElement); "
                          "return [s.outlineStyle, parseFloat(s.outlineWidth)]; }")
    assert style[0] != "none" and style[1] >= 2, style
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.querySelector('details.sd-dropdown').open")
    seen.assert_clean()


def _luminance(rgb: list[float]) -> float:
    def channel(c: float) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: list[float], b: list[float]) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_dark_theme_highlighted_lines_are_readable(site: str, visit, browser) -> None:
    seen = visit(f"{site}/index.html")
    page = seen.page
    page.emulate_media(color_scheme="dark")
    page.reload(wait_until="load")
    colours = page.evaluate("""() => {
        const rgb = c => c.match(/[\\d.]+/g).map(Number);
        const hll = document.querySelector('.slime-source .highlight .hll');
        const block = hll.closest('.highlight');
        const texts = [...hll.querySelectorAll('span')].filter(s => s.textContent.trim() && !s.closest('.linenos'));
        return {hll: rgb(getComputedStyle(hll).backgroundColor), block: rgb(getComputedStyle(block).backgroundColor),
                texts: texts.map(s => [s.textContent, rgb(getComputedStyle(s).color)]),
                dark: document.body.dataset.theme || 'auto'};
    }""")
    assert _luminance(colours["block"]) < 0.1, colours  # the dark theme is on
    assert _contrast(colours["hll"], colours["block"]) >= 1.3, colours  # the highlighted line stands out
    for text, colour in colours["texts"]:
        assert _contrast(colour, colours["hll"]) >= 4.5, (text, colour, colours["hll"])
    seen.assert_clean()


# -- the real book --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def book(realbook_html: Path) -> Iterator[str]:
    """The session's one real-book build (``realbook_html`` in conftest.py), served."""
    yield from serve(realbook_html)


@pytest.mark.realbook
@pytest.mark.parametrize(("query", "page", "within"), [
    # a Chinese term jieba would split without the book's word list; since lessons 08-21 most lessons use it, the
    # lesson that introduces it is only required among the results, not at the top
    ("事件循环", "/chapters/async/01-async-def.html", None),
    ("gather", "/chapters/async/03-tasks-gather.html", 3),
])
def test_real_book_search(book: str, visit, query: str, page: str, within: int | None) -> None:
    seen, links = search(visit, book, query)
    assert page in links[:within], links[:10]
    seen.assert_clean()


@pytest.mark.realbook
def test_real_book_diagram_page_is_offline_and_clean(book: str, visit) -> None:
    if MERMAID_STATIC is None:
        pytest.skip("mermaid is not staged in the cache (run `bash .ci/node-deps.sh`)")
    seen = visit(f"{book}/chapters/guide/walkthrough.html")
    seen.page.wait_for_selector("pre.mermaid svg")
    seen.page.wait_for_load_state("networkidle")
    seen.assert_clean()


@pytest.mark.realbook
def test_real_book_widest_diagram_opens_with_readable_labels(book: str, visit) -> None:
    _need_mermaid()
    seen = visit(f"{book}/chapters/guide/action4-harness-run.html")
    page = seen.page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.wait_for_function("() => [...document.querySelectorAll('pre.mermaid')].every(m => m.querySelector('svg'))")
    widest = page.evaluate("() => { const all = [...document.querySelectorAll('pre.mermaid')]; "
                           "const w = m => m.querySelector('svg').viewBox.baseVal.width; "
                           "return all.indexOf(all.reduce((a, b) => w(a) >= w(b) ? a : b)); }")
    diagram = page.locator("pre.mermaid").nth(widest)
    diagram.scroll_into_view_if_needed()
    diagram.click()
    heights = dict(page.locator("dialog.slimebook-diagram-dialog").evaluate(_LABEL_HEIGHTS))
    assert heights and min(heights.values()) >= 12, sorted(heights.items(), key=lambda kv: kv[1])[:5]
    page.keyboard.press("Escape")
    seen.assert_clean()


#: the classes of the tables the build generates: usage tables, the reading order, the repository map and heat map,
#: the source check
GENERATED_TABLES = ("slimebook-usage", "reading-order-table", "repo-map", "repo-heatmap", "slimebook-source-check")


@pytest.mark.realbook
@pytest.mark.parametrize("page", [
    "_slimebook/usage/index.html", "_slimebook/usage/files.html", "_slimebook/usage/coverage.html",
    "_slimebook/usage/category/asyncio.html", "_slimebook/usage/category/threading.html",
    "_slimebook/usage/category/syntax.html", "chapters/async/03-tasks-gather.html",
    "chapters/guide/reading-order.html", "chapters/guide/reuse-roadmap.html", "_slimebook/source-check.html",
])
def test_real_book_generated_tables_fit_at_1280px(book: str, visit, page: str) -> None:
    seen = visit(f"{book}/{page}")
    seen.page.set_viewport_size({"width": 1280, "height": 900})
    tables = [t for t in seen.page.evaluate(_TABLE_WIDTHS) if any(c in t[0] for c in GENERATED_TABLES)]
    assert tables, "no generated table on the page"
    for name, right, limit, scroll_width, parent_width in tables:
        assert right <= limit, (name, right, limit)
        assert scroll_width <= parent_width + 1, (name, scroll_width, parent_width)
