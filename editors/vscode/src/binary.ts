// Finding the premortem binary: the setting, else PATH, else the one shipped in the .vsix.
import * as fs from 'fs';
import * as path from 'path';

/** Where a resolved binary came from, shown in the log so users know which one runs. */
export type BinarySource = 'setting' | 'PATH' | 'bundled';

/** ResolvedBinary is the server executable to start. */
export interface ResolvedBinary {
  path: string;
  source: BinarySource;
}

/**
 * resolveBinary picks the server executable. An explicit setting that points nowhere is an
 * error rather than a silent fallback: the user asked for that binary.
 */
export function resolveBinary(setting: string, extensionPath: string): ResolvedBinary {
  if (setting) {
    if (!isExecutable(setting)) {
      throw new Error(
        `premortem.server.path is "${setting}", which is not an executable file. ` +
          'Fix the setting or clear it to use premortem from PATH or the bundled binary.',
      );
    }
    return { path: setting, source: 'setting' };
  }
  const onPath = findOnPath('premortem');
  if (onPath) {
    return { path: onPath, source: 'PATH' };
  }
  const bundled = path.join(extensionPath, 'bin', `${process.platform}-${process.arch}`, 'premortem');
  makeExecutable(bundled);
  if (isExecutable(bundled)) {
    return { path: bundled, source: 'bundled' };
  }
  throw new Error(
    'premortem binary not found: set premortem.server.path, put premortem on PATH ' +
      '(go install github.com/premortem/premortem/cmd/premortem@latest), or install the ' +
      `platform-specific extension (this one has no binary for ${process.platform}-${process.arch}).`,
  );
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) {
      return candidate;
    }
  }
  return undefined;
}

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) {
      return false;
    }
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// makeExecutable restores the execute bit on the bundled binary: not every .vsix unpacker
// keeps file modes.
function makeExecutable(p: string): void {
  try {
    const st = fs.statSync(p);
    if (st.isFile() && (st.mode & 0o111) === 0) {
      fs.chmodSync(p, st.mode | 0o755);
    }
  } catch {
    // Missing or read-only: resolveBinary reports it.
  }
}
