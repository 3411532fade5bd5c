// Unit tests for the extension's parsing of server and CLI answers (src/parse.ts).
// Run with: npm run test:unit (bundles src/parse.ts to out/parse.mjs, then node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markdownOf, normalizeKernels } from '../out/parse.mjs';

test('normalizeKernels reads premortem kernels --json (snake_case)', () => {
  const cli = [
    { connection_file: '/run/kernel-1.json', state: 'idle', pid: 42, notebook: '/w/a.ipynb', mod_time: '2026-01-01T00:00:00Z' },
    { connection_file: '/run/kernel-2.json', state: 'unreachable', skipped: 'heartbeat timed out' },
    { server: { url: 'http://127.0.0.1:8888/' }, kernel_id: 'abc', state: 'idle' },
  ];
  assert.deepEqual(normalizeKernels(cli), [
    { connectionFile: '/run/kernel-1.json', name: undefined, pid: 42, state: 'idle', notebook: '/w/a.ipynb', detail: undefined },
    { connectionFile: '/run/kernel-2.json', name: undefined, pid: undefined, state: 'unreachable', notebook: undefined, detail: 'heartbeat timed out' },
  ]);
});

test('normalizeKernels reads the server command (camelCase, wrapped)', () => {
  const got = normalizeKernels({ kernels: [{ connectionFile: '/k.json', name: 'python3', state: 'busy' }] });
  assert.equal(got.length, 1);
  assert.equal(got[0].connectionFile, '/k.json');
  assert.equal(got[0].name, 'python3');
  assert.equal(got[0].state, 'busy');
});

test('normalizeKernels tolerates junk', () => {
  for (const junk of [null, undefined, 3, 'x', {}, { kernels: 'no' }, [null, 1, 'a', {}]]) {
    assert.deepEqual(normalizeKernels(junk), []);
  }
});

test('markdownOf accepts a string, MarkupContent-like objects, and nothing', () => {
  const cases = [
    ['**KeyError**', '**KeyError**'],
    [{ kind: 'markdown', value: 'v' }, 'v'],
    [{ markdown: 'm' }, 'm'],
    ['   ', undefined],
    [null, undefined],
    [{ value: 3 }, undefined],
  ];
  for (const [input, want] of cases) {
    assert.equal(markdownOf(input), want, JSON.stringify(input));
  }
});

test('withSuccess fills success from the outputs when VS Code left it unset', async () => {
  const { withSuccess } = await import('../out/executionSummary.mjs');
  const cell = (summary, outputs = []) => ({ index: 0, kind: 2, document: { uri: 'c' }, metadata: {}, outputs, executionSummary: summary });
  const error = [{ items: [{ mime: 'application/vnd.code.notebook.error', data: new Uint8Array() }] }];
  const stdout = [{ items: [{ mime: 'application/vnd.code.notebook.stdout', data: new Uint8Array() }] }];

  assert.deepEqual(withSuccess(cell({ executionOrder: 3 }, stdout)).executionSummary, { executionOrder: 3, success: true });
  assert.deepEqual(withSuccess(cell({ executionOrder: 4 }, error)).executionSummary, { executionOrder: 4, success: false });
  // Already complete, never ran, or no summary: the very same cell object.
  for (const c of [cell({ executionOrder: 5, success: false }), cell({}), cell(undefined)]) {
    assert.equal(withSuccess(c), c);
  }
});
