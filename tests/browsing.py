"""The browser tests' shared parts (a support module, not a test module: the browser test modules
import it, never each other; tests/conftest.py registers its fixtures).

- ``serving``: a real ``fuseki serve`` subprocess (``--port 0``: the server picks a free
  loopback port and prints it); ``in_process``: the application from a thread of this process,
  for the tests that change its module's settings or hold its answers;
- one Chromium for the whole session (Debian's chromium through the system chromedriver), lent
  to each test by the function-scoped ``browser`` fixture in a clean state (``SharedChromium.lend``):
  starting Chromium costs seconds a test, the cleaning milliseconds;
- ``chromium``: a second, separate browser session for the tests that need one (a link opened in
  a new browser, options restored by a new session);
- ``Page``: reads and drives the page, each read one script (the page may redraw between two).

Skips when chromium, chromedriver or selenium is missing (fails under
``FUSEKI_REQUIRE_SERVICES=1``, as the other service tests do).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WINDOW = (1500, 1100)  # every browser's window; a test that resizes it gets it back (SharedChromium.lend)
TAP = 40  # px: the smallest tap target on a phone or a tablet

# Every origin a test server had: the shared browser's storage of each is cleared between tests
# (a later server may get the same port, and so the same origin, as an earlier one).
ORIGINS: set[str] = set()


def _served(url: str) -> str:
    parts = urlsplit(url)
    ORIGINS.add(f"{parts.scheme}://{parts.netloc}")
    return url


@contextlib.contextmanager
def serving(book, *args: str, env: dict | None = None):
    """The URL of a ``fuseki serve`` of ``book`` on a loopback port (more ``args``, ``env``)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "fuseki", "serve", "--book", str(book), "--port", "0", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {}),
             "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(30)
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", lines[0] if lines else "")
    if not match:
        process.kill()
        pytest.fail(f"fuseki serve did not start: {lines} {process.stderr.read()[-2000:]}")
    try:
        yield _served(match.group(0))
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def in_process(book_path, hold: threading.Event | None = None):
    """The URL of the book's application served from a thread of this process; with ``hold``,
    each /api/ request waits until it is set (``hold.asked`` counts the requests waiting)."""
    from werkzeug.serving import make_server

    from fuseki.book.ui.web.app import create_app

    app = create_app(book_url=str(book_path), cache_bytes=0)
    answer = app.wsgi_app

    def held(environ, start_response):
        if hold is not None and environ["PATH_INFO"].startswith("/api/"):
            hold.asked += 1
            hold.wait(60)
        return answer(environ, start_response)

    app.wsgi_app = held
    http = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield _served(f"http://127.0.0.1:{http.server_port}/")
    finally:
        if hold is not None:
            hold.set()
        http.shutdown()
        thread.join(10)
        app.extensions["fuseki_book"].close()


def _need_chromium():
    from conftest import missing_service  # here, not at the top: conftest imports this module

    for program in (CHROMIUM, CHROMEDRIVER):
        if not os.access(program, os.X_OK):
            missing_service(f"{program} is not installed (apt-get install chromium chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing_service("selenium is not installed")


def start_chromium(profile, log=False):
    """A new Chromium session on its own ``profile`` folder, the window WINDOW; with ``log``, its
    console log kept whole (every level) for ``get_log("browser")``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    _need_chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}"]:
        options.add_argument(flag)
    if log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    return driver


@contextlib.contextmanager
def chromium(profile):
    """A second, separate browser session (its own profile) whose console log can be read."""
    driver = start_chromium(profile, log=True)
    try:
        yield driver
    finally:
        driver.quit()


class SharedChromium:
    """One Chromium for the session, lent to one test at a time in a clean state; a new one
    when the last test killed it (or closed its window)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.driver = None
        self.started = 0  # Chromiums started: 1 unless a test killed one
        self.size = None  # the window's size as Chromium opened it (WINDOW, in its own measure)

    def _start(self):
        self.started += 1
        self.driver = start_chromium(self.folder / f"profile-{self.started}", log=True)
        self.size = self.driver.get_window_size()

    def close(self):
        if self.driver is not None:
            with contextlib.suppress(Exception):  # already dead: nothing to close
                self.driver.quit()
            self.driver = None

    def lend(self):
        """The driver as a new Chromium would be: one new blank tab (about:blank), no storage,
        cookies, cache or permissions of any test server's origin, no device emulation, the window
        WINDOW, no key held, the console log read out, the default timeouts."""
        from selenium.common.exceptions import WebDriverException

        if self.driver is not None:
            try:
                self._clean()
                return self.driver
            except WebDriverException:  # Chromium died or lost its window: start another
                self.close()
        self._start()
        self._clean()
        return self.driver

    def _clean(self):
        from selenium.webdriver.common.action_chains import ActionChains

        driver = self.driver
        handles = driver.window_handles
        if not handles:
            raise _gone()
        # a new tab for each test: no history to go back into, no sessionStorage, no device
        # emulation (each is the tab's), the last page's scripts (timers, polling) gone with it
        driver.switch_to.new_window("tab")
        fresh = driver.current_window_handle
        for handle in handles:  # the last test's tab and any it opened
            driver.switch_to.window(handle)
            driver.close()
        driver.switch_to.window(fresh)
        ActionChains(driver).reset_actions()  # no key or button left pressed by a failed test
        cdp = driver.execute_cdp_cmd
        cdp("Emulation.clearDeviceMetricsOverride", {})
        cdp("Emulation.setTouchEmulationEnabled", {"enabled": False})
        cdp("Browser.resetPermissions", {})
        cdp("Network.clearBrowserCookies", {})
        cdp("Network.clearBrowserCache", {})
        for origin in sorted(ORIGINS):  # localStorage, IndexedDB, caches, cookies
            cdp("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        if driver.get_window_size() != self.size:
            driver.set_window_size(self.size["width"], self.size["height"])
        driver.set_page_load_timeout(60)
        driver.implicitly_wait(0)
        driver.set_script_timeout(60)
        driver.get_log("browser")  # read out: a test sees its own console messages only


def _gone():
    from selenium.common.exceptions import NoSuchWindowException

    return NoSuchWindowException("the shared Chromium has no window left")


@pytest.fixture(scope="session")
def shared_chromium(tmp_path_factory):
    """The session's Chromium (started by the first test that borrows it)."""
    shared = SharedChromium(tmp_path_factory.mktemp("chromium"))
    yield shared
    shared.close()


@pytest.fixture
def browser(shared_chromium):
    """The session's Chromium, clean (SharedChromium.lend), for this test."""
    _need_chromium()
    return shared_chromium.lend()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The URL of a ``fuseki serve`` on a loopback port over the small book (webbook.GAMES), one
    per module: its tests only read the book."""
    from webbook import build_book

    with serving(build_book(tmp_path_factory.mktemp("served") / "book.sqlite")) as url:
        yield url


def show_tab_of(driver, selector):
    """Clicks the tab of the panel holding ``selector`` when that panel is not shown (index.html's
    #tabs: next moves, games, replay, and on a phone the pattern and filters), as a player would
    before using a control in it."""
    from selenium.webdriver.common.by import By

    tab = driver.execute_script(
        "const e = document.querySelector(arguments[0]); const panel = e && e.closest('[role=tabpanel]');"
        "return panel && !panel.getClientRects().length && !document.body.classList.contains('player-mode')"
        " ? 'tab-' + panel.id : null", selector)
    if tab:
        driver.find_element(By.ID, tab).click()


def emulate(browser, width, height, mobile):
    """A device's viewport (``mobile``: one honouring the page's ``<meta name="viewport">``, with
    touch), through the DevTools protocol; SharedChromium.lend clears it for the next test."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": mobile, "maxTouchPoints": 5})


def keys(driver, *sequence):
    """Presses ``sequence`` (strings or Keys) as a person types them, to the focused element."""
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(driver)
    for key in sequence:
        chain.send_keys(key)
    chain.perform()


def back_tab(driver, times=1):
    """Shift+Tab ``times``: the focus moves to the previous tab stop each time."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    chain = ActionChains(driver).key_down(Keys.SHIFT)
    for _ in range(times):
        chain.send_keys(Keys.TAB)
    chain.key_up(Keys.SHIFT).perform()


class Page:
    """Reads and drives the page: each read is one script (the page may redraw between two reads)."""

    def __init__(self, driver, timeout=60):
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        self.driver = driver
        self.wait = WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def module(self, script, *args):
        """``script`` run as the body of an async function, for the page's ES modules (they define no
        globals: the script imports what it reads, ``await import('/static/board.js')``, the same
        module instances the page runs, ``app.js``'s ``state`` among them); ``arguments`` are ``args``."""
        found = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            f"(async () => {{ {script} }})()"
            ".then((value) => done({value}), (error) => done({error: String(error)}))",
            *args)
        assert "error" not in found, found["error"]
        return found.get("value")

    def text(self, element_id):
        return self.js("return document.getElementById(arguments[0]).textContent", element_id)

    def rows(self, selector):
        return self.js("return [...document.querySelectorAll(arguments[0] + ' tbody tr')]"
                       ".map(row => [...row.cells].map(cell => cell.textContent.trim()))", selector)

    def stones(self, board):
        return sorted(self.js("return [...document.querySelectorAll(arguments[0])].map(s => s.dataset.sgf)",
                              f"#{board} circle.stone"))

    def click(self, selector):
        from selenium.webdriver.common.by import By

        show_tab_of(self.driver, selector)
        # the page may redraw the element between finding and clicking it (a board after a late
        # answer): a stale element was never clicked, so it is found again (self.wait ignores stale)
        self.wait(lambda _: self.driver.find_element(By.CSS_SELECTOR, selector).click() or True)

    def open(self, url):
        self.driver.get(url)
        self.wait(lambda _: re.search(r"\bgames? ·", self.text("book-info")))  # "1 game · ...", "2,339 games · ..."

    def ready(self):
        self.wait(lambda _: self.js("return document.querySelectorAll('#search-board .targets rect').length"))

    def move_number(self):
        """The search position's move number (-1 before the API's first answer)."""
        found = re.match(r"move (\d+)\b", self.text("search-status"))
        return int(found.group(1)) if found else -1

    def at(self, number):
        self.wait(lambda _: self.move_number() == number)

    def games_at(self, number):
        """Wait for the games list of the position at move ``number`` (its rows' last cell): the list
        comes by a request after the position shows, and the last position's stays on screen until
        then.  One read of the table a try: two reads may straddle a redraw (the second finds it emptied)."""
        self.wait(lambda _: (rows := self.rows("#games-table")) and rows[0][-1] == str(number))

    def play(self, *points):
        for sgf in points:
            self.ready()
            number = self.move_number()
            self.click(f'#search-board rect[data-sgf="{sgf}"]')
            self.at(number + 1)

    def view(self):
        """What a visitor sees: the search, the filters, the lists, the replayed game."""
        return {"status": self.text("search-status"), "stones": self.stones("search-board"),
                "next": self.rows("#next-table"), "summary": self.text("next-summary"),
                "filters": self.js("return ['year-from', 'year-to', 'player']"
                                   ".map(id => document.getElementById(id).value)"),
                "games": self.rows("#games-table"), "games_summary": self.text("games-summary"),
                "selected": self.js("return [...document.querySelectorAll('#games-table tr.selected')]"
                                    ".map(r => r.dataset.id)"),
                "game": self.text("game-info"), "move": self.text("move-number"),
                "replay": self.stones("replay-board"), "region": self.text("pattern-region")}


ENV = dict(os.environ)  # conftest's PYTHONPATH: the server runs this checkout, not an installed fuseki


def start_serve(book: str, *options: str) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen([sys.executable, "-m", "fuseki", "serve", "--book", book, "--port", "0", *options],
                               cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    match = re.search(r"at http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
    assert match, process.communicate(timeout=10)[1][-2000:]
    return process, int(match.group(1))


def stop_serve(process: subprocess.Popen) -> None:
    """End a ``start_serve`` server: SIGTERM, then SIGKILL if it has not gone in 30 s."""
    process.terminate()
    try:
        process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
