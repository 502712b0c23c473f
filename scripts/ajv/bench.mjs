#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
//
// Times Ajv (pack configuration) on the benchmark cases: node scripts/ajv/bench.mjs CASES.json [SECONDS]
// Prints one JSON line per case: {"name", "compile_per_s", "validate_per_s", "valid", "issues"}.

import { readFileSync } from 'node:fs';
import { compileFor } from './ajv-env.mjs';

const [path, secondsArg] = process.argv.slice(2);
const budget = Number(secondsArg ?? '2') * 1e9;
const cases = JSON.parse(readFileSync(path, 'utf8'));

function rate(fn) {
  // Warm up (JIT), then run batches until the time budget is spent.
  for (let i = 0; i < 200; i++) fn();
  let n = 0;
  let batch = 1;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < BigInt(budget)) {
    for (let i = 0; i < batch; i++) fn();
    n += batch;
    batch = Math.min(batch * 2, 4096);
    elapsed = process.hrtime.bigint() - start;
  }
  return n / (Number(elapsed) / 1e9);
}

for (const c of cases) {
  const validate = compileFor('pack', 'output', c.schema);
  const valid = validate(c.instance);
  const issues = valid ? 0 : validate.errors.length;
  const compileRate = rate(() => compileFor('pack', 'output', c.schema)) ;
  const validateRate = rate(() => validate(c.instance));
  console.log(JSON.stringify({ name: c.name, compile_per_s: compileRate, validate_per_s: validateRate, valid, issues }));
}
