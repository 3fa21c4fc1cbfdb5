/** Status bar wording and activation rules. */
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";

import { declaresRewardkit, isCheckedDocument } from "../src/common/activation";
import { presentStatus } from "../src/common/status";

describe("presentStatus", () => {
  it("shows a check when running and puts the interpreter in the tooltip", () => {
    const status = presentStatus("running", "Interpreter: /v/python (python3 found on PATH)");
    assert.equal(status.text, "$(check) rewardkit");
    assert.equal(status.isError, false);
    assert.deepEqual(status.tooltip.split("\n"), [
      "rewardkit: language server running",
      "Interpreter: /v/python (python3 found on PATH)",
      "Click to show the rewardkit output.",
    ]);
  });

  it("marks only the error state as an error", () => {
    assert.equal(presentStatus("error").isError, true);
    for (const state of ["inactive", "starting", "running", "stopped", "disabled"] as const) {
      assert.equal(presentStatus(state).isError, false, state);
    }
    assert.match(presentStatus("disabled").tooltip, /rewardkit\.enable/);
  });
});

describe("declaresRewardkit", () => {
  it("finds [tool.rewardkit] and its sub-tables", () => {
    assert.equal(declaresRewardkit('[project]\nname = "x"\n\n[tool.rewardkit]\ntask_fields = ["answer"]\n'), true);
    assert.equal(declaresRewardkit("[tool.rewardkit.rules]\nRK101 = 'off'\n"), true);
    assert.equal(declaresRewardkit('  [ tool . "rewardkit" ]\n'), true);
  });

  it("ignores other tools, comments and look-alikes", () => {
    assert.equal(declaresRewardkit("[tool.ruff]\nline-length = 100\n"), false);
    assert.equal(declaresRewardkit("# [tool.rewardkit]\n"), false);
    assert.equal(declaresRewardkit("[tool.rewardkitten]\n"), false);
    assert.equal(declaresRewardkit('x = "[tool.rewardkit]"\n'), false);
  });
});

describe("isCheckedDocument", () => {
  it("checks Python files on disk and untitled Python buffers only", () => {
    assert.equal(isCheckedDocument("python", "file"), true);
    assert.equal(isCheckedDocument("python", "untitled"), true);
    assert.equal(isCheckedDocument("python", "git"), false);
    assert.equal(isCheckedDocument("toml", "file"), false);
  });
});
