"""The dashboard (#33) in a real headless Chromium (Debian's ``chromium``
and ``chromedriver``, installed by ``.ci/run``), driven through WebDriver
against ``timerhost dev``: the page's height and pending-timer count match
RPC, a timer scheduled here is followed from pending to fired (its page
shows the fire's cost), the devnet's cron job and a watch are listed, and a
new block arrives without a reload, pushed through the page's WebSocket
subscription (#48).

With ``TIMERHOST_DASHBOARD_SHOTS=DIR`` the test saves a screenshot of each
view there (``docs/dashboard/`` holds the committed ones)."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from timerhost.rpc import RpcChain

from test_examples import _binary

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

TICKER = '''
import pvm_host

class Ticker:
    def arm(self, blocks):
        return pvm_host.schedule_timer_ex(pvm_host.block_height() + blocks, b"tick", gas_limit=50000)

    def watch_me(self):
        return pvm_host.watch(["price"], gas_limit=50000)

    def book(self, blocks):
        return pvm_host.book_timer(pvm_host.block_height() + blocks, b"tick", gas_limit=50000)

    def doomed(self):
        return pvm_host.schedule_timer_ex(pvm_host.block_height() + 1, b"doom", gas_limit=50000,
                                          retries=1, retry_backoff=1)

    def handle_timer(self, payload):
        if payload == b"doom":
            raise RuntimeError("doomed on purpose")
        self.storage["ticks"] = self.storage.get("ticks", 0) + 1
'''


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    home = tmp_path_factory.mktemp("dash") / "home"
    proc = subprocess.Popen(
        [_binary(), "dev", "--block-time", "400ms", "--rpc", "127.0.0.1:0", "--home", str(home), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        started = None
        for line in proc.stdout:
            event = json.loads(line)
            if event.get("event") == "started":
                started = event
                break
        assert started, "timerhost dev did not start"
        assert started["dashboard"] == started["rpc"] + "/"
        yield started["rpc"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser():
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        if os.environ.get("CI"):
            pytest.fail("chromium and chromedriver are required (.ci/run installs them)")
        pytest.skip("no chromium/chromedriver (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1300,1500"]:
        options.add_argument(arg)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(check, within=30.0, what="condition"):
    deadline = time.monotonic() + within
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except Exception as e:  # the page is re-rendering: try again
            last = e
        time.sleep(0.2)
    raise AssertionError(f"{what} not met within {within} s (last: {last!r})")


def by_testid(driver, name):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{name}"]')


def text_of(driver, testid):
    """The element's text, read again while the page re-renders it (a live
    view re-renders on every new head, leaving a found element stale)."""
    return wait_for(lambda: by_testid(driver, testid).text, within=10, what=testid)


def shoot(driver, name):
    target = os.environ.get("TIMERHOST_DASHBOARD_SHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        time.sleep(0.5)
        driver.save_screenshot(str(Path(target) / f"{name}.png"))


def as_int(text):
    return int(text.replace(",", ""))


def test_the_dashboard_follows_the_chain(node, browser):
    chain = RpcChain(node)
    ticker = chain.deploy(TICKER, value=10**21)

    # Now: the height and the pending count match RPC.
    browser.get(node + "/")
    wait_for(lambda: by_testid(browser, "pending-timers").text not in ("", "…"), what="the Now view")

    def matches_rpc():
        status = chain.rpc("th_status")
        shown = as_int(by_testid(browser, "now-height").text)
        pending = as_int(by_testid(browser, "pending-timers").text)
        return shown == status["height"] and pending == status["timers"]["pending"]

    wait_for(matches_rpc, what="height and pending timers equal to th_status")
    assert text_of(browser, "producer-mode") == "dev"
    assert as_int(text_of(browser, "fired-total")) >= 0
    shoot(browser, "now")

    # Live: a new block appears without a reload, pushed through the
    # WebSocket subscription (#48), not polled.
    wait_for(
        lambda: browser.execute_script("return document.body.dataset.live") == "subscription",
        what="the page following new heads through th_subscribe",
    )
    seen = as_int(text_of(browser, "height"))
    wait_for(lambda: as_int(by_testid(browser, "height").text) > seen, what="a new block, live")

    # A timer from pending to fired, on its own page.
    returned = chain.call(ticker, "arm", 8).raise_for_status().return_value
    hex_id = returned["$bytes"] if isinstance(returned, dict) else "0x" + returned.hex()
    browser.get(f"{node}/#/timers?actor={ticker}")
    wait_for(lambda: browser.find_element(By.CSS_SELECTOR, f'[data-testid="timer-row-{hex_id}"]'), what="the timer's row")
    shoot(browser, "timers")

    def open_its_page():
        # The table re-renders at every block: find the link afresh.
        row = browser.find_element(By.CSS_SELECTOR, f'[data-testid="timer-row-{hex_id}"]')
        row.find_element(By.TAG_NAME, "a").click()
        return "#/timer/" in browser.current_url

    wait_for(open_its_page, what="its page opened from its row")
    wait_for(lambda: by_testid(browser, "timer-state").text == "pending", what="its page, pending")
    assert "not due yet" in text_of(browser, "why")
    shoot(browser, "timer-pending")
    cost = wait_for(lambda: by_testid(browser, "fire-cost").text, within=60, what="its fire on its page")
    def id_of(v):
        return v["$bytes"] if isinstance(v, dict) else "0x" + v.hex()

    fired = [e for e in chain.events(name="TimerFired", actor=ticker) if id_of(e.data["timer_id"]) == hex_id]
    assert len(fired) == 1 and as_int(cost) == fired[0].data["cost"]
    assert text_of(browser, "timer-state") == "not pending"
    shoot(browser, "timer-fired")

    # The devnet's cron job and a watch.
    chain.call(ticker, "watch_me").raise_for_status()
    browser.get(node + "/#/cron")
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, '[data-testid^="cron-row-"]'), what="a cron job")
    shoot(browser, "cron")
    browser.get(node + "/#/watches")
    owner = str(ticker)[:10]
    wait_for(
        lambda: [r for r in browser.find_elements(By.CSS_SELECTOR, '[data-testid^="watch-row-"]') if owner in r.text],
        what="the ticker's watch",
    )
    shoot(browser, "watches")
    # #45: a timer whose retry fails too lands in the dead-letter queue,
    # which the actor view lists; a booking shows in the Ahead view.
    chain.call(ticker, "doomed").raise_for_status()
    wait_for(lambda: chain.dead_letters(ticker), within=60, what="a dead letter")
    browser.get(f"{node}/#/actor/{ticker}")
    wait_for(lambda: "Storage keys" in browser.page_source, what="the actor view")
    wait_for(
        lambda: browser.find_elements(By.CSS_SELECTOR, '[data-testid^="dead-letter-0x"]'),
        what="the dead letter in the actor view",
    )
    assert "doomed on purpose" in text_of(browser, "dead-letters")
    shoot(browser, "actor")
    chain.call(ticker, "book", 20).raise_for_status()
    browser.get(node + "/")
    wait_for(lambda: "booked capacity by height" in browser.page_source, what="the Ahead view's bookings")
    wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#ahead canvas")) >= 3, what="the Ahead charts drawn")
    shoot(browser, "ahead-bookings")

    # Names beside addresses (#48): a deployed actor's class, on the cron
    # page (the devnet's example) and the watch page (ours).
    browser.get(node + "/#/cron")
    wait_for(
        lambda: "Subscriptions" in " ".join(e.text for e in browser.find_elements(By.CSS_SELECTOR, ".name")),
        what="the devnet's subscriptions actor named by its class",
    )
    browser.get(node + "/#/watches")
    wait_for(
        lambda: "Ticker" in " ".join(e.text for e in browser.find_elements(By.CSS_SELECTOR, ".name")),
        what="the ticker named by its class",
    )
    # The timer's life as readable fields, not raw JSON.
    browser.get(f"{node}/#/timer/{hex_id}")
    wait_for(lambda: by_testid(browser, "timer-state").text == "not pending", what="the fired timer's page")
    # Read the table through a wait: the page re-renders it at every head.
    table = wait_for(lambda: browser.find_element(By.TAG_NAME, "table").text, within=10, what="the timer's table")
    raw = [l for l in table.splitlines() if '{"' in l]
    assert not raw, raw
    # Governance (#48): a dev chain has proposals only by validators, and
    # says it has no validator set.
    browser.get(node + "/#/governance")
    wait_for(lambda: by_testid(browser, "proposals"), what="the governance view")
    assert "no validator set" in browser.page_source
    shoot(browser, "governance")
