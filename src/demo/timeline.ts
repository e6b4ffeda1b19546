/**
 * Time travel for the demo: actions dated in the past, run in date order through the services with that
 * date as their clock, between lifecycle sweeps as of later dates. Running them in order keeps what the
 * book says consistent: an invoice is paid after it was issued, a sweep marks overdue only what was
 * unpaid at its date, and the yearly invoice numbers follow the calendar.
 */
export const DAY_MS = 86_400_000;

export const addDays = (date: Date, days: number) => new Date(date.getTime() + days * DAY_MS);

interface Scheduled {
  at: Date;
  order: number;
  label: string;
  run: (at: Date) => Promise<void>;
}

/**
 * Dates what a step stamped with the real clock (backdate.ts): `mark` before the step, `move` after it to the
 * step's date.
 */
export interface StepDating {
  mark(): Promise<Date>;
  move(since: Date, at: Date): Promise<void>;
}

export class Timeline {
  private pending: Scheduled[] = [];
  private counter = 0;

  /** `afterEach` runs after every action (the collections look for invoices the action issued). */
  constructor(
    private readonly afterEach: (at: Date) => Promise<void> = async () => {},
    private readonly dating?: StepDating,
  ) {}

  /** Schedules `run` at `at`; actions on the same instant run in the order they were added. */
  add(at: Date, label: string, run: (at: Date) => Promise<void>): void {
    this.pending.push({ at, order: this.counter++, label, run });
  }

  /** Runs every action due by `until`, earliest first, including those the actions schedule meanwhile. */
  async runThrough(until: Date): Promise<void> {
    for (;;) {
      const due = this.pending.filter((s) => s.at.getTime() <= until.getTime());
      if (due.length === 0) return;
      const next = due.reduce((a, b) =>
        a.at.getTime() < b.at.getTime() || (a.at.getTime() === b.at.getTime() && a.order < b.order) ? a : b,
      );
      this.pending.splice(this.pending.indexOf(next), 1);
      const since = await this.dating?.mark();
      try {
        await next.run(next.at);
      } catch (error) {
        throw new Error(
          `demo step "${next.label}" at ${next.at.toISOString()} failed: ` +
            `${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      await this.afterEach(next.at);
      if (since) await this.dating!.move(since, next.at);
    }
  }

  /** Actions dated after the last `runThrough`: they have not happened yet. */
  get left(): number {
    return this.pending.length;
  }
}
