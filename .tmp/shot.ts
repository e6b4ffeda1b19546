import { launchChromium, newPage } from '../test/helpers/browser.ts';
const [url, out, width, clickText] = process.argv.slice(2);
const browser = await launchChromium();
const { page } = await newPage(browser, Number(width ?? 1280));
const errors: string[] = [];
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
page.on('pageerror', (e) => errors.push(String(e)));
await page.goto(url!, { waitUntil: 'networkidle0' });
if (clickText) {
  const handle = await page.waitForSelector(`#operations-Invoices-post_api_billing_invoices`, { timeout: 5000 }).catch(() => null);
  if (handle) { await handle.click(); await new Promise((r) => setTimeout(r, 800)); await handle.scrollIntoView(); }
}
await page.screenshot({ path: out as `${string}.png`, fullPage: false });
console.log('errors:', errors);
await browser.close();
