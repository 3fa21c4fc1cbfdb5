/** Shared helpers of the unit tests: the repository's Python and throwaway fake interpreters. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { TestContext } from "node:test";

/** The interpreter with rewardkit installed: $REWARDKIT_TEST_PYTHON, else the repository's .venv. */
export function rewardkitPython(): string | undefined {
  const configured = process.env.REWARDKIT_TEST_PYTHON;
  if (configured) {
    return configured;
  }
  const venv = path.resolve(__dirname, "..", "..", "..", ".venv", "bin", "python");
  return fs.existsSync(venv) ? venv : undefined;
}

/**
 * The rewardkit interpreter, or skip the test with a reason; under CI=true a missing
 * interpreter fails the test instead, so nothing is skipped silently there.
 */
export function requireRewardkitPython(t: TestContext): string | undefined {
  const python = rewardkitPython();
  if (python === undefined) {
    const reason = "no Python with rewardkit: set REWARDKIT_TEST_PYTHON or create the repository's .venv";
    if (process.env.CI === "true") {
      throw new Error(reason);
    }
    t.skip(reason);
  }
  return python;
}

/** An executable shell script in a fresh temp dir that stands in for an interpreter. */
export function fakeInterpreter(body: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rewardkit-fake-python-"));
  const file = path.join(dir, "python");
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}
