// Runs the invocation cases in invoke_cases.json through the official @kindgi/tools
// (defineTool + invokeTool) and prints each result as JSON, for tests/invoke_reference.rs.
// Usage: node invoke_reference.mjs <path to @kindgi/tools/dist/index.js> <cases.json>
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [, , toolsIndex, casesPath] = process.argv;
const tools = await import(pathToFileURL(toolsIndex).href);
const { cases, idempotencyKeys } = JSON.parse(readFileSync(casesPath, 'utf8'));

function handlerFor(spec) {
  switch (spec.kind) {
    case 'echo':
      return async (input) => input;
    case 'return':
      return async () => spec.value;
    case 'throw':
      return async () => { throw new Error(spec.message); };
    case 'precondition':
      return async () => { throw new tools.ToolPreconditionError(spec.reason, spec.message); };
    case 'env':
      return async (_input, ctx) => ({ env: ctx.env === undefined ? null : ctx.env });
    default:
      throw new Error(`unknown handler kind ${spec.kind}`);
  }
}

const results = [];
for (const c of cases) {
  const defined = tools.defineTool({ ...c.manifest, handler: handlerFor(c.handler) });
  if (defined.kind !== 'ok') {
    results.push({ name: c.name, defineError: defined.error });
    continue;
  }
  const ctx = tools.toolContextForTest(c.env ? { env: c.env } : {});
  const r = await tools.invokeTool(defined.value, c.input, ctx, {
    skipOutputValidation: c.skipOutputValidation === true,
  });
  if (r.kind === 'ok') {
    results.push({ name: c.name, ok: true, value: r.value });
  } else {
    const e = r.error;
    const out = { name: c.name, ok: false, code: e.code, message: e.message, toolId: e.toolId };
    if (e.reason !== undefined) out.reason = e.reason;
    if (e.errors !== undefined) out.errors = e.errors;
    results.push(out);
  }
}
const keys = idempotencyKeys.map((k) => tools.toolIdempotencyKey(k));
process.stdout.write(JSON.stringify({ results, keys }));
