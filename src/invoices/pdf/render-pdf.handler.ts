import { defineJobHandler } from '../../queue/job.ts';
import { PDF_TABS, renderInvoicePdfJob } from './render-pdf.job.ts';
import { renderInvoicePdf } from './render.ts';
import { sharedBrowser } from './shared-browser.ts';

export const renderInvoicePdfHandler = defineJobHandler(renderInvoicePdfJob, {
  async run(deps, payload) {
    const browser = await sharedBrowser({
      executablePath: deps.config.PUPPETEER_EXECUTABLE_PATH,
      maxPages: PDF_TABS,
      logger: deps.logger,
    });
    const started = performance.now();
    const outcome = await renderInvoicePdf(deps, browser, payload);
    deps.logger.info({ ...payload, ...outcome, ms: Math.round(performance.now() - started) }, 'invoice pdf job done');
    return outcome;
  },
});
