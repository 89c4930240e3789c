"""The engine tests' drivers: Firefox (puppeteer-core over WebDriver BiDi) and WebKitGTK (Selenium)."""
