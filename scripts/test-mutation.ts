/**
 * Mutation testing of the money code with StrykerJS, one area at a time (docs/reliability.md
 * "Mutation testing"). Each area has its configuration, stryker/<area>.conf.json: the files it
 * mutates and the tests that cover them (a mutant runs the tests of its area that reach it, never the
 * whole suite). Runs are incremental: reports/mutation/<area>/incremental.json (kept in the
 * repository) holds the last results, and a run tests again only the mutants in code or tests that
 * changed since; it is also the report (the mutation-testing-report-schema JSON) the score is read
 * from. Only incremental.json and run.json are kept in git; `--html` writes Stryker's HTML report
 * beside them, on demand and ignored by git.
 *
 *   npm run test:mutation -- --area commerce      # one area
 *   npm run test:mutation -- --area commerce --html   # and Stryker's HTML report, reports/mutation/commerce/index.html
 *   npm run test:mutation -- --area commerce --area statements
 *   npm run test:mutation -- --all                # every area, one after the other
 *   npm run test:mutation -- --changed-since <commit>   # the areas whose mutated or test files changed since
 *   npm run test:mutation -- --changed            # the areas changed since their last report's commit (CI)
 *   npm run test:mutation -- --changed --budget-minutes 15   # CI: areas past the budget are listed as unproven
 *   npm run test:mutation -- --list
 *   npm run test:mutation -- --table             # the score table of docs/reliability.md, from the run.json files
 *
 * Each run records its commit, date and score in reports/mutation/<area>/run.json (the table of
 * docs/reliability.md "Mutation testing" is made from them). `--changed` runs an area whose mutated
 * files, tests or configuration changed since that commit (an area without a report is skipped: its
 * first, whole run is made by hand); an area whose score is below 85% fails the run (`--min-score <n>`
 * sets another bar).
 *
 * Concurrency is 1 (one test process at a time); areas run one after the other.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileOf, resolveMutate as resolveEntry, scoreOf } from './mutation-areas.ts';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const configDir = path.join(projectRoot, 'stryker');

interface AreaConfig { mutate: string[]; tap: { testFiles: string[] } }

const areas = readdirSync(configDir)
  .filter((name) => name.endsWith('.conf.json'))
  .map((name) => name.slice(0, -'.conf.json'.length))
  .sort();

function configOf(area: string): AreaConfig {
  return JSON.parse(readFileSync(path.join(configDir, `${area}.conf.json`), 'utf8')) as AreaConfig;
}

/** A `mutate` entry as Stryker takes it; a declaration not found ends the run. */
function resolveMutate(entry: string): string {
  const resolved = resolveEntry(projectRoot, entry);
  if (resolved === undefined) usage(`${entry}: no top-level function or const of that name in ${fileOf(entry)}`);
  return resolved;
}

function usage(message: string): never {
  console.error(`test:mutation: ${message}\n  --area <name> (one of ${areas.join(', ')}), --all, --changed-since <commit>, --list`);
  process.exit(2);
}

function git(...gitArgs: string[]): { ok: boolean; out: string; err: string } {
  const run = spawnSync('git', gitArgs, { cwd: projectRoot, encoding: 'utf8' });
  return { ok: run.status === 0, out: run.stdout ?? '', err: run.stderr ?? '' };
}

/** The areas whose mutated files, tests or configuration changed since `commit`. */
function changedSince(commit: string, among: string[]): string[] {
  const diff = git('diff', '--name-only', commit, '--', 'src', 'test', 'stryker');
  if (!diff.ok) usage(`git diff ${commit} failed: ${diff.err.trim()}`);
  const changed = new Set(diff.out.split('\n').filter(Boolean));
  return among.filter((area) => {
    const config = configOf(area);
    // A mutated entry may name a declaration or a line range in its file: the file is what changes.
    const mutated = config.mutate.map(fileOf);
    return [...mutated, ...config.tap.testFiles, `stryker/${area}.conf.json`].some((file) => changed.has(file));
  });
}

const runFile = (area: string) => path.join(projectRoot, 'reports', 'mutation', area, 'run.json');

const args = process.argv.slice(2);
const chosen = new Set<string>();
let minScore = 85;
/** Minutes of mutation testing a run may spend (CI's own time is bounded); Infinity without --budget-minutes. */
let budgetMinutes = Number.POSITIVE_INFINITY;
/** Stryker's HTML report as well (reports/mutation/<area>/index.html, not kept in git). */
let html = false;
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!;
  if (arg === '--all') areas.forEach((a) => chosen.add(a));
  else if (arg === '--area') {
    const area = args[++i];
    if (!area || !areas.includes(area)) usage(`unknown area "${area ?? ''}"`);
    chosen.add(area);
  } else if (arg === '--changed-since') {
    const commit = args[++i];
    if (!commit) usage('--changed-since needs a commit');
    changedSince(commit, areas).forEach((a) => chosen.add(a));
  } else if (arg === '--changed') {
    for (const area of areas) {
      // An area without a report has not had its first (whole) run, which is made by hand
      // (--area): CI's budget is for the increments.
      if (!existsSync(runFile(area))) {
        console.log(`test:mutation: ${area} has no report yet (npm run test:mutation -- --area ${area}); not run`);
        continue;
      }
      const last = (JSON.parse(readFileSync(runFile(area), 'utf8')) as { commit: string }).commit;
      // Its commit not in this clone's history (a shallow clone): the area runs, incrementally.
      if (!git('cat-file', '-e', `${last}^{commit}`).ok || changedSince(last, [area]).length > 0) chosen.add(area);
    }
  } else if (arg === '--min-score') {
    minScore = Number(args[++i]);
    if (!Number.isFinite(minScore)) usage('--min-score needs a number');
  } else if (arg === '--budget-minutes') {
    budgetMinutes = Number(args[++i]);
    if (!(budgetMinutes > 0)) usage('--budget-minutes needs a positive number');
  } else if (arg === '--table') {
    // The table of docs/reliability.md "Mutation testing", from each area's run.json.
    console.log('| Area | Mutates | Tests | Score | Killed | Survived | No coverage | Date | Commit |\n|---|---|---|---|---|---|---|---|---|');
    for (const area of areas) {
      const config = configOf(area);
      const files = (list: string[]) => list.map((f) => `\`${f.replace(/^src\//, '')}\``).join(', ');
      if (!existsSync(runFile(area))) {
        console.log(`| ${area} | ${files(config.mutate)} | ${files(config.tap.testFiles)} | not run yet | | | | | |`);
        continue;
      }
      const r = JSON.parse(readFileSync(runFile(area), 'utf8')) as { percent: number; killed: number; survived: number; noCoverage: number; date: string; commit: string };
      console.log(`| ${area} | ${files(config.mutate)} | ${files(config.tap.testFiles)} | ${r.percent.toFixed(2)}% | ${r.killed} | ${r.survived} | ${r.noCoverage} | ${r.date.slice(0, 10)} | ${r.commit.slice(0, 7)} |`);
    }
    process.exit(0);
  } else if (arg === '--html') html = true;
  else if (arg === '--list') {
    for (const area of areas) {
      const config = configOf(area);
      console.log(`${area}: mutates ${config.mutate.map((entry) => (entry.includes('#') ? `${entry} (${resolveMutate(entry)})` : entry)).join(' ')}\n  tests ${config.tap.testFiles.join(' ')}`);
    }
    process.exit(0);
  } else usage(`unknown argument "${arg}"`);
}
if (chosen.size === 0) {
  if (args.some((a) => a === '--changed-since' || a === '--changed')) {
    console.log('test:mutation: no mutated or test file of any area changed');
    process.exit(0);
  }
  usage('name an area or --all');
}

const stryker = path.join(projectRoot, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
const results: Array<{ area: string; ok: boolean; score: string; seconds: number }> = [];
/** Areas that changed but were not run to the end within the budget: unproven, named at the end, not failed. */
const unproven: string[] = [];
const commit = git('rev-parse', 'HEAD').out.trim();
const runStarted = Date.now();
for (const area of chosen) {
  const leftMs = budgetMinutes * 60_000 - (Date.now() - runStarted);
  if (leftMs <= 0) {
    unproven.push(area);
    continue;
  }
  console.log(`\n== mutation testing: ${area}`);
  const started = Date.now();
  // The tap runner starts `node` from PATH: the project's Node, as npm scripts have it.
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` };
  // An area not at the bar yet passes while it does not fall below its last score.
  const previous = existsSync(runFile(area)) ? (JSON.parse(readFileSync(runFile(area), 'utf8')) as { percent: number }).percent : undefined;
  const mutate = configOf(area).mutate.map(resolveMutate);
  const strykerRun = [process.execPath, stryker, 'run', `stryker/${area}.conf.json`, '--mutate', mutate.join(','),
    ...(html ? ['--reporters', 'clear-text,progress,html'] : [])];
  // Within a budget, coreutils' timeout ends Stryker and its test processes together (its process group).
  const command = Number.isFinite(leftMs) ? ['timeout', '--kill-after=20', `${Math.ceil(leftMs / 1000)}`, ...strykerRun] : strykerRun;
  const run = spawnSync(command[0]!, command.slice(1), { cwd: projectRoot, stdio: 'inherit', env });
  if (Number.isFinite(leftMs) && (run.status === 124 || run.status === 137)) {
    console.log(`test:mutation: ${area} stopped at the end of the budget; no report written`);
    unproven.push(area);
    continue;
  }
  // Stryker writes the incremental file at the end of a run, every mutant's status in it.
  const report = path.join(projectRoot, 'reports', 'mutation', area, 'incremental.json');
  const score = run.status === 0 && existsSync(report) && statSync(report).mtimeMs >= started ? scoreOf(report) : undefined;
  const seconds = Math.round((Date.now() - started) / 1000);
  if (score) {
    const dirty = git('status', '--porcelain', '--', ...configOf(area).mutate.map(fileOf), ...configOf(area).tap.testFiles).out.trim() !== '';
    writeFileSync(runFile(area), `${JSON.stringify({ area, commit, dirty, date: new Date().toISOString(), seconds, ...score }, null, 2)}\n`);
  }
  results.push({ area, ok: score !== undefined && score.percent >= Math.min(minScore, previous ?? minScore), score: score ? score.text : 'no report', seconds });
}

console.log('\n== test:mutation');
for (const r of results) console.log(`${r.ok ? 'done' : 'FAIL'}  ${r.area}  ${r.score}  (${r.seconds} s; bar ${minScore}%)`);
if (unproven.length > 0) {
  console.log(`UNPROVEN  ${unproven.join(', ')}: changed since their last report, not run to the end within the ${budgetMinutes}-minute budget; `
    + `their scores in docs/reliability.md are of older code until \`npm run test:mutation -- --area <name>\` is run and its report committed`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
