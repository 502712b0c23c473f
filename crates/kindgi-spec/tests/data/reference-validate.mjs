// Answers, for each manifest read from stdin (a JSON array), what the reference says:
//   reference: the official `validateToolManifest` (@kindgi/tools, schema 1.1.0)
//   ajv:       Ajv 8 (Ajv2020, strict, allErrors, union types, formats) against
//              kindgi-spec's 1.3.0 manifest schema, whose path is argv[2]
// Env: KINDGI_CLI_NODE_MODULES (official packages), KINDGI_NPM_NODE_MODULES (ajv, ajv-formats).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const cli = process.env.KINDGI_CLI_NODE_MODULES;
const npm = process.env.KINDGI_NPM_NODE_MODULES;
const load = (dir, rel) => import(pathToFileURL(path.join(dir, rel)).href);
const { validateToolManifest } = await load(cli, '@kindgi/tools/dist/index.js');
const Ajv2020 = (await load(npm, 'ajv/dist/2020.js')).default;
const addFormats = (await load(npm, 'ajv-formats/dist/index.js')).default;

const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(fs.readFileSync(process.argv[2], 'utf8')));

const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
const out = cases.map((manifest) => {
  const r = validateToolManifest(manifest);
  const reference = r.kind === 'ok'
    ? { ok: true }
    : { ok: false, code: r.error.code, message: r.error.message, issues: r.error.issues ?? [] };
  let ajvIssues = [];
  if (manifest !== null && typeof manifest === 'object' && !Array.isArray(manifest)) {
    const copy = { ...manifest };
    delete copy.handler;
    if (!validate(copy)) {
      ajvIssues = validate.errors.map((e) => ({ path: e.instancePath, message: e.message }));
    }
  }
  return { reference, ajv: ajvIssues };
});
process.stdout.write(JSON.stringify(out));
