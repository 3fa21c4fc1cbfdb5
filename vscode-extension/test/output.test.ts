/** Joining the server's stderr chunks into lines and finding the error to quote. */
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";

import { LineBuffer } from "../src/common/output";

describe("LineBuffer", () => {
  it("joins chunks split anywhere into whole lines", () => {
    const buffer = new LineBuffer();
    assert.deepEqual(buffer.push("Trace"), []);
    assert.deepEqual(buffer.push("back (most recent call last):\r\n  File \"x\""), ["Traceback (most recent call last):"]);
    assert.deepEqual(buffer.push(", line 1\n^^^^\n"), ['  File "x", line 1', "^^^^"]);
    assert.deepEqual(buffer.push("tail"), []);
    assert.deepEqual(buffer.flush(), ["tail"]);
    assert.deepEqual(buffer.flush(), []);
  });

  it("quotes the last Python exception line of a traceback", () => {
    const buffer = new LineBuffer();
    buffer.push("Traceback (most recent call last):\n  File \"/x/server.py\", line 26, in <module>\n");
    buffer.push("ModuleNotFoundError: No module named 'rewardkit.checks.engine'\n");
    buffer.push("[Error - 8:14:49 AM] Server initialization failed.\n");
    assert.equal(buffer.lastError(), "ModuleNotFoundError: No module named 'rewardkit.checks.engine'");
  });

  it("falls back to the server's last line, skipping the client's own messages", () => {
    const buffer = new LineBuffer();
    buffer.push("usage: rewardkit lsp [-h]\nrewardkit lsp: error: unrecognized arguments: --bogus\n[Info  - 1:00:00 PM] Connection to server got closed.\n");
    assert.equal(buffer.lastError(), "rewardkit lsp: error: unrecognized arguments: --bogus");
    buffer.clear();
    assert.equal(buffer.lastError(), undefined);
  });

  it("keeps only the most recent lines", () => {
    const buffer = new LineBuffer(2);
    buffer.push("a\nb\nc\n");
    assert.equal(buffer.lastError(), "c");
    buffer.push("KeyError: 'x'\n");
    buffer.push("d\ne\n");
    assert.equal(buffer.lastError(), "e");
  });
});
