/**
 * The emails worker's loop (M-2): claims due emails (a lease each, rows other workers hold skipped), delivers them
 * side by side, and claims again; when nothing is due it polls. A worker killed mid-batch leaves its claimed rows
 * leased: they are due again when the lease ends, so nothing is lost, and only what was in flight is sent again,
 * with the Message-ID it had.
 */
import type { AppDeps } from '../app-deps.ts';
import type { Background } from '../queue/job.ts';
import { type ComposeContext, composeContext } from './compose.ts';
import type { EmailRow } from '../emails/repo.ts';
import { deliverEmail } from './deliver.ts';
import { claimDueEmails } from '../emails/service.ts';
import { closeSmtpTransports, SMTP_CONNECTIONS } from './transport.ts';

export interface EmailDispatchLimits {
  /** Emails in flight at once, delivered side by side (the pooled SMTP connections each take several). */
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
  #wokenMeanwhile = false;

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
    this.#signal();
  }

  #signal(): void {
    if (this.#wake) this.#wake();
    else this.#wokenMeanwhile = true;
  }

  /** Stops claiming and lets the batch in flight finish and be recorded. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#signal();
    await this.#running;
    closeSmtpTransports();
  }

  /**
   * Claims as many as there is room for once half the slots are free, so the SMTP connections never wait for a whole
   * batch's slowest send; a finished send wakes the loop, and so does the poll when nothing is in flight.
   */
  async #loop(): Promise<void> {
    const leaseMs = this.#deps.config.EMAIL_LEASE_SECONDS * 1000;
    const inFlight = new Set<Promise<void>>();
    while (!this.#stopped) {
      const room = this.#limits.batch - inFlight.size;
      if (room >= this.#limits.batch / 2) {
        try {
          const claimed = await claimDueEmails(this.#deps.db, room, leaseMs);
          // Read once for the claim; should it fail, the claimed rows are due again when their lease ends.
          if (claimed.length > 0) this.#deliver(claimed, await composeContext(this.#deps, claimed), inFlight);
        } catch (err) {
          this.#deps.logger.error({ err }, 'claiming emails failed');
        }
      }
      if (!this.#stopped) await this.#idle();
    }
    await Promise.all(inFlight);
  }

  /** Starts delivering each claimed email; each one's end frees its slot and wakes the loop. */
  #deliver(claimed: EmailRow[], context: ComposeContext, inFlight: Set<Promise<void>>): void {
    for (const email of claimed) {
      const sending: Promise<void> = deliverEmail(this.#deps, email, context)
        .then(() => undefined)
        .catch((err) => this.#deps.logger.error({ err, emailId: email.id }, 'recording an email attempt failed'))
        .finally(() => {
          inFlight.delete(sending);
          this.#signal();
        });
      inFlight.add(sending);
    }
  }

  /** Waits for a wake (or the poll); a wake that came while the loop was busy ends the wait at once. */
  #idle(): Promise<void> {
    if (this.#wokenMeanwhile) {
      this.#wokenMeanwhile = false;
      return Promise.resolve();
    }
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
