// Chromium comes from @sparticuz/chromium (or PUPPETEER_EXECUTABLE_PATH); never download a browser at install.
module.exports = { skipDownload: true };
