#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
//
// Writes Ajv's answers for a corpus (array of {id, config, side, schema, instance}):
//   node scripts/ajv/oracle.mjs CORPUS.json ORACLE.json     write
//   node scripts/ajv/oracle.mjs CORPUS.json ORACLE.json --check   exit 1 when ORACLE.json differs
//   node scripts/ajv/oracle.mjs CORPUS.json -                print to stdout

import { readFileSync, writeFileSync } from 'node:fs';
import { answer } from './ajv-env.mjs';

const [corpusPath, oraclePath, flag] = process.argv.slice(2);
if (!corpusPath || !oraclePath) {
  console.error('usage: oracle.mjs CORPUS.json ORACLE.json|- [--check]');
  process.exit(2);
}
const corpus = JSON.parse(readFileSync(corpusPath, 'utf8'));
const text = JSON.stringify(corpus.map(answer), null, 2) + '\n';
if (oraclePath === '-') process.stdout.write(text);
else if (flag === '--check') {
  if (readFileSync(oraclePath, 'utf8') !== text) {
    console.error(`${oraclePath} differs from a fresh run`);
    process.exit(1);
  }
  console.error(`${oraclePath}: up to date (${corpus.length} cases)`);
} else {
  writeFileSync(oraclePath, text);
  console.error(`wrote ${oraclePath} (${corpus.length} cases)`);
}
