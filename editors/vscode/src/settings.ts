// Settings the server reads, gathered from the "premortem" configuration section.
import * as vscode from 'vscode';

/** SECTION is the configuration section the server's settings live under. */
export const SECTION = 'premortem';

/**
 * Keys only the extension uses (how to start the server, tracing); they are not sent to the
 * server because it would ignore them anyway, and leaving them out keeps the log readable.
 */
const CLIENT_ONLY = new Set(['server', 'trace']);

/**
 * serverSettings returns the nested settings object the server accepts as
 * initializationOptions, e.g. {static: {enabled: true}, shadow: {mode: 'safe', timeout: 3000}}.
 * The same object (wrapped as {settings: {premortem: ...}}) goes out on every change through
 * synchronize.configurationSection.
 */
export function serverSettings(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  // JSON round trip: a WorkspaceConfiguration carries functions (get, has, ...) next to the
  // values; only the values go on the wire.
  const all = JSON.parse(JSON.stringify(cfg)) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(all)) {
    if (!CLIENT_ONLY.has(k)) {
      out[k] = v;
    }
  }
  return out;
}

/** serverPathSetting is premortem.server.path with ~ and ${workspaceFolder} expanded. */
export function serverPathSetting(): string {
  const raw = vscode.workspace.getConfiguration(SECTION).get<string>('server.path', '').trim();
  if (!raw) {
    return '';
  }
  let p = raw;
  if (p.startsWith('~/')) {
    p = (process.env.HOME ?? '') + p.slice(1);
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  return p.replace(/\$\{workspaceFolder\}/g, folder);
}

/** serverExtraArgs is premortem.server.extraArgs. */
export function serverExtraArgs(): string[] {
  return vscode.workspace.getConfiguration(SECTION).get<string[]>('server.extraArgs', []);
}
