/**
 * The emails worker's loop (M-2): claims due emails (a lease each, rows other workers hold skipped), delivers them
 * side by side, and claims again; when nothing is due it polls. A worker killed mid-batch leaves its claimed rows
 * leased: they are due again when the lease ends, so nothing is lost, and only what was in flight is sent again,
 * with the Message-ID it had.
 */
import type { AppDeps } from '../app-deps.ts';
import type { Background } from '../queue/job.ts';
import { deliverEmail } from './deliver.ts';
import { claimDueEmails } from '../emails/service.ts';
import { closeSmtpTransports, SMTP_CONNECTIONS } from './transport.ts';

export interface EmailDispatchLimits {
  /** Emails claimed at once and delivered side by side (the pooled SMTP connections each take several). */
  batch: number;
  /** The idle poll. */
  pollMs: number;
}

export const EMAIL_DISPATCH_LIMITS: EmailDispatchLimits = { batch: 8 * SMTP_CONNECTIONS, pollMs: 250 };

export class EmailDispatcher {
  readonly #deps: AppDeps;
  readonly #limits: EmailDispatchLimits;
  #stopped = false;
  #running: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(deps: AppDeps, limits: EmailDispatchLimits = EMAIL_DISPATCH_LIMITS) {
    this.#deps = deps;
    this.#limits = limits;
  }

  start(): this {
    this.#running = this.#loop();
    return this;
  }

  /** Claims at once rather than at the next poll. */
  wake(): void {
    this.#wake?.();
  }

  /** Stops claiming and lets the batch in flight finish and be recorded. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
    await this.#running;
    closeSmtpTransports();
  }

  async #loop(): Promise<void> {
    const leaseMs = this.#deps.config.EMAIL_LEASE_SECONDS * 1000;
    while (!this.#stopped) {
      let claimed = 0;
      try {
        const emails = await claimDueEmails(this.#deps.db, this.#limits.batch, leaseMs);
        claimed = emails.length;
        await Promise.all(
          emails.map((email) =>
            deliverEmail(this.#deps, email).catch((err) =>
              this.#deps.logger.error({ err, emailId: email.id }, 'recording an email attempt failed'),
            ),
          ),
        );
      } catch (err) {
        this.#deps.logger.error({ err }, 'claiming emails failed');
      }
      if (claimed < this.#limits.batch && !this.#stopped) await this.#idle();
    }
  }

  #idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.#limits.pollMs);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#wake = undefined;
        resolve();
      }
      this.#wake = done;
    });
  }
}

let current: EmailDispatcher | undefined;

export function startEmailDispatcher(deps: AppDeps): Background {
  const dispatcher = new EmailDispatcher(deps).start();
  current = dispatcher;
  return {
    stop: async () => {
      if (current === dispatcher) current = undefined;
      await dispatcher.stop();
    },
  };
}

export function wakeEmailDispatcher(): void {
  current?.wake();
}
