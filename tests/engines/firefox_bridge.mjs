// Firefox for the engine tests (tests/engines/drivers.py): Debian's firefox-esr driven by puppeteer-core
// over WebDriver BiDi (no geckodriver: none can be had here). Python sends one JSON command a line on stdin
// and reads one JSON answer a line on stdout: {ok: value} or {error: message}. One page at a time.
import { createInterface } from "node:readline";
import puppeteer from "puppeteer-core";

const FIREFOX = process.env.FIREFOX_PATH || "/usr/bin/firefox-esr";
// What keeps Firefox from reaching out (this machine's network is closed) and from slowing a test down.
const PREFS = {
  "app.update.enabled": false,
  "browser.safebrowsing.malware.enabled": false,
  "browser.safebrowsing.phishing.enabled": false,
  "network.captive-portal-service.enabled": false,
  "network.connectivity-service.enabled": false,
  "extensions.getAddons.cache.enabled": false,
  "datareporting.policy.dataSubmissionEnabled": false,
  "toolkit.telemetry.enabled": false,
};

let browser = null;
let page = null;
const logged = []; // the page's console lines and uncaught errors, for a failing test to show

async function newPage() {
  page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 900 });
  page.on("console", (message) => logged.push(`console.${message.type()}: ${message.text()}`));
  page.on("pageerror", (error) => logged.push(`pageerror: ${error.message ?? error}`));
}

/** The element's box once it stopped moving (two looks 150 ms apart agree, 3 s at most): what comes near the
 *  screen as it scrolls there (a formula typeset, code coloured, an editor built) can move it. */
async function settled(element) {
  let box = await element.boundingBox();
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const next = await element.boundingBox();
    if (next && box && next.x === box.x && next.y === box.y && next.height === box.height) return next;
    box = next;
  }
  return box;
}

const commands = {
  async launch() {
    browser = await puppeteer.launch({ browser: "firefox", executablePath: FIREFOX, headless: true, extraPrefsFirefox: PREFS });
    await newPage();
    return (await browser.version());
  },
  async open({ url }) {
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: 60_000 });
    return page.url();
  },
  async reload() {
    await page.reload({ waitUntil: "domcontentloaded", timeout: 60_000 });
    return page.url();
  },
  // `body` is a function body that may return a promise; args are JSON. An expression string, evaluated as
  // devtools do, so the page's CSP (no eval) does not apply to it.
  async js({ body, args }) {
    return page.evaluate(`(async function () { ${body} }).apply(null, ${JSON.stringify(args ?? [])})`);
  },
  // An element can be replaced between the look-up and the click (an editor's stand-in becoming CodeMirror in
  // idle time): look it up again, a few times.
  async click({ selector }) {
    for (let attempt = 1; ; attempt++) {
      try {
        const element = await page.waitForSelector(selector, { timeout: 30_000 });
        await element.scrollIntoView();
        await settled(element);
        await element.click();
        return true;
      } catch (err) {
        if (attempt === 3) throw err;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    }
  },
  async clickAt({ selector, x, y }) {
    const element = await page.waitForSelector(selector, { timeout: 30_000 });
    await element.scrollIntoView();
    const box = await settled(element);
    await page.mouse.click(box.x + x, box.y + y);
    return true;
  },
  async type({ text }) {
    await page.keyboard.type(text);
    return true;
  },
  async key({ name }) {
    const keys = name.split("+");
    for (const key of keys.slice(0, -1)) await page.keyboard.down(key);
    await page.keyboard.press(keys.at(-1));
    for (const key of keys.slice(0, -1).reverse()) await page.keyboard.up(key);
    return true;
  },
  async logs() {
    return logged.splice(0);
  },
  async close() {
    await browser?.close();
    browser = null;
    return true;
  },
};

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const { command, ...args } = JSON.parse(line);
  let answer;
  try {
    answer = { ok: (await commands[command](args)) ?? null };
  } catch (err) {
    answer = { error: String(err?.stack ?? err) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
  if (command === "close") break;
}
await browser?.close().catch(() => {});
