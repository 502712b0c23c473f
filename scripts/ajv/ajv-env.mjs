// SPDX-License-Identifier: Apache-2.0
//
// Loads Ajv 8.20.0 + ajv-formats 3.0.1 and builds validators the way the Kindgi runtime does:
//   pack -> Ajv2020 strict, allErrors, allowUnionTypes, useDefaults on the input side, all formats;
//   mcp  -> the class named by $schema, strict:false, inlineRefs:false, useDefaults on input.
//
// Where Ajv comes from, first match wins:
//   1. $KINDGI_NPM_NODE_MODULES (set by scripts/setup-reference in .cache/reference.env);
//   2. <repo>/.cache/npm/node_modules;
//   3. otherwise `npm install` of the pinned versions into <repo>/.cache/npm.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
const PINNED = { ajv: '8.20.0', 'ajv-formats': '3.0.1' };

function modulesDir() {
  const fromEnv = process.env.KINDGI_NPM_NODE_MODULES;
  if (fromEnv && existsSync(join(fromEnv, 'ajv'))) return fromEnv;
  const local = join(repoRoot, '.cache', 'npm', 'node_modules');
  if (existsSync(join(local, 'ajv')) && existsSync(join(local, 'ajv-formats'))) return local;
  const prefix = join(repoRoot, '.cache', 'npm');
  mkdirSync(prefix, { recursive: true });
  console.error(`installing ajv@${PINNED.ajv} ajv-formats@${PINNED['ajv-formats']} into ${prefix}`);
  execFileSync(
    'npm',
    ['install', '--no-save', '--prefix', prefix, `ajv@${PINNED.ajv}`, `ajv-formats@${PINNED['ajv-formats']}`],
    { stdio: 'inherit' },
  );
  return local;
}

const dir = modulesDir();
const req = createRequire(join(dir, '..', 'loader.js'));
const pick = (m) => (typeof m === 'function' ? m : m.default);
const Ajv07 = pick(req('ajv'));
const Ajv2019 = pick(req('ajv/dist/2019'));
const Ajv2020 = pick(req('ajv/dist/2020'));
const addFormats = pick(req('ajv-formats'));
const draft06 = req('ajv/dist/refs/json-schema-draft-06.json');
for (const [name, want] of Object.entries(PINNED)) {
  const got = req(`${name}/package.json`).version;
  if (got !== want) console.error(`warning: ${name} ${got} found, the vectors pin ${want}`);
}
// Non-strict Ajv warns about what it ignores; not part of the answer.
console.warn = () => {};

const DIALECTS = {
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'http://json-schema.org/draft-06/schema': 'draft-06',
};

function dialectOf(schema) {
  if (schema === null || typeof schema !== 'object' || !('$schema' in schema)) return '2020-12';
  const s = schema.$schema;
  const key = typeof s === 'string' ? s.replace(/#$/, '') : undefined;
  const d = key === undefined ? undefined : DIALECTS[key];
  if (d === undefined) {
    throw new Error(
      `The schema's $schema ${JSON.stringify(s)} isn't a JSON Schema dialect Kindgi validates: draft-06, draft-07, 2019-09 or 2020-12.`,
    );
  }
  return d;
}

/** Compiles `schema` for a config ("pack" | "mcp") and side ("input" | "output"). */
export function compileFor(config, side, schema) {
  const useDefaults = side === 'input' ? { useDefaults: true } : {};
  if (config === 'pack') {
    const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true, ...useDefaults });
    addFormats(ajv);
    return ajv.compile(schema);
  }
  const d = dialectOf(schema);
  const opts = { strict: false, allErrors: true, allowUnionTypes: true, ...useDefaults, inlineRefs: false };
  let ajv;
  if (d === '2020-12') ajv = new Ajv2020(opts);
  else if (d === '2019-09') ajv = new Ajv2019(opts);
  else {
    ajv = new Ajv07(opts);
    if (d === 'draft-06') ajv.addMetaSchema(draft06);
  }
  addFormats(ajv);
  return ajv.compile(schema);
}

/** Ajv's answer for one corpus case, in the oracle format. */
export function answer(c) {
  let validate;
  try {
    validate = compileFor(c.config, c.side, c.schema);
  } catch (e) {
    return { id: c.id, compiles: false, compileErrorName: e.name, compileError: e.message };
  }
  const data = structuredClone(c.instance);
  const valid = validate(data);
  const out = { id: c.id, compiles: true, valid, issues: valid ? [] : structuredClone(validate.errors) };
  if (c.side === 'input') out.instanceAfter = data;
  return out;
}
