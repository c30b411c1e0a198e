// Drives the web console in headless Debian chromium (puppeteer-core) against a running floe
// (tests/e2e/console_test.sh sets the environment). Every check prints "ok"/"FAIL"; the exit
// status is the number of failures (0: all passed).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import puppeteer from 'puppeteer-core';

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const env = process.env;
const base = env.CONSOLE_URL; // http://127.0.0.1:PORT/console/
const origin = new URL(base).origin;
let failures = 0;
const t0 = Date.now();
const check = (name, ok, detail = '') => {
  console.log(`${ok ? 'ok' : 'FAIL'}: ${name}${detail ? ` (${detail})` : ''} [${((Date.now() - t0) / 1000).toFixed(1)} s]`);
  if (!ok) failures++;
};
const api = async (path) => {
  const r = await fetch(origin + path, { headers: { Authorization: `Bearer ${env.TOKEN}` } });
  return r.json();
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A full load of a console URL (a goto that changes only the hash is a same-document navigation
// that resolves before the page re-renders). sessionStorage (the token) survives it.
async function open(hash) {
  await page.goto('about:blank');
  await page.goto(base + hash, { waitUntil: 'networkidle0' });
}
async function until(what, fn, ms = 15000) { // bounded polling
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

const browser = await puppeteer.launch({
  executablePath: env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 900 });
// Everything that went wrong in the page: console errors (CSP violations among them), uncaught
// exceptions, failed requests, HTTP errors (the login's expected 401s and /readyz's 503 aside).
let problems = [];
let expect401 = false;
page.on('console', (m) => { if (m.type() === 'error' && !(expect401 && /401/.test(m.text()))) problems.push(`console: ${m.text()}`); });
page.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
page.on('response', (r) => {
  const s = r.status();
  if (s >= 400 && !(s === 401 && expect401) && !(s === 503 && r.url().endsWith('/readyz'))) problems.push(`HTTP ${s}: ${r.url()}`);
});

try {
  // --- sign in: a wrong token is refused, the right one lets the console read ---
  expect401 = true;
  await page.goto(base, { waitUntil: 'networkidle0' });
  await until('the login dialog', () => page.$eval('#login', (d) => d.open));
  check('without a token the console asks for one', true);
  await page.type('#token', 'not-the-token');
  await page.click('#login-submit');
  await until('the refusal', () => page.$eval('#login-error', (e) => e.textContent.includes('refused')), 10000);
  check('a wrong token is refused', await page.$eval('#login', (d) => d.open));
  await page.type('#token', env.TOKEN);
  await page.click('#login-submit');
  await until('the overview', () => page.$eval('main h1', (e) => e.textContent === 'Overview'));
  check('the right token opens the console', !(await page.$eval('#login', (d) => d.open)));
  const stored = await page.evaluate(() => [sessionStorage.getItem('floe.token'), document.cookie]);
  check('the token is in sessionStorage, no cookie', stored[0] === env.TOKEN && stored[1] === '');
  expect401 = false;
  problems = [];

  // --- every page, light and dark: renders, no errors, axe, screenshots ---
  const pages = [
    ['overview', '#/overview', 'Overview'],
    ['topics', '#/topics', 'Topics'],
    ['topic', `#/topic/${env.TOPIC}`, `Topic ${env.TOPIC}`],
    ['messages', `#/messages/${env.TOPIC}`, `Messages of ${env.TOPIC}`],
    ['groups', '#/groups', 'Consumer groups'],
    ['lake', '#/lake', 'Lake'],
    ['lake-table', `#/lake/${env.TOPIC}`, 'Table '],
    ['ingest', '#/ingest', 'Ingest'],
    ['typed-table', `#/lake/${env.TYPED}`, 'Table '],
    ['cluster', '#/cluster', 'Cluster'],
    ['security', '#/security', 'Security'],
  ];
  for (const scheme of ['light', 'dark']) {
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
    for (const [name, hash, title] of pages) {
      problems = [];
      await open(hash);
      await until(`${name} to render`, () => page.$eval('main h1', (e, t) => e.textContent.startsWith(t), title));
      await sleep(150);
      check(`${name} (${scheme}) renders with no console error or failed request`, problems.length === 0, problems.join('; '));
      await page.evaluate(axeSource);
      const res = await page.evaluate(async () => {
        const r = await window.axe.run(document, { resultTypes: ['violations'] });
        return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.length} node(s) ${v.nodes[0]?.target}`);
      });
      check(`${name} (${scheme}) axe: no serious or critical violation`, res.length === 0, res.join('; '));
      await page.screenshot({ path: `${env.SCREENSHOTS}/${name}-${scheme}.png`, fullPage: true });
    }
    // Chart labels follow the theme: in dark mode an SVG label is light on the dark page.
    await open('#/overview');
    await until('a sparkline', () => page.$('svg text'));
    const lum = await page.$eval('svg text', (t) => {
      const [r, g, b] = getComputedStyle(t).fill.match(/\d+/g).map(Number);
      return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    });
    check(`chart labels readable in ${scheme} mode (luminance ${lum.toFixed(2)})`, scheme === 'dark' ? lum > 0.6 : lum < 0.4);
  }
  await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);

  // --- the overview lists this broker ---
  await open('#/overview');
  const brokerRows = await until('the brokers table', () => page.$$eval('main table', (ts) => {
    const t = ts.find((x) => x.caption && x.caption.textContent.startsWith('Brokers'));
    return t ? [...t.tBodies[0].rows].map((r) => r.cells[1].textContent) : null;
  }));
  check('the overview lists this broker', brokerRows.length === 1 && brokerRows[0].endsWith(`:${env.BROKER.split(':')[1]}`), JSON.stringify(brokerRows));

  // --- cluster and security: read-only tables of what the endpoints answer ---
  await open('#/cluster');
  const kind = await until('the cluster page', () => page.$eval('#cluster-kind', (e) => e.textContent));
  check('the cluster page says single broker on the embedded tier', kind.startsWith('Single broker'), kind);
  const leaseRows = await page.$$eval('main table', (ts) => ts.filter((t) => t.caption.textContent.includes('lease')).flatMap((t) => [...t.tBodies[0].rows].map((r) => r.cells[0].textContent)));
  // This floe runs without its storage worker (the first one released the lease file at its stop).
  const clusterState = await api('/v1/cluster');
  const leaseText = await page.$eval('main', (m) => m.textContent);
  check('the cluster page shows the storage worker lease as /v1/cluster does', clusterState.storage_worker_lease
    ? JSON.stringify(leaseRows) === JSON.stringify([clusterState.storage_worker_lease.holder])
    : leaseRows.length === 0 && leaseText.includes('none (the storage worker is off'), `${JSON.stringify(leaseRows)} vs ${JSON.stringify(clusterState.storage_worker_lease)}`);
  await open('#/security');
  await until('the security page', () => page.$('#acl-mode'));
  const sec = await page.$$eval('main table', (ts) => ts.map((t) => [t.caption.textContent, [...t.tBodies[0].rows].map((r) => [...r.cells].map((c) => c.textContent))]));
  const users = await api('/v1/security/users');
  const acls = await api('/v1/security/acls');
  check('the security page lists the users and their mechanisms', JSON.stringify(sec[0][1]) === JSON.stringify(users.users.map((u) => [u.name, u.mechanisms.join(', ')])), JSON.stringify(sec[0]));
  check('the security page lists the ACLs', JSON.stringify(sec[1][1]) === JSON.stringify(acls.acls.map((a) => [a.principal, a.permission, a.operation, `${a.resource_type}:${a.pattern}:${a.resource_name}`, a.host])), JSON.stringify(sec[1]));
  check('no secret on the security page', !/salt|stored|server.?key|iteration/i.test(await page.$eval('main', (m) => m.textContent)));

  // --- the typed table: schema history and typed columns ---
  const typed = (await api('/v1/topics')).topics.find((x) => x.name === env.TYPED);
  const meta = await api(`/iceberg/v1/namespaces/${typed.table.namespace}/tables/${typed.table.name}`);
  await open(`#/lake/${env.TYPED}`);
  const hist = await until('the schema history', () => page.$$eval('#schema-history tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))));
  const ids = meta.metadata.schemas.map((x) => x['schema-id']).sort((a, b) => a - b);
  check('every schema of the metadata is listed, the current one marked', JSON.stringify(hist.map((r) => [Number(r[0]), r[1]])) ===
    JSON.stringify(ids.map((i) => [i, i === meta.metadata['current-schema-id'] ? 'current' : ''])), JSON.stringify(hist));
  // The last two versions: v1's record became the data struct, v2 added data.channel.
  const [v1, v2] = hist.slice(-2);
  check('v1 added the data struct with id and name', v1[3] === 'data (struct<2 fields>), data.id (long), data.name (string)' && v1[4] === '—', JSON.stringify(v1));
  check('v2 (current) added data.channel and removed nothing', v2[1] === 'current' && v2[3] === 'data.channel (string)' && v2[4] === '—', JSON.stringify(v2));
  const cols = await page.$$eval('#typed-columns table tbody tr', (trs) => trs.map((tr) => [tr.cells[1].textContent, tr.cells[2].textContent]));
  check('typed columns with their Iceberg types', JSON.stringify(cols) === JSON.stringify([['data.id', 'long'], ['data.name', 'string'], ['data.channel', 'string']]), JSON.stringify(cols));

  // --- the produce rate per topic: the Topics column and the topic page show the ring's series ---
  await open('#/topics');
  const cell = await until('the rate column', () => page.$eval(`.rate-value[data-topic="${env.TOPIC}"]`, (e) => e.textContent));
  const series = await api(`/v1/metrics/series?fn=rate&name=${encodeURIComponent(`floe_kafka_records_in_total{topic="${env.TOPIC}"}`)}`);
  const pts = series.series[0].points;
  const wantRate = pts.length ? Number(pts[pts.length - 1][1]).toLocaleString('en-US', { maximumFractionDigits: 1 }) : '—';
  check('the Topics list shows the topic\'s produce rate', series.series[0].known && cell === wantRate, `${cell} vs ${wantRate}`);
  check('a sparkline per topic in the list', (await page.$$('td svg.mini')).length >= 2);
  await open(`#/topic/${env.TOPIC}`);
  check('the topic page charts its produce rate with a data table', await until('the rate chart', () => page.$eval('#produce-rate', (e) => !!e.querySelector('svg') && !!e.querySelector('details table'))));

  // --- the timeline matches /v1/topics ---
  const topics = await api('/v1/topics');
  const t = topics.topics.find((x) => x.name === env.TOPIC);
  await open(`#/topic/${env.TOPIC}`);
  await until('the timeline table', () => page.$('#timeline-table tbody tr'));
  const rows = await page.$$eval('#timeline-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const want = t.partitions.map((p) => {
    const lakeStart = p.remote_start ?? p.local_start;
    return [p.partition, p.remote_start ?? '—', p.local_start, p.offloaded_up_to, p.log_end,
      Math.max(0, Math.min(p.local_start, p.offloaded_up_to) - lakeStart), Math.max(0, p.offloaded_up_to - p.local_start), p.log_end - Math.max(p.local_start, p.offloaded_up_to)].map(String);
  });
  check('the timeline matches /v1/topics', JSON.stringify(rows) === JSON.stringify(want), `${JSON.stringify(rows)} vs ${JSON.stringify(want)}`);
  check('lake-only and local-only segments drawn', (await page.$$('svg .seg-lake')).length > 0 && (await page.$$('svg .seg-local')).length > 0);
  check('snapshots drawn as marks', (await page.$$('svg .mark')).length > 0);

  // --- a key search the lake alone can answer (the deep link holds the query) ---
  problems = [];
  await open(`#/messages/${env.TOPIC}?key=key-77`);
  const hit = await until('the search result', () => page.$$eval('#records tr', (trs) => trs.map((tr) => [tr.dataset.offset, tr.children[3].textContent])).then((r) => (r.length ? r : null)));
  check('key search finds the record only Iceberg holds', JSON.stringify(hit) === JSON.stringify([['77', 'remote']]), JSON.stringify(hit));
  check('the key filter is restored from the URL', (await page.$eval('#f-key', (e) => e.value)) === 'key-77');
  // a JSON field filter typed in the form, written back to the URL
  await open(`#/messages/${env.TOPIC}`);
  await until('the first page', () => page.$eval('#search-status', (e) => e.textContent.includes('records shown')));
  await page.type('#f-json', '/user/id');
  await page.select('#f-json-op', 'eq');
  await page.type('#f-json-value', '1234');
  await page.click('#search');
  await until('the JSON search', () => page.$$eval('#records tr', (trs) => trs.length === 1 && trs[0].dataset.offset === '1234'));
  check('JSON pointer search from the form', true);
  check('the form state is in the URL', (await page.evaluate(() => location.hash)).includes('json=%2Fuser%2Fid'));
  check('messages: no console error or failed request', problems.length === 0, problems.join('; '));

  // --- live tail: a record produced after the page opened shows up ---
  await open(`#/messages/${env.TOPIC}?limit=5`);
  await until('the first page', () => page.$$eval('#records tr', (trs) => trs.length === 5));
  const searches = [];
  const onRequest = (r) => { if (r.url().includes('/search?')) searches.push(r.url()); };
  page.on('request', onRequest);
  await page.click('#tail');
  await sleep(1500);
  const marker = `m${Date.now()}`;
  execFileSync('kcat', ['-P', '-b', env.BROKER, '-t', env.TOPIC, '-K:'], { input: `tail-key:{"tail":"${marker}"}\n` });
  const tailed = await until('the tailed record', () => page.$$eval('#records tr td.value', (tds, m) => tds.some((td) => td.textContent.includes(m)), marker), 20000).catch(() => false);
  check('the live tail shows a record produced after the page opened', tailed === true);
  check('the tail is one event stream, not polling', searches.length === 1 && searches[0].includes('follow=newest'), searches.join(' '));
  // A hidden tab pauses its tail (a browser has 6 connections per origin) and, shown again,
  // goes on from its cursor: a record produced while it was hidden shows up.
  const before = searches.length;
  const setHidden = (v) => page.evaluate((x) => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => x });
    document.dispatchEvent(new Event('visibilitychange'));
  }, v);
  await setHidden(true);
  const paused = await until('the pause', () => page.$eval('#search-status', (e) => e.textContent.includes('paused')), 5000).catch(() => false);
  const hiddenMarker = `h${Date.now()}`;
  execFileSync('kcat', ['-P', '-b', env.BROKER, '-t', env.TOPIC, '-K:'], { input: `tail-key:{"tail":"${hiddenMarker}"}\n` });
  await setHidden(false);
  const resumed = await until('the record produced while hidden', () => page.$$eval('#records tr td.value', (tds, m) => tds.some((td) => td.textContent.includes(m)), hiddenMarker), 20000).catch(() => false);
  check('a hidden tab pauses its tail and resumes from its cursor when shown', paused === true && resumed === true &&
    searches.length === before + 1 && searches[before].includes('follow=newest'), `${paused} ${resumed} ${searches.slice(before).join(' ')}`);
  page.off('request', onRequest);
  await page.click('#tail');

  // --- the group's lag against the Kafka client and kcat ---
  await open('#/groups');
  const g = await until('the group', () => page.$eval(`section[data-group="${env.GROUP}"]`, (s) => ({
    records: s.querySelector('.lag-records')?.textContent, seconds: s.querySelector('.lag-seconds')?.textContent })));
  check('the group has a lag chart with its table', await page.$eval(`section[data-group="${env.GROUP}"]`, (s) => !!s.querySelector('figure.spark svg') && !!s.querySelector('figure.spark table')));
  const now = Date.now();
  // The tail checks added two records after COMMITTED/HIGH were measured.
  const wantRecords = Number(env.HIGH) - Number(env.COMMITTED) + 2;
  check('group lag in records = high watermark - committed', Number(g.records) === wantRecords, `${g.records} vs ${wantRecords}`);
  const wantSeconds = (now - Number(env.COMMITTED_TS)) / 1000;
  check('group lag in seconds = now - the committed record\'s timestamp (kcat)', Math.abs(Number(g.seconds) - wantSeconds) < 12, `${g.seconds} vs ${wantSeconds.toFixed(1)}`);

  // --- the theme toggle, the UTC/local toggle, keyboard navigation ---
  await open('#/overview');
  await page.click('#theme'); // system -> light
  await page.click('#theme'); // light -> dark
  const theme = await page.evaluate(() => [document.documentElement.dataset.theme, getComputedStyle(document.body).backgroundColor]);
  check('the theme toggle switches to dark', theme[0] === 'dark' && theme[1] === 'rgb(13, 17, 23)', JSON.stringify(theme));
  await page.click('#theme'); // dark -> system
  await page.click('#tz');
  check('the time zone toggle', (await page.$eval('#tz', (b) => [b.textContent, b.getAttribute('aria-pressed')].join())) === 'Local time,true');
  await page.click('#tz');
  await page.keyboard.press('g');
  await page.keyboard.press('t');
  await until('g t to open the topics', () => page.$eval('main h1', (e) => e.textContent === 'Topics'));
  await page.keyboard.press('/');
  check('/ focuses the filter', (await page.evaluate(() => document.activeElement.id)) === 'topic-filter');

  // --- read-only: no request but GET was made ---
  const methods = new Set();
  page.on('request', (r) => methods.add(r.method()));
  for (const [, hash] of pages) await open(hash);
  check('the console only GETs', [...methods].every((m) => m === 'GET'), [...methods].join(','));
} catch (e) {
  check(`no exception: ${e.message}`, false);
  await page.screenshot({ path: `${env.SCREENSHOTS}/failure.png`, fullPage: true }).catch(() => {});
} finally {
  await browser.close();
}
console.log(`console_browser: ${failures} failed`);
process.exit(failures ? 1 : 0);
