// Starting `premortem serve` as a language client.
import * as vscode from 'vscode';
import {
  DocumentSelector,
  ExecuteCommandRequest,
  Executable,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import { ResolvedBinary } from './binary';
import { executionSummaryMiddleware } from './executionSummary';
import { SECTION, serverExtraArgs, serverSettings } from './settings';

/**
 * DOCUMENT_SELECTOR matches Python cells of any notebook (both forms, since hover and code
 * actions are requested per cell document) and Python files on disk: the server ignores .py
 * files without "# %%" markers, so plain scripts cost nothing.
 */
export const DOCUMENT_SELECTOR: DocumentSelector = [
  { notebook: '*', language: 'python' },
  { scheme: 'vscode-notebook-cell', language: 'python' },
  { scheme: 'file', language: 'python' },
];

/**
 * SERVER_COMMAND_PREFIX namespaces the server's workspace/executeCommand commands: the
 * extension's own commands are premortem.attachKernel and friends, and vscode-languageclient
 * registers every server command as a VS Code command, so the two must not share names.
 */
export const SERVER_COMMAND_PREFIX = 'premortem.server.';

/** createClient builds (does not start) the language client for the given binary. */
export function createClient(bin: ResolvedBinary, output: vscode.OutputChannel, ownCommands: ReadonlySet<string>): LanguageClient {
  // No transport field: with TransportKind.stdio the client would append its own --stdio.
  const exe: Executable = {
    command: bin.path,
    args: ['serve', '--stdio', ...serverExtraArgs()],
    options: { env: { ...process.env } },
  };
  const serverOptions: ServerOptions = { run: exe, debug: exe };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: serverSettings(),
    synchronize: { configurationSection: SECTION },
    diagnosticCollectionName: 'premortem',
    outputChannel: output,
    traceOutputChannel: output,
    markdown: { isTrusted: false, supportHtml: false },
    middleware: { notebooks: executionSummaryMiddleware },
  };
  const client = new LanguageClient('premortem', 'premortem', serverOptions, clientOptions);
  guardCommandNames(client, ownCommands);
  return client;
}

/**
 * guardCommandNames keeps a server that advertises a command under one of the extension's own
 * ids (e.g. premortem.attachKernel) from failing the client's start with "command already
 * exists": such commands are left out of the VS Code registration (the extension still sends
 * them with executeServerCommand).
 */
function guardCommandNames(client: LanguageClient, ownCommands: ReadonlySet<string>): void {
  const feature = client.getFeature(ExecuteCommandRequest.method) as unknown as {
    register(data: { id: string; registerOptions: { commands?: string[] } }): void;
  };
  const register = feature.register.bind(feature);
  feature.register = (data) => {
    const commands = data.registerOptions.commands?.filter((c) => !ownCommands.has(c));
    register({ ...data, registerOptions: { ...data.registerOptions, commands } });
  };
}

/** serverCommands lists the commands the running server advertised. */
export function serverCommands(client: LanguageClient): string[] {
  return client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
}

/**
 * executeServerCommand sends workspace/executeCommand for premortem.server.NAME, or for
 * premortem.NAME when that is what the server advertises. It throws a readable error when the
 * server has neither.
 */
export async function executeServerCommand(client: LanguageClient, name: string, args: unknown[]): Promise<unknown> {
  const advertised = serverCommands(client);
  const candidates = [SERVER_COMMAND_PREFIX + name, 'premortem.' + name];
  const command = candidates.find((c) => advertised.includes(c));
  if (!command) {
    throw new UnsupportedCommandError(name, advertised);
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
}

/** UnsupportedCommandError says the server does not offer a command. */
export class UnsupportedCommandError extends Error {
  constructor(readonly command: string, advertised: string[]) {
    super(
      `this premortem server has no "${command}" command (it offers: ${advertised.join(', ') || 'none'}); ` +
        'update premortem.',
    );
  }
}
