/**
 * The shutdown budget: once the process is ending (`Stdio.beginShutdown`), each stop of a
 * stdio server, whether under way or still to come, ends its phases early enough for the
 * whole fleet to be gone within the budget: servers get stdin closed for the first 40% of
 * it, SIGTERM until 80%, then SIGKILL. Stops run in parallel (each server is its own fiber),
 * so the budget holds for the fleet as for one server.
 *
 * The process ends once for all its fleets, so this state is process-wide, and it only
 * ever tightens.
 *
 * @internal
 */

/** A stop's phases: waiting after stdin was closed, then after SIGTERM. */
export type Phase = "close" | "term"

/** The share of the budget by whose end each phase is over. */
const SHARE: Record<Phase, number> = { close: 0.4, term: 0.8 }

/** The deadlines of a process that is ending, in Clock milliseconds. */
export class ShutdownBudget {
  private until: Record<Phase, number> | undefined

  /** The process is ending, at `now`: every tree must be gone by `now + budgetMs`. */
  begin(now: number, budgetMs: number): void {
    const close = now + SHARE.close * budgetMs
    const term = now + SHARE.term * budgetMs
    this.until = this.until === undefined
      ? { close, term }
      : { close: Math.min(close, this.until.close), term: Math.min(term, this.until.term) }
  }

  /** When a phase that began at `start` with a grace of `graceMs` must end. */
  phaseEnd(phase: Phase, start: number, graceMs: number): number {
    return this.until === undefined ? start + graceMs : Math.min(start + graceMs, this.until[phase])
  }
}

/** This process's budget. */
export const processShutdown = new ShutdownBudget()
