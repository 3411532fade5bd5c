// Showing the server's Markdown explanation of a predicted crash in a webview.
import * as vscode from 'vscode';

let panel: vscode.WebviewPanel | undefined;

/**
 * showExplanation renders Markdown with VS Code's own Markdown renderer (the built-in
 * markdown extension's markdown.api.render) in a script-less webview, reusing one panel.
 */
export async function showExplanation(title: string, markdown: string): Promise<void> {
  let body: string;
  try {
    body = await vscode.commands.executeCommand<string>('markdown.api.render', markdown);
  } catch {
    body = `<pre>${escapeHtml(markdown)}</pre>`;
  }
  if (!panel) {
    panel = vscode.window.createWebviewPanel('premortem.explain', title, vscode.ViewColumn.Beside, {
      enableScripts: false,
      enableFindWidget: true,
    });
    panel.onDidDispose(() => {
      panel = undefined;
    });
  }
  panel.title = title;
  panel.webview.html = `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;">
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 16px; line-height: 1.5; }
code, pre { font-family: var(--vscode-editor-font-family); }
pre { background: var(--vscode-textCodeBlock-background); padding: 8px; overflow-x: auto; }
</style></head>
<body>${body}</body></html>`;
  panel.reveal(vscode.ViewColumn.Beside, true);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
}
