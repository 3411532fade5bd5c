// The status bar item: which kernel premortem is attached to and its state.
import * as vscode from 'vscode';

/** STATUS_NOTIFICATION is the server's custom notification carrying KernelStatus. */
export const STATUS_NOTIFICATION = 'premortem/status';

/** KernelState is the attached kernel's state as the server reports it. */
export type KernelState = 'none' | 'connecting' | 'idle' | 'busy' | 'dead' | 'error';

/** KernelStatus are the params of premortem/status. */
export interface KernelStatus {
  /** The notebook (or percent-format file) URI this applies to; absent: every document. */
  uri?: string;
  state: KernelState;
  /** Short display name, e.g. "python3 (pid 1234)". */
  kernel?: string;
  connectionFile?: string;
  /** One line for the tooltip, or the error text. */
  detail?: string;
  /** The shadow child's sandbox in force, and why. */
  sandbox?: { kind: string; reason?: string };
  /** Effective layers, when the server says. */
  layers?: Partial<Record<'static' | 'rules' | 'shadow' | 'llm', boolean>>;
}

/**
 * StatusBar owns the status bar item. The server reports status per notebook (each notebook
 * can be attached to its own kernel), so it keeps the last status per URI and shows the one
 * for the active notebook or file.
 */
export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly byUri = new Map<string, KernelStatus>();
  private global: KernelStatus | undefined;
  private running = false;
  private readonly subs: vscode.Disposable[] = [];

  constructor() {
    this.item = vscode.window.createStatusBarItem('premortem.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'premortem';
    this.item.command = 'premortem.attachKernel';
    this.starting();
    this.item.show();
    this.subs.push(
      vscode.window.onDidChangeActiveNotebookEditor(() => this.render()),
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
    );
  }

  /** current is the status shown for the active document (state "none" when unknown). */
  get current(): KernelStatus {
    return this.forActive() ?? { state: 'none' };
  }

  /** ready shows that the server runs; what it is attached to comes with premortem/status. */
  ready(): void {
    this.running = true;
    this.render();
  }

  /** update records a premortem/status notification and re-renders. */
  update(s: KernelStatus): void {
    this.running = true;
    if (s.uri) {
      this.byUri.set(s.uri, s);
    } else {
      this.global = s;
      this.byUri.clear();
    }
    this.render();
  }

  private forActive(): KernelStatus | undefined {
    const uri =
      vscode.window.activeNotebookEditor?.notebook.uri.toString() ?? vscode.window.activeTextEditor?.document.uri.toString();
    return (uri !== undefined ? this.byUri.get(uri) : undefined) ?? this.global;
  }

  private render(): void {
    if (!this.running) {
      return;
    }
    const s = this.forActive();
    if (s) {
      this.show(s);
      return;
    }
    this.item.text = '$(check) premortem';
    this.item.tooltip = 'premortem is running. Click to attach to a kernel.';
    this.item.backgroundColor = undefined;
  }

  /** starting shows that the server is not up yet. */
  starting(): void {
    this.running = false;
    this.item.text = '$(loading~spin) premortem';
    this.item.tooltip = 'premortem: starting the language server…';
    this.item.backgroundColor = undefined;
  }

  /** failed shows that the server could not start or died. */
  failed(message: string): void {
    this.running = false;
    this.item.text = '$(error) premortem: server not running';
    this.item.tooltip = `${message}\n\nClick to attach a kernel; run "premortem: Show Server Log" for details.`;
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
  }

  private show(s: KernelStatus): void {
    const name = s.kernel || (s.connectionFile ? basename(s.connectionFile) : 'kernel');
    this.item.backgroundColor = undefined;
    switch (s.state) {
      case 'none':
        this.item.text = '$(circle-slash) premortem: no kernel — static checks only';
        break;
      case 'connecting':
        this.item.text = `$(loading~spin) premortem: connecting to ${name}`;
        break;
      case 'idle':
        this.item.text = `$(pass) premortem: ${name} · idle`;
        break;
      case 'busy':
        this.item.text = `$(pulse) premortem: ${name} · busy`;
        break;
      case 'dead':
        this.item.text = `$(debug-disconnect) premortem: ${name} · dead`;
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      case 'error':
      default:
        this.item.text = `$(warning) premortem: ${name} · ${s.state}`;
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
    }
    const lines = [
      s.state === 'none'
        ? 'premortem is not attached to a kernel: only static checks run.'
        : `premortem kernel: ${name} (${s.state})`,
    ];
    if (s.connectionFile) {
      lines.push(`Connection file: ${s.connectionFile}`);
    }
    if (s.detail) {
      lines.push(s.detail);
    }
    if (s.sandbox) {
      lines.push(`Shadow sandbox: ${s.sandbox.kind}${s.sandbox.reason ? ` (${s.sandbox.reason})` : ''}`);
    }
    if (s.layers) {
      const on = Object.entries(s.layers)
        .filter(([, v]) => v)
        .map(([k]) => k);
      lines.push(`Layers: ${on.join(', ') || 'none'}`);
    }
    lines.push('', 'Click to attach to a kernel.');
    this.item.tooltip = lines.join('\n');
  }

  dispose(): void {
    this.subs.forEach((d) => d.dispose());
    this.item.dispose();
  }
}

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}
