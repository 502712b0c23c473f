// The official CLI survey's driver (scripts/official-cli-survey starts the server and runs this
// with the official CLI's Node): it loads the official CLI's own command table
// (`ROOT_COMMANDS`) and runs every leaf command in this process through the CLI's `runCli`,
// with minimal arguments made from its usage line, against KINDGI_API_URL. Every request the
// command sends to that address is recorded (with the answer's status and error code), so a
// command "talks to the API" when it sent one (or when its code calls the API client).
//
//   node official-cli-survey.mjs <cli-dist-dir>   → one JSON line per command on stdout
import { AsyncLocalStorage } from 'node:async_hooks';
import { pathToFileURL } from 'node:url';

const dist = process.argv[2];
const { ROOT_COMMANDS } = await import(pathToFileURL(`${dist}/commands/index.js`).href);
const { runCli } = await import(pathToFileURL(`${dist}/main.js`).href);
const base = process.env.KINDGI_API_URL;
const fixtures = JSON.parse(process.env.SURVEY_FIXTURES || '{}');

// Commands that never talk to the API, or that start containers, open browsers, wait on a
// terminal or write into a pack: not run.
const SKIP = new Set([
  'init', 'upgrade', 'dev', 'build', 'deploy', 'test', 'mcp-launch', 'skills sync',
  'feedback write', 'feedback submit', 'doctor', 'license enroll', 'auth login', 'auth registry',
  'mcp add', 'mcp list', 'mcp remove', 'mcp presets', 'env init', 'env plan', 'env set',
  'env unset', 'env list', 'key export', 'key list', 'secrets copy',
]);

// Arguments for commands whose usage alone does not give valid ones (the fixtures are made
// over the API before the survey: scripts/official-cli-survey).
const F = fixtures;
const ARGS = {
  'console': ['--no-open'],
  'tools publish': [`--manifest=@${F.toolSpec}`],
  'flows publish': [`--spec=@${F.flowSpec}`],
  'agents publish': [`--spec=@${F.agentSpec}`],
  'guardrails register': [`--spec=@${F.guardrailSpec}`],
  'tools get': [F.toolId], 'tools versions': [F.toolId],
  'tools get-version': [F.toolId, F.toolVersion],
  'tools reinstate': [F.toolId, F.toolVersion],
  'tools unregister': [F.toolId, F.toolVersion],
  'flows get': [F.flowId], 'flows versions': [F.flowId],
  'flows unregister': [F.flowId, '1.0.0'], 'flows reinstate': [F.flowId, '1.0.0'],
  'agents get': [F.agentId], 'agents versions': [F.agentId],
  'agents unregister': [F.agentId, '1.0.0'],
  'guardrails get': [F.guardrailId], 'guardrails unregister': [F.guardrailId],
  'conversations open': [F.agentId, '1.0.0'],
  'conversations get': [F.conversationId], 'conversations messages': [F.conversationId],
  'conversations close': [F.conversationId], 'conversations unregister': [F.conversationId],
  'runs get': [F.runId], 'runs journal': [F.runId], 'runs stream': [F.runId],
  'runs cancel': [F.runId], 'runs resume': [F.runId],
  'runs start': [`--flow=${F.flowId}`, '--input={"orderId":"ord_1"}', '--dry-run', '--no-wait'],
  'projects get': [F.projectId],
  'projects create': ['--name=Survey', '--slug=survey'],
  'projects rename': [F.projectId, '--name=Default'],
  'tenant rename': ['--name=default'],
  'tokens create': ['--label=survey'],
  'tokens get': [F.tokenId], 'tokens revoke': [F.tokenId],
  'service-accounts create': ['survey-sa'],
  'service-accounts get': [F.serviceAccountId],
  'service-accounts grant': [F.serviceAccountId, '--tenant-admin'],
  'service-accounts ungrant': [F.serviceAccountId, '--tenant-admin'],
  'service-accounts unregister': [F.serviceAccountId],
  'approvals complete': ['apr_x', '--decision=approve'],
  'agents derive': [F.agentId, '--from=1.0.0', '--prompt=acme.prompt=1.0.0'],
  'judge-classes add': ['--name=survey', '--weight=1', '--tenant'],
  'judge-classes set': ['jc_survey', '--weight=2'],
  'reviewers register': ['--spec={"role":"standard"}'],
  'reviewers get': [F.reviewerId], 'reviewers unregister': [F.reviewerId],
  'gate-policies publish': ['gp', '--policy-version=1.0.0', `--agent=${F.agentId}`, '--tenant', '--spec={}'],
  'sso providers update': ['sso_x', '--name=X'],
  'sites update': ['site_x', '--name=X'],
  'memory facts supersede': ['fact_x', '--input={"content":"c"}'],
  'env pull': ['--scope=tenant'],
  'secrets list': ['--env=local', '--scope=tenant'],
  'exports create': ['--out', `${process.cwd()}/export`, '--yes'],
  'promote': ['--from=staging', '--to=prod'],
  'license renew': ['--key', 'env:NOPE', '--renewer', 'env:NOPE'],
};

// Values for `<placeholder>`s and `--flag=<value>`s.
function value(name) {
  if (/json|spec|input|query|manifest|values/.test(name)) return '{}';
  if (/^(version|semver|v)$/.test(name)) return '1.0.0';
  if (/^n$|seq|limit/.test(name)) return '1';
  if (/url|origin/.test(name)) return 'https://example.com/{approvalId}';
  if (/expr/.test(name)) return '@daily';
  if (/kind/.test(name)) return 'prompt';
  if (/key:value/.test(name)) return 'region:eu';
  if (/file|dir|path/.test(name)) return fixtures.toolFile;
  if (/env$/.test(name)) return 'local';
  return 'survey-x1';
}

/// Top-level words of a usage line: bracketed optional parts dropped, `(a | b)` as `a`.
function minimalArgs(usage, name) {
  let u = usage.split('\n')[0].replace(`kindgi ${name}`, ' ');
  for (let i = 0; i < 10; i++) u = u.replace(/\[[^\[\]]*\]/g, ' ');
  u = u.replace(/\(([^()|]*)\|[^()]*\)/g, '$1').replace(/[()…]/g, ' ');
  const args = [];
  for (const w of u.split(/\s+/).filter(Boolean)) {
    if (w.startsWith('--')) {
      const m = w.match(/^(--[a-z0-9-]+)(?:[= ]<([^>]*)>)?/);
      if (!m) continue;
      const flag = m[1];
      if (w.includes('=') || m[2]) {
        const opts = w.split('=')[1];
        const pick = opts && !opts.startsWith('<') ? opts.split('|')[0] : value(m[2] || flag);
        args.push(`${flag}=${pick}`);
      } else args.push(flag);
    } else if (/^<[^>]+>$/.test(w)) args.push(value(w.slice(1, -1)));
    else if (/^[a-z]+(\|[a-z]+)+$/.test(w)) args.push(w.split('|')[0]);
  }
  return args;
}

// Each command's requests, kept apart even when one still runs after its time is up.
const current = new AsyncLocalStorage();
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const requests = current.getStore() ?? [];
  const url = typeof input === 'string' ? input : input.url ?? String(input);
  const method = (init?.method ?? input?.method ?? 'GET').toUpperCase();
  const res = await realFetch(input, init);
  if (base && url.startsWith(base)) {
    let code;
    try { code = (await res.clone().json())?.error?.code; } catch { /* not JSON */ }
    requests.push({ method, path: new URL(url).pathname, status: res.status, code });
  }
  return res;
};

function usesClient(cmd) {
  return /client\(|runSdk|fetch|apiGet|api\./.test(String(cmd.run));
}

function leaves(cmd, prefix, out) {
  const name = prefix ? `${prefix} ${cmd.name}` : cmd.name;
  if (cmd.subcommands?.length) for (const s of cmd.subcommands) leaves(s, name, out);
  else out.push({ name, cmd });
  return out;
}

const all = ROOT_COMMANDS.flatMap((c) => leaves(c, '', []));
// Creating commands first, so later reads find something; removing ones last.
const rank = (n) => (/ (publish|register|create|open|add|write|upload)$/.test(n) ? 0
  : / (unregister|remove|revoke|delete|close|cancel|ungrant)$/.test(n) ? 2 : 1);
all.sort((a, b) => rank(a.name) - rank(b.name));
for (const { name, cmd } of all) {
  if (SKIP.has(name)) {
    console.log(JSON.stringify({ command: name, skipped: true, usesClient: usesClient(cmd) }));
    continue;
  }
  const args = ARGS[name] ?? minimalArgs(cmd.usage ?? '', name);
  const argv = [...name.split(' '), ...args];
  const requests = [];
  // `exports create` reads every family, sending a 5xx (a 501 too) again after 1, 2 and 4 s.
  const limit = name === 'exports create' ? 400 : 20;
  let outcome;
  try {
    outcome = await Promise.race([
      current.run(requests, () => runCli({ argv, env: { ...process.env, KINDGI_CLI_INSTALL: 'pypi' }, stopSignal: new AbortController().signal })),
      new Promise((r) => setTimeout(() => r({ exitCode: 124, stdout: '', stderr: `timed out after ${limit} s` }), limit * 1000)),
    ]);
  } catch (e) {
    outcome = { exitCode: 1, stdout: '', stderr: `thrown: ${e?.message ?? e}` };
  }
  const firstError = String(outcome.stderr || outcome.stdout || '').split('\n').find((l) => l.trim()) ?? '';
  console.log(JSON.stringify({
    command: name, argv, exitCode: outcome.exitCode, firstError: firstError.slice(0, 300),
    requests: [...requests], usesClient: usesClient(cmd),
  }));
}
process.exit(0);
