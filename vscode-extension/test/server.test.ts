/**
 * The launch as the extension does it, against the real server: `python -m rewardkit_lsp`
 * over stdio, the extension's initializationOptions and its filtered workspace/configuration
 * answers; a misspelled parameter comes back as RK102.
 */
import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import {
  ConfigurationRequest,
  createProtocolConnection,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type PublishDiagnosticsParams,
} from "vscode-languageserver-protocol/node";

import { serverCommandLine } from "../src/common/launch";
import { filterServerSection, readSettings, serverSettings } from "../src/common/settings";
import { requireRewardkitPython } from "./support";

const BAD_MODULE = [
  "from rewardkit import reward",
  "",
  "",
  "@reward(name='exact_match')",
  "def exact_match(final_respone: str, answer: str) -> float:",
  "    return float(final_respone.strip() == answer.strip())",
  "",
].join("\n");

describe("the extension's launch of the real language server", () => {
  it("initialises with the extension's settings and publishes RK102 for a misspelled field", async (t) => {
    const python = requireRewardkitPython(t);
    if (python === undefined) {
      return;
    }
    // What the editor would hold: the extension's own keys and the server's, mixed.
    const editorSection = { enable: true, interpreter: [python], args: [], taskFields: ["answer"], debounceMs: 0, trace: { server: "off" } };
    const { settings } = readSettings((key) => (key === "trace.server" ? "off" : (editorSection as Record<string, unknown>)[key]));
    const line = serverCommandLine(settings.interpreter, settings.args);
    const child = spawn(line.command, line.args, { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // Any wait below also ends, with the server's stderr, if the server exits or stalls.
    let timer: NodeJS.Timeout | undefined;
    const failure = new Promise<never>((_, reject) => {
      child.on("close", (code) => reject(new Error(`the server exited with ${String(code)}; stderr:\n${stderr}`)));
      timer = setTimeout(() => reject(new Error(`no answer within 30 s; server stderr:\n${stderr}`)), 30_000);
    });
    failure.catch(() => undefined);
    const within = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, failure]);
    const connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const configurationAnswers: unknown[] = [];
    connection.onRequest(ConfigurationRequest.type, (params) =>
      params.items.map((item) => {
        const answer = item.section === "rewardkit" ? filterServerSection(editorSection) : null;
        configurationAnswers.push(answer);
        return answer;
      }),
    );
    const uri = "file:///tmp/rewardkit-extension-test/rewards.py";
    const published = new Promise<PublishDiagnosticsParams>((resolve) => {
      connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
        if (params.uri === uri && params.diagnostics.length > 0) {
          resolve(params);
        }
      });
    });
    connection.listen();
    try {
      const result = await within(connection.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: null,
        workspaceFolders: null,
        capabilities: { workspace: { configuration: true } },
        initializationOptions: serverSettings(settings),
      }));
      assert.ok(result.capabilities.textDocumentSync !== undefined, "the server declares document sync");
      await connection.sendNotification(InitializedNotification.type, {});
      await connection.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "python", version: 1, text: BAD_MODULE },
      });
      const params = await within(published);
      const rk102 = params.diagnostics.find((diagnostic) => diagnostic.code === "RK102");
      assert.ok(rk102, `RK102 among ${JSON.stringify(params.diagnostics)}`);
      assert.equal(rk102.range.start.line, 4);
      assert.match(rk102.message, /final_respone/);
      assert.match(rk102.message, /final_response/);
      for (const answer of configurationAnswers) {
        assert.deepEqual(Object.keys(answer as object).sort(), ["debounceMs", "enable", "taskFields"]);
      }
      assert.doesNotMatch(stderr, /unknown setting/);
      await within(connection.sendRequest(ShutdownRequest.type));
      await connection.sendNotification(ExitNotification.type);
    } finally {
      clearTimeout(timer);
      connection.dispose();
      child.kill();
    }
  });
});
