#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
//
// Writes the benchmark cases shared by the Rust benches and scripts/bench-schema-vs-ajv:
// crates/kindgi-schema/benches/data/cases.json, an array of {name, schema, instance}.
// All cases are pack-mode output validation (Ajv2020, strict, allErrors, formats).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './ajv-env.mjs';

const tool = {
  type: 'object',
  properties: {
    msg: { type: 'string', minLength: 1, maxLength: 2000 },
    count: { type: 'integer', minimum: 0, maximum: 100 },
    mode: { type: 'string', enum: ['fast', 'safe', 'auto'] },
    email: { type: 'string', format: 'email' },
    tags: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' }, maxItems: 10, uniqueItems: true },
    when: { type: 'string', format: 'date-time' },
    opts: { type: 'object', properties: { loud: { type: 'boolean' }, ratio: { type: 'number', exclusiveMinimum: 0, maximum: 1 } }, additionalProperties: false },
  },
  required: ['msg', 'count'],
  additionalProperties: false,
};
const small = { msg: 'hello world', count: 3, mode: 'safe', email: 'ada@example.com', tags: ['alpha', 'beta-2'], when: '2024-05-01T12:00:00Z', opts: { loud: true, ratio: 0.5 } };
const smallBad = { msg: '', count: 300, mode: 'slow', email: 'nope', tags: ['Alpha', 'alpha', 'Alpha'], opts: { ratio: 0, x: 1 }, extra: true };
const record = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string', minLength: 1, maxLength: 100 },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    email: { type: 'string', format: 'email' },
    created: { type: 'string', format: 'date-time' },
    score: { type: 'number', multipleOf: 0.5 },
    tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
    address: { type: 'object', properties: { street: { type: 'string' }, zip: { type: 'string', pattern: '^[0-9]{5}$' } }, required: ['zip'] },
  },
  required: ['id', 'name', 'age'],
  additionalProperties: false,
};
const large = { type: 'object', properties: { items: { type: 'array', items: { $ref: '#/$defs/record' } }, total: { type: 'integer' } }, required: ['items'], $defs: { record } };
const hex = (n, w) => n.toString(16).padStart(w, '0');
const rows = [];
for (let i = 0; i < 1000; i++) {
  rows.push({
    id: `${hex(i, 8)}-0000-4000-8000-${hex(i * 7919, 12)}`,
    name: `user ${i}`,
    age: i % 100,
    email: `user${i}@example.com`,
    created: '2024-01-01T00:00:00Z',
    score: (i % 20) / 2,
    tags: ['a', 'b', `t${i % 5}`],
    address: { street: `${i} Main St`, zip: String(10000 + i).slice(0, 5) },
  });
}
const largeBad = { items: rows.map((r, i) => (i % 100 === 0 ? { ...r, age: -1, email: 'bad', zip: 1 } : r)), total: 'x' };
const cases = [
  { name: 'small-valid', schema: tool, instance: small },
  { name: 'small-invalid', schema: tool, instance: smallBad },
  { name: 'large-valid', schema: large, instance: { items: rows, total: rows.length } },
  { name: 'large-invalid', schema: large, instance: largeBad },
];
const out = join(repoRoot, 'crates', 'kindgi-schema', 'benches', 'data', 'cases.json');
writeFileSync(out, JSON.stringify(cases) + '\n');
console.error(`wrote ${out}`);
