/** Launch logic: the server command line, probing real interpreters, the install fix, crash policy. */
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";

import {
  CrashPolicy,
  describeProbeFailure,
  describeServerFailure,
  installCommand,
  parseProbeOutcome,
  probeInterpreter,
  quoteShellArgument,
  serverCommandLine,
} from "../src/common/launch";
import { fakeInterpreter, requireRewardkitPython } from "./support";

describe("serverCommandLine", () => {
  it("runs the module with the interpreter's own arguments first and the user's args last", () => {
    assert.deepEqual(serverCommandLine(["/venv/bin/python", "-X", "utf8"], ["--log-level", "DEBUG"]), {
      command: "/venv/bin/python",
      args: ["-X", "utf8", "-m", "rewardkit_lsp", "--log-level", "DEBUG"],
    });
  });

  it("refuses an empty interpreter command", () => {
    assert.throws(() => serverCommandLine([], []), /interpreter command is empty/);
  });

  it("starts the real server module: `python -m rewardkit_lsp --version` answers", async (t) => {
    const python = requireRewardkitPython(t);
    if (python === undefined) {
      return;
    }
    const line = serverCommandLine([python], ["--version"]);
    const output = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(line.command, line.args, { stdio: ["ignore", "pipe", "inherit"] });
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout }));
    });
    assert.equal(output.code, 0);
    assert.match(output.stdout, /^rewardkit-lsp \d+\.\d+/);
  });
});

describe("probeInterpreter (real processes)", () => {
  it("finds rewardkit's language server in the project's environment", async (t) => {
    const python = requireRewardkitPython(t);
    if (python === undefined) {
      return;
    }
    const result = await probeInterpreter([python]);
    assert.equal(result.kind, "ready", JSON.stringify(result));
    assert.match(result.kind === "ready" ? result.version : "", /^3\.\d+\.\d+$/);
  });

  it("reports rewardkit missing from an interpreter without it, and offers the install", async (t) => {
    const python = requireRewardkitPython(t);
    if (python === undefined) {
      return;
    }
    // -I -S: isolated mode without site-packages, so the same Python has no rewardkit.
    const result = await probeInterpreter([python, "-I", "-S"]);
    assert.equal(result.kind, "missing-modules", JSON.stringify(result));
    if (result.kind !== "missing-modules") {
      return;
    }
    assert.ok(result.modules.includes("rewardkit") && result.modules.includes("rewardkit_lsp"));
    const problem = describeProbeFailure(result, [python, "-I", "-S"]);
    assert.equal(problem.offerInstall, true);
    assert.ok(problem.message.includes(`rewardkit is not installed in ${result.executable}`), problem.message);
    assert.ok(problem.message.endsWith(`${python} -I -S -m pip install "rewardkit[lsp]"`), problem.message);
  });

  it("says the interpreter does not exist", async () => {
    const result = await probeInterpreter(["/nonexistent/bin/python3"]);
    assert.equal(result.kind, "interpreter-not-found");
    const problem = describeProbeFailure(result, ["/nonexistent/bin/python3"]);
    assert.equal(problem.offerInstall, false);
    assert.match(problem.message, /the Python interpreter \/nonexistent\/bin\/python3 was not found/);
  });

  it("rejects a Python older than 3.10", async () => {
    const python = fakeInterpreter(
      `echo 'rewardkit-probe:{"version": [3, 8, 18], "executable": "/old/python3.8", "modules": {"rewardkit": true, "rewardkit_lsp": true, "pygls": true, "lsprotocol": true}}'`,
    );
    const result = await probeInterpreter([python]);
    assert.deepEqual(result, { kind: "python-too-old", version: "3.8.18", executable: "/old/python3.8" });
    assert.match(describeProbeFailure(result as Exclude<typeof result, { kind: "ready" }>, [python]).message, /Python 3\.8\.18; rewardkit needs Python 3\.10 or newer/);
  });

  it("names only the missing extra when rewardkit is there without pygls", async () => {
    const python = fakeInterpreter(
      `echo 'noise from sitecustomize'; echo 'rewardkit-probe:{"version": [3, 11, 7], "executable": "/v/python", "modules": {"rewardkit": true, "rewardkit_lsp": true, "pygls": false, "lsprotocol": false}}'`,
    );
    const result = await probeInterpreter([python]);
    assert.equal(result.kind, "missing-modules");
    const problem = describeProbeFailure(result, ["/v/python"]);
    assert.match(problem.message, /language server is not installed \(missing: pygls, lsprotocol\) in \/v\/python/);
    assert.match(problem.message, /\/v\/python -m pip install "rewardkit\[lsp\]"$/);
  });

  it("reports an interpreter that crashes with its last lines of stderr", async () => {
    const python = fakeInterpreter("echo 'Fatal Python error: init_fs_encoding' >&2; exit 1");
    const result = await probeInterpreter([python]);
    assert.equal(result.kind, "probe-failed");
    assert.match(result.kind === "probe-failed" ? result.detail : "", /exit code 1: Fatal Python error: init_fs_encoding/);
  });
});

describe("parseProbeOutcome", () => {
  it("rejects output that is not the probe's report", () => {
    assert.equal(parseProbeOutcome({ code: 0, stdout: "rewardkit-probe:{not json", stderr: "" }).kind, "probe-failed");
    assert.equal(parseProbeOutcome({ code: 0, stdout: 'rewardkit-probe:{"version": "3"}', stderr: "" }).kind, "probe-failed");
    assert.equal(parseProbeOutcome({ code: 0, stdout: "", stderr: "" }).kind, "probe-failed");
  });

  it("treats a spawn failure other than not-found as a probe failure", () => {
    const result = parseProbeOutcome({ code: null, stdout: "", stderr: "", spawnError: { code: "E2BIG", message: "spawn E2BIG" } });
    assert.deepEqual(result, { kind: "probe-failed", detail: "spawn E2BIG" });
  });
});

describe("installCommand", () => {
  it("is the exact pip command for the interpreter", () => {
    assert.equal(installCommand(["/home/me/.venv/bin/python"], "linux"), '/home/me/.venv/bin/python -m pip install "rewardkit[lsp]"');
  });

  it("quotes interpreter paths with spaces for the user's shell", () => {
    assert.equal(installCommand(["/Users/me/My Envs/bin/python"], "darwin"), `'/Users/me/My Envs/bin/python' -m pip install "rewardkit[lsp]"`);
    assert.equal(installCommand(["C:\\Program Files\\Python312\\python.exe"], "win32"), '"C:\\Program Files\\Python312\\python.exe" -m pip install "rewardkit[lsp]"');
    assert.equal(quoteShellArgument("it's", "linux"), `'it'\\''s'`);
  });

  it("appears in the message for a server that fails after starting", () => {
    const problem = describeServerFailure(["/v/python"], "Connection to server got closed");
    assert.equal(problem.offerInstall, true);
    assert.match(problem.message, /failed \(Connection to server got closed\).*\/v\/python -m pip install "rewardkit\[lsp\]"$/);
  });
});

describe("CrashPolicy", () => {
  it("restarts twice, then gives up on the third crash within the window", () => {
    const policy = new CrashPolicy(3, 1000);
    assert.deepEqual([policy.shouldRestart(0), policy.shouldRestart(10), policy.shouldRestart(20)], [true, true, false]);
  });

  it("forgets crashes older than the window and after reset", () => {
    const policy = new CrashPolicy(2, 1000);
    assert.equal(policy.shouldRestart(0), true);
    assert.equal(policy.shouldRestart(5000), true);
    policy.reset();
    assert.equal(policy.shouldRestart(5001), true);
    assert.equal(policy.shouldRestart(5002), false);
  });
});
