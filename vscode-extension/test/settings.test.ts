/** Reading, validating and expanding the rewardkit.* settings; what a change restarts. */
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";

import { changeNeedsRestart, DEFAULT_SETTINGS, filterServerSection, readSettings, resolveVariables, serverSettings } from "../src/common/settings";

const lookupFrom =
  (values: Record<string, unknown>) =>
  (key: string): unknown =>
    values[key];

describe("readSettings", () => {
  it("applies defaults when nothing is set", () => {
    const { settings, problems } = readSettings(lookupFrom({}));
    assert.deepEqual(settings, DEFAULT_SETTINGS);
    assert.deepEqual(problems, []);
  });

  it("reads every setting", () => {
    const { settings, problems } = readSettings(
      lookupFrom({
        enable: false,
        interpreter: ["/venv/bin/python", "-X", "utf8"],
        args: ["--log-level", "DEBUG"],
        taskFields: ["answer", "question"],
        debounceMs: 0,
        "trace.server": "verbose",
      }),
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      enable: false,
      interpreter: ["/venv/bin/python", "-X", "utf8"],
      args: ["--log-level", "DEBUG"],
      taskFields: ["answer", "question"],
      debounceMs: 0,
      traceServer: "verbose",
    });
  });

  it("accepts a single string for the interpreter and drops blank entries", () => {
    assert.deepEqual(readSettings(lookupFrom({ interpreter: "/usr/bin/python3.12" })).settings.interpreter, ["/usr/bin/python3.12"]);
    assert.deepEqual(readSettings(lookupFrom({ interpreter: ["", " "] })).settings.interpreter, []);
  });

  it("reports each bad value by its setting name and keeps the default", () => {
    const { settings, problems } = readSettings(
      lookupFrom({ enable: "yes", interpreter: [1], debounceMs: -5, "trace.server": "loud", taskFields: { answer: 1 } }),
    );
    assert.deepEqual(settings, DEFAULT_SETTINGS);
    assert.deepEqual(
      problems.map((problem) => problem.key),
      ["enable", "interpreter", "taskFields", "debounceMs", "trace.server"],
    );
    assert.match(problems[0].message, /^setting rewardkit\.enable: expected true or false, got "yes"$/);
    assert.match(problems[3].message, /rewardkit\.debounceMs: expected a number >= 0, got -5/);
  });
});

describe("server settings", () => {
  it("sends only what the server understands as initializationOptions", () => {
    const { settings } = readSettings(lookupFrom({ interpreter: ["/p"], taskFields: ["answer"], debounceMs: 50 }));
    assert.deepEqual(serverSettings(settings), { enable: true, taskFields: ["answer"], debounceMs: 50 });
  });

  it("filters a workspace/configuration answer down to the server's keys", () => {
    const section = { enable: true, interpreter: ["/p"], args: [], taskFields: ["a"], debounceMs: 10, trace: { server: "off" } };
    assert.deepEqual(filterServerSection(section), { enable: true, taskFields: ["a"], debounceMs: 10 });
    assert.equal(filterServerSection(null), null);
    assert.equal(filterServerSection(["not", "an", "object"]), null);
  });
});

describe("resolveVariables", () => {
  const vars = { workspaceFolder: "/ws", userHome: "/home/me", env: { VENV: "/venvs/rk" } };

  it("expands workspaceFolder, userHome, env and a leading ~", () => {
    assert.deepEqual(resolveVariables(["${workspaceFolder}/.venv/bin/python", "${userHome}/x", "${env:VENV}/bin/python", "~/py", "a~b"], vars), [
      "/ws/.venv/bin/python",
      "/home/me/x",
      "/venvs/rk/bin/python",
      "/home/me/py",
      "a~b",
    ]);
  });

  it("leaves unknown variables and a missing workspace folder as written", () => {
    assert.deepEqual(resolveVariables(["${cwd}/x", "${workspaceFolder}"], { userHome: "/h", env: {} }), ["${cwd}/x", "${workspaceFolder}"]);
    assert.deepEqual(resolveVariables(["${env:UNSET}/bin"], vars), ["/bin"]);
  });
});

describe("changeNeedsRestart", () => {
  const affecting =
    (...keys: string[]) =>
    (section: string): boolean =>
      keys.some((key) => key === section || key.startsWith(section + "."));

  it("restarts for the interpreter, args, enable, task fields and debounce", () => {
    for (const key of ["rewardkit.interpreter", "rewardkit.args", "rewardkit.enable", "rewardkit.taskFields", "rewardkit.debounceMs"]) {
      assert.equal(changeNeedsRestart(affecting(key)), true, key);
    }
  });

  it("does not restart for the trace level or other extensions' settings", () => {
    assert.equal(changeNeedsRestart(affecting("rewardkit.trace.server")), false);
    assert.equal(changeNeedsRestart(affecting("python.defaultInterpreterPath")), false);
  });
});
