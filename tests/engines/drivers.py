"""One small driver for each engine the lessons are read in besides Chromium (whose full suite uses Playwright):
Debian's Firefox ESR through puppeteer-core over WebDriver BiDi (firefox_bridge.mjs: no geckodriver can be had
here), and WebKitGTK's MiniBrowser through Selenium's WebKitGTK driver on a virtual screen (it has no headless
mode). Both speak the same few verbs, so a smoke path is written once (tests/engines/test_engines_browser.py): open a
page, run a script in it, click an element (scrolled into view, a real click), type and press keys, and read
what the page logged.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIREFOX = os.environ.get("FIREFOX_PATH", "/usr/bin/firefox-esr")
MINIBROWSER = os.environ.get("MINIBROWSER_PATH", "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser")
WEBKIT_DRIVER = os.environ.get("WEBKIT_DRIVER_PATH", "/usr/bin/WebKitWebDriver")
ENGINES = ("firefox", "webkit")


def missing(engine: str) -> str | None:
    """Why `engine` cannot be driven here (a sentence naming what to install), or None."""
    chromium = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    need = {"chromium": [chromium], "firefox": [FIREFOX],
            "webkit": [MINIBROWSER, WEBKIT_DRIVER, shutil.which("Xvfb") or "/usr/bin/Xvfb"]}[engine]
    absent = [path for path in need if not Path(path).exists()]
    return f"{', '.join(absent)} not found: `./setup.sh --test` installs firefox-esr, webkit2gtk-driver and xvfb" if absent else None


class Driver:
    """The verbs the smoke path uses. `js(body, *args)` runs `body` as an async function's body in the page
    (the page's CSP does not apply: drivers evaluate as devtools do) and returns its JSON result."""

    name = ""

    def wait(self, body: str, what: str, timeout: float = 60.0, *args, state=None):
        """Poll `js(body, *args)` until it returns something truthy; return that, or fail naming `what`, what
        `state()` then says of the page (if given), and what the page logged."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(body, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                seen = f"; the page: {state()}" if state else ""
                raise AssertionError(f"{self.name}: waited {timeout:g} s for {what}{seen}; it logged: {self.logs()[-20:]}")
            time.sleep(0.25)


class Firefox(Driver):
    name = "firefox"

    def __init__(self):
        node = shutil.which("node") or "node"
        self.proc = subprocess.Popen([node, str(HERE / "firefox_bridge.mjs")], cwd=HERE.parent.parent, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "FIREFOX_PATH": FIREFOX})
        self.version = self._call("launch")

    def _call(self, command: str, **args):
        self.proc.stdin.write(json.dumps({"command": command, **args}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"firefox bridge ended (exit {self.proc.poll()}) during {command}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"firefox {command}: {answer['error']}")
        return answer["ok"]

    def open(self, url): self._call("open", url=url)
    def reload(self): self._call("reload")
    def js(self, body, *args): return self._call("js", body=body, args=list(args))
    def click(self, selector): self._call("click", selector=selector)
    def click_at(self, selector, x, y): self._call("clickAt", selector=selector, x=x, y=y)
    def type(self, text): self._call("type", text=text)
    def key(self, name): self._call("key", name=name)
    def logs(self): return self._call("logs")

    def close(self):
        try:
            self._call("close")
        except (RuntimeError, BrokenPipeError, OSError):
            pass
        # The bridge's node exits once its stdin ends (its line reader holds the event loop): left open, every
        # close waited the whole 20 s below before the kill (80 s of the engine smoke's four Firefox tests).
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class VirtualScreen:
    """An Xvfb display of its own for MiniBrowser (no headless mode), on the first free display number."""

    def __init__(self):
        for number in range(90, 190):
            if Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists():
                continue
            self.proc = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if Path(f"/tmp/.X11-unix/X{number}").exists():
                    self.display = f":{number}"
                    return
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
            self.proc.kill()
        raise RuntimeError("no Xvfb display could be started")

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


# Keys as Selenium names them, for the few the smoke path presses.
_KEYS = {"Control": "\ue009", "Shift": "\ue008", "Enter": "\ue007", "Tab": "\ue004", "Space": " ", "ArrowDown": "\ue015",
         "ArrowUp": "\ue013", "Escape": "\ue00c"}


class WebKit(Driver):
    name = "webkit"

    def __init__(self, log_path: Path):
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        self.screen = VirtualScreen()
        options = Options()
        options.binary_location = MINIBROWSER
        options.add_argument("--automation")
        # The driver has no BiDi: the page's console reaches the driver's log through MiniBrowser's stdout.
        options.add_argument("--enable-write-console-messages-to-stdout=true")
        self.log_path = log_path
        self._log = open(log_path, "w")
        service = Service(executable_path=WEBKIT_DRIVER, log_output=self._log, env={**os.environ, "DISPLAY": self.screen.display})
        try:
            self.web = webdriver.WebKitGTK(options=options, service=service)
        except Exception:
            self.screen.close()
            raise
        self.web.set_window_size(1100, 900)
        self.web.set_script_timeout(120)
        self.version = self.web.capabilities.get("browserVersion", "?")
        self._read = 0

    def open(self, url): self.web.get(url)
    def reload(self): self.web.refresh()

    def js(self, body, *args):
        answer = self.web.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            f"(async function () {{ {body} }}).apply(null, Array.prototype.slice.call(arguments, 0, -1))"
            ".then((ok) => done({ok: ok === undefined ? null : ok}), (e) => done({error: String(e && e.stack || e)}));",
            *args)
        if "error" in answer:
            raise RuntimeError(f"webkit js: {answer['error']}")
        return answer["ok"]

    def _element(self, selector):
        from selenium.webdriver.common.by import By

        deadline = time.monotonic() + 30
        while True:
            found = self.web.find_elements(By.CSS_SELECTOR, selector)
            if found:
                self.web.execute_script("arguments[0].scrollIntoView({block: 'center'})", found[0])
                self._settle(found[0])
                return found[0]
            if time.monotonic() > deadline:
                raise AssertionError(f"webkit: no element {selector}")
            time.sleep(0.25)

    def _settle(self, element):
        """Wait until `element` stops moving (firefox_bridge.mjs, settled, says why)."""
        box = None
        for _ in range(20):
            now = self.web.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.x, r.y, r.height]", element)
            if now == box:
                return
            box = now
            time.sleep(0.15)

    def click(self, selector):
        from selenium.common.exceptions import (ElementClickInterceptedException, ElementNotInteractableException,
                                                StaleElementReferenceException)

        # Replaced between the look-up and the click (firefox_bridge.mjs, click), or not yet where it can be clicked
        # (a page laying itself out again under load): look it up again, a few times.
        for attempt in range(3):
            try:
                return self._element(selector).click()
            except (StaleElementReferenceException, ElementNotInteractableException, ElementClickInterceptedException):
                if attempt == 2:
                    raise
                time.sleep(0.3)

    def click_at(self, selector, x, y):
        from selenium.webdriver.common.action_chains import ActionChains

        element = self._element(selector)
        size = element.size
        ActionChains(self.web).move_to_element_with_offset(element, x - size["width"] / 2, y - size["height"] / 2).click().perform()

    def type(self, text):
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(self.web).send_keys(text).perform()

    def key(self, name):
        from selenium.webdriver.common.action_chains import ActionChains

        *held, last = name.split("+")
        chain = ActionChains(self.web)
        for key in held:
            chain.key_down(_KEYS[key])
        chain.send_keys(_KEYS.get(last, last.lower() if len(last) == 1 else last))
        for key in reversed(held):
            chain.key_up(_KEYS[key])
        chain.perform()

    def logs(self):
        self._log.flush()
        text = self.log_path.read_text(errors="replace")
        new, self._read = text[self._read:], len(text)
        return [line for line in new.splitlines() if "CONSOLE" in line or "Error" in line]

    def close(self):
        try:
            self.web.quit()
        finally:
            self._log.close()
            self.screen.close()


class Chromium(Driver):
    """Debian's Chromium through Playwright (tests/support/browser.py's binary and arguments), with the same verbs: for
    what compares the three engines (bench/engines.py). The full suite drives Chromium through Playwright directly.

    A new profile on disk, as a new reader's browser has, not Playwright's usual context, which is incognito: there
    Cache Storage lives in memory, and the live models' kept files (97.7 MB for SmolLM2) counted as the browser's
    memory (the browser process grew by about 100 MB more at the first download than with nothing kept)."""

    name = "chromium"

    def __init__(self):
        import tempfile

        from playwright.sync_api import sync_playwright

        from browser import CHROMIUM_ARGS, chromium_path

        self._playwright = sync_playwright().start()
        self._profile = tempfile.mkdtemp(prefix="chromium-profile-")
        self.context = self._playwright.chromium.launch_persistent_context(
            self._profile, executable_path=chromium_path(), args=CHROMIUM_ARGS, viewport={"width": 1100, "height": 900})
        self.page = self.context.pages[0] if self.context.pages else self.context.new_page()
        session = self.context.new_cdp_session(self.page)
        self.version = session.send("Browser.getVersion")["product"]
        session.detach()
        self._logged = []
        self.page.on("console", lambda m: self._logged.append(f"console.{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self._logged.append(f"pageerror: {e}"))

    def open(self, url): self.page.goto(url)
    def reload(self): self.page.reload()

    def js(self, body, *args):
        # evaluated as devtools do (the page's CSP has no 'unsafe-eval'), like the other two drivers
        session = self.page.context.new_cdp_session(self.page)
        try:
            expression = f"(async function () {{ {body} }}).apply(null, {json.dumps(list(args))})"
            answer = session.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True})
        finally:
            session.detach()
        if "exceptionDetails" in answer:
            raise RuntimeError(f"chromium js: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def click(self, selector): self.page.locator(selector).first.click()

    def click_at(self, selector, x, y): self.page.locator(selector).first.click(position={"x": x, "y": y})
    def type(self, text): self.page.keyboard.type(text)
    def key(self, name): self.page.keyboard.press(name.replace("Control+a", "Control+A"))

    def logs(self):
        new, self._logged = self._logged, []
        return new

    def close(self):
        self.context.close()
        self._playwright.stop()
        shutil.rmtree(self._profile, ignore_errors=True)


def start(engine: str, log_path: Path) -> Driver:
    return {"firefox": Firefox, "chromium": Chromium}.get(engine, lambda: WebKit(log_path))()
