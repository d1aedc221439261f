import { describe, expect, it } from "vitest"
import { ShutdownBudget } from "../../../src/internal/transport/shutdownBudget.js"

describe("ShutdownBudget", () => {
  it("while the process runs, each phase has its whole grace", () => {
    const budget = new ShutdownBudget()
    expect(budget.phaseEnd("close", 100, 2000)).toBe(2100)
    expect(budget.phaseEnd("term", 100, 2000)).toBe(2100)
  })

  it("once it is ending, stdin gets 40% of the budget and SIGTERM until 80%, for stops under way too", () => {
    const budget = new ShutdownBudget()
    budget.begin(1000, 1000)
    // A stop that began before the process started ending, and one that begins now.
    expect(budget.phaseEnd("close", 500, 2000)).toBe(1400)
    expect(budget.phaseEnd("close", 1000, 2000)).toBe(1400)
    expect(budget.phaseEnd("term", 1400, 2000)).toBe(1800)
    // A shorter grace still wins.
    expect(budget.phaseEnd("close", 1000, 100)).toBe(1100)
  })

  it("a later call only ever shortens it", () => {
    const budget = new ShutdownBudget()
    budget.begin(1000, 1000)
    budget.begin(1100, 5000)
    expect(budget.phaseEnd("term", 1000, 9000)).toBe(1800)
    budget.begin(1100, 500)
    expect(budget.phaseEnd("close", 1000, 9000)).toBe(1300)
    expect(budget.phaseEnd("term", 1000, 9000)).toBe(1500)
  })
})
